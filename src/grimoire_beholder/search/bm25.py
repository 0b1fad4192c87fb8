"""FTS5's ``bm25()`` of one segment's rows, from the postings of the query's terms.

:func:`segment_top` returns the rows that can be in the segment's best ``limit`` — every
row holding a query term whose score reaches the ``limit``-th best — with their scores,
the same floats FTS5's formula gives (``search/persisted.py`` merges the segments).

Cost: a common word ("the", "of") is in nearly every row, and scoring every row holding it
is a pass over the whole segment per word, for a contribution its low idf makes tiny. So
the rows holding the rarer terms are scored first, the common terms' contributions are
added for those rows only (looked up through a row-to-posting map, not a search), and the
result is kept when it is provably the same: a row holding only common terms scores below
the sum of their largest possible contributions (``idf · (k1 + 1)``), so if that sum is
below the ``limit``-th best score found, no such row can be among the best (MaxScore
pruning). Each row's terms are added in the query's order, as in the full pass, so the
scores are the same floats. When the bound does not hold, every row is scored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# bm25() constants of FTS5 (fts5_aux.c).
K1, B = 1.2, 0.75
COMMON_SHARE = 8  # a term in over 1/COMMON_SHARE of a segment's rows is pruned if it can be
_MARGIN = 1e-9  # relative: float rounding of the bound


Posting = tuple[np.ndarray, np.ndarray]  # (rows ascending, tf)


def segment_top(lengths: np.ndarray, size: int, allowed: np.ndarray,
                posts: Sequence[Posting], idf: Sequence[float], avgdl: float,
                limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of the allowed rows holding a query term that can be in the best
    ``limit`` (all of them, ties included, when there are more), in row order."""
    if size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    common = [j for j, (rows, _) in enumerate(posts) if rows.size * COMMON_SHARE > size]
    if common and len(common) < len(posts):
        pruned = _pruned(lengths, allowed, posts, idf, avgdl, limit, common)
        if pruned is not None:
            return pruned
    return _every_row(lengths, size, allowed, posts, idf, avgdl, limit)


def _contribution(weight: float, freq: np.ndarray, length: np.ndarray, avgdl: float
                  ) -> np.ndarray:
    norm = K1 * ((1.0 - B) + B * length.astype(np.float64) / avgdl)
    return np.asarray(weight * (freq * (K1 + 1.0)) / (freq + norm))


def _every_row(lengths: np.ndarray, size: int, allowed: np.ndarray,
               posts: Sequence[Posting], idf: Sequence[float], avgdl: float,
               limit: int) -> tuple[np.ndarray, np.ndarray]:
    scores = np.zeros(size, dtype=np.float64)
    for (rows, tf), weight in zip(posts, idf, strict=True):
        if rows.size == 0:
            continue
        rows = np.asarray(rows)
        keep = allowed[rows]
        rows, freq = rows[keep], np.asarray(tf[keep], dtype=np.float64)
        scores[rows] += _contribution(weight, freq, lengths[rows], avgdl)
    hit = np.flatnonzero(scores > 0.0)
    if hit.size > limit:
        kth = np.partition(scores[hit], hit.size - limit)[hit.size - limit]
        hit = hit[scores[hit] >= kth]
    return hit, scores[hit]


def _pruned(lengths: np.ndarray, allowed: np.ndarray, posts: Sequence[Posting],
            idf: Sequence[float], avgdl: float, limit: int, common: list[int]
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows holding a non-common term, fully scored, if that provably suffices."""
    marked = np.zeros(len(allowed), dtype=bool)  # a mask, not np.unique: no sort or hash
    for j in range(len(posts)):
        if j not in common:
            marked[np.asarray(posts[j][0])] = True
    candidates = np.flatnonzero(marked & allowed)
    if candidates.size <= limit:
        return None
    scores = np.zeros(candidates.size, dtype=np.float64)
    length = lengths[candidates]
    where = np.full(len(allowed), -1, dtype=np.int32)  # row → its place in a posting list
    for (rows, tf), weight in zip(posts, idf, strict=True):  # the query's order, as FTS5
        if rows.size == 0:
            continue
        rows = np.asarray(rows)
        where[rows] = np.arange(rows.size, dtype=np.int32)
        at = where[candidates]
        where[rows] = -1
        held = np.flatnonzero(at >= 0)
        freq = np.asarray(tf[at[held]], dtype=np.float64)
        scores[held] += _contribution(weight, freq, length[held], avgdl)
    positive = np.flatnonzero(scores > 0.0)
    if positive.size <= limit:
        return None
    kth = np.partition(scores[positive], positive.size - limit)[positive.size - limit]
    ceiling = sum(idf[j] * (K1 + 1.0) for j in common)
    if not ceiling * (1.0 + _MARGIN) < kth:
        return None  # a row of common terms only might still reach the best
    keep = positive[scores[positive] >= kth]
    return candidates[keep], scores[keep]
