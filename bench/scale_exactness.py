"""Exactness of the persisted index for ``bench/scale.py``: vector recall@10 against the exact
float32 scan, and keyword top-10 agreement with FTS5's own ``bm25()``.

Recall counts a hit when its exact cosine reaches the scan's 10th best (within ``TIE``): among
identical vectors (a text ingested twice) either copy is as good an answer, and float rounding
decides which one a product ranks first; ``recall_all_strict`` counts only the scan's own ten.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

TIE = 1e-6  # cosines this close are a tie (float32 rounding of the same vector's product)


def exactness(lib: Any, queries: list[str], book: str) -> dict[str, float]:
    """Vector recall@10 vs the exact scan, and keyword top-10 agreement with FTS5's bm25."""
    from grimoire_beholder.search import keyword
    from grimoire_beholder.search.vector import VectorIndex
    from grimoire_beholder.store import hit_queries

    engine = lib._search_engine()
    index = engine.vector_index
    if not getattr(index, "persisted", False):
        return {}
    exact = VectorIndex()
    exact.refresh(lib.conn)
    book_ids = hit_queries.resolve_books(lib.conn, book)
    recall: dict[str, list[float]] = {"all": [], "book": [], "all_strict": []}
    proven: list[bool] = []
    same = 0
    scans = []
    for q in queries:
        vec = lib.embedder.embed_query(q)
        started = time.perf_counter()
        exact.search(vec, 50)
        scans.append((time.perf_counter() - started) * 1000)
        for key, allowed in (("all", None), ("book", book_ids)):
            got = [c for c, _ in index.search(vec, 10, allowed)]
            if key == "all":
                proven.append(bool(getattr(index._persisted, "last_proven", True)))
            want = exact.search(vec, 10, allowed)
            if key == "all":
                found = len(set(got) & {c for c, _ in want})
                recall["all_strict"].append(found / max(len(want), 1))
            scores = [s for _, s in exact.search(vec, len(got), allowed, got)] if got else []
            floor = want[-1][1] - TIE if want else 0.0
            recall[key].append(sum(s >= floor for s in scores) / max(len(want), 1))
        expression = keyword.build_query(q).word
        fts5 = hit_queries.word_match(lib.conn, expression, 10) if expression else []
        mine = index.keyword(lib.conn, expression, 10, None) if expression else []
        same += _same_top(mine or [], fts5)
    return {"recall_all": statistics.mean(recall["all"]),
            "recall_all_strict": statistics.mean(recall["all_strict"]),
            "recall_book": statistics.mean(recall["book"]),
            "exact_scan_ms": statistics.median(scans[5:] or scans),
            "proven_exact": statistics.mean(proven) if proven else float("nan"),
            "keyword_same": same / len(queries), "queries": len(queries)}


def _same_top(mine: list[tuple[int, float]], fts5: list[tuple[int, float]]) -> bool:
    """The same ranking, tie order aside: wherever the chunk differs, the scores are equal
    (to 1e-9), i.e. chunks of equal score may come in either order."""
    return len(mine) == len(fts5) and all(
        a == b or abs(sa - sb) <= 1e-9 * max(abs(sb), 1.0)
        for (a, sa), (b, sb) in zip(mine, fts5, strict=True))
