"""The optional reranking stage: a cross-encoder (or an LLM grader) reorders fused hits.

Why after fusion and only the head: a reranker reads every (question, passage) pair, which
costs milliseconds (ONNX) to seconds (Ollama) per pair, so it sees only the best
``rerank_candidates`` fused hits; what it returns is reordered by its score
(ties keep the fused order) and cut to ``top_k``. Candidates beyond the head are never
promoted: fusion already decided they were unlikely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.protocols import Reranker
from grimoire_beholder.search.fusion import Fused
from grimoire_beholder.store.hit_queries import HitRow


def depth(top_k: int, candidates: int, reranker: Reranker | None) -> int:
    """How many fused candidates to fetch: the rerank head, or just ``top_k``."""
    return max(top_k, candidates) if reranker is not None else top_k


def passage(row: HitRow) -> str:
    """What the reranker reads for a chunk: its text (contexts are for the retrievers)."""
    return row.text


def apply(reranker: Reranker, query: str, kept: Sequence[Fused], rows: Mapping[int, HitRow],
          top_k: int) -> list[tuple[Fused, float]]:
    """``kept`` reordered by the reranker's score, best first, cut to ``top_k``.

    Every candidate in ``kept`` must have a row. A reranker that returns the wrong number
    of scores is a ModelError (a silently misaligned ranking would be worse).
    """
    if not kept:
        return []
    scores = reranker.score(query, [passage(rows[f.chunk_id]) for f in kept])
    if len(scores) != len(kept):
        raise ModelError(f"the reranker returned {len(scores)} scores for {len(kept)} passages")
    order = sorted(range(len(kept)), key=lambda i: (-scores[i], i))
    return [(kept[i], float(scores[i])) for i in order[:top_k]]
