"""One search's final order: the fused candidates re-ranked, and the passages of the best.

:func:`choose` takes the fused list (``candidate_arms.fuse``) and gives back the candidates
in their final order, the passages that will be shown and the facts read on the way. It
reads the library (candidate facts, passages) but never writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from grimoire_beholder.search import fusion, passages, ranking
from grimoire_beholder.store import hit_queries, records, text_spans

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store


def choose(conn: Store, query: str, fused: list[fusion.Fused], allowed: list[int] | None,
           lifts: dict[int, float], lap: Callable[[str], None], depth: int,
           heads: dict[int, hit_queries.ChunkHead], best_vector: int | None = None
           ) -> tuple[list[fusion.Fused], dict[int, passages.Passage],
                      dict[int, records.CandidateFacts]]:
    """The fused list re-ranked (``ranking.adjust`` with the printed index's ``lifts``, then
    ``ranking.seat`` of the candidate ``best_vector`` — the vector arm's best in hybrid
    search), the passages of its best ``depth`` candidates, and the facts read (every chosen
    candidate's); the chosen chunks' heads, read with their passages, go to ``heads``.
    ``lap`` is told when each stage (ranking, fusion, passages) ends.

    A chunk next to a better hit in its section stays a hit of its own: the answer is
    often just past the better one's boundary. Only a hit whose passage would mostly
    repeat a better one's text is dropped (``passages.select``).

    The candidates' facts (role, text, span: ``text_spans.candidate_facts``) are read
    only as far down the fused list as the answer can reach: no candidate past the
    first ``read`` can score above ``ranking.ceiling`` of them, so when ``depth``
    passages come from candidates re-ranked above it, the rest cannot change them and
    is never read — the answer of reading them all, at a third of the rows.
    """
    ids = [f.chunk_id for f in fused]
    facts: dict[int, records.CandidateFacts] = {}
    seated = next((f for f in fused if f.chunk_id == best_vector), None)
    near: dict[int, float] | None = None
    read = 0
    while True:
        upto = min(len(ids), max(ranking.PROXIMITY_DEPTH, 3 * depth, 2 * read))
        facts.update(text_spans.candidate_facts(conn, ids[read:upto]))
        read = upto
        if seated is not None and seated.chunk_id not in facts:  # past the batch read
            facts.update(text_spans.candidate_facts(conn, [seated.chunk_id]))
        if near is None:
            near = ranking.proximity_head(query, fused, facts)
        adjusted = ranking.adjust(conn, query, fused[:read], allowed, facts, lifts, near)
        if read < len(ids):  # those certainly above every candidate not read
            bound = ranking.ceiling(fused[read:], lifts)
            adjusted = adjusted[:next((i for i, f in enumerate(adjusted)
                                       if not f.score > bound), len(adjusted))]
        lap("ranking")
        if seated is not None and (len(adjusted) >= ranking.SEAT - 1 or read == len(ids)):
            # once the places above the seat are certain: re-scored as ``adjust`` does
            entry = ranking.adjust(conn, query, [seated], allowed, facts, lifts, near)[0]
            adjusted = ranking.seat(adjusted, entry, facts)
        kept = [f for f in adjusted if f.chunk_id in facts]  # not deleted meanwhile
        lap("fusion")
        chosen = passages.select(conn, [f.chunk_id for f in kept], depth,
                                 spans={c: f.span for c, f in facts.items()}, heads=heads)
        lap("passages")
        if len(chosen) >= depth or read == len(ids):
            return kept, chosen, facts
