"""Lists of a big segment's vectors (spherical k-means), so a search reads a few of them.

A segment of at least ``PARTITION_MIN_ROWS`` rows is written with its rows grouped by list:
rows ``list_offsets[j]:list_offsets[j + 1]`` are the vectors nearest centroid ``j``, and
``radii[j]`` bounds ``||x - centroid_j||`` over them. A search (``search/persisted.py``)
reads the lists whose centroids are nearest the query, and then every further list whose
bound ``q·c_j + radii[j]`` (Cauchy-Schwarz, ``||q|| = 1``) still reaches the ``k``-th best
exact score found, up to a budget: when that budget is not exhausted the result is provably
the exact top ``k``; otherwise it is approximate (its recall is measured by
``bench/scale.py`` and ``bench/ann_choice.py``).

Plain numpy (a few BLAS matrix products per iteration): the lists are trained once per
segment write on a sample, then every row is assigned to its nearest centroid.
"""

from __future__ import annotations

import math

import numpy as np

PARTITION_MIN_ROWS = 20_000  # smaller segments are scanned whole (exact, see persisted.py)
ROWS_PER_LIST = 64  # lists of about this many rows
PROBE_SHARE = 0.05  # the nearest 5 % of lists are always read…
MIN_PROBE = 128  # …and at least this many (a query's neighbours span about as many lists
# whatever the segment's size: 16 of a 20,000-row segment's lists found 0.95 of the top 10)
_SAMPLE_PER_LIST = 16  # k-means trains on about this many rows per list
_ITERATIONS = 6
_BLOCK = 4_096  # rows × lists float32 scores at a time (64 MB at 3,906 lists)
RADIUS_SLACK = 1e-5  # float32 rounding of the radii and the centroid scores, with room


def list_count(rows: int) -> int:
    """How many lists a segment of ``rows`` rows gets (0: scanned whole)."""
    return 0 if rows < PARTITION_MIN_ROWS else max(1, rows // ROWS_PER_LIST)


def probe_count(lists: int) -> int:
    """How many of the nearest lists a search always reads."""
    return min(lists, max(MIN_PROBE, math.ceil(PROBE_SHARE * lists)))


def _nearest(vectors: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the best centroid, its dot product) per row, block by block."""
    best = np.empty(len(vectors), dtype=np.int64)
    score = np.empty(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), _BLOCK):
        dots = np.asarray(vectors[start:start + _BLOCK], dtype=np.float32) @ centroids.T
        best[start:start + _BLOCK] = np.argmax(dots, axis=1)
        score[start:start + _BLOCK] = dots[np.arange(len(dots)), best[start:start + _BLOCK]]
    return best, score


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)


def partition(vectors: np.ndarray, lists: int, seed: int = 0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row order grouping rows by list, unit centroids, list offsets, list radii) of unit
    ``vectors``; deterministic for a given ``seed``. Rows whose vector is not finite go to
    list 0 (their scores are never finite, so they are never hits)."""
    rng = np.random.default_rng(seed)
    finite = np.flatnonzero(np.isfinite(vectors).all(axis=1))
    sample_size = min(len(finite), _SAMPLE_PER_LIST * lists)
    sample = np.asarray(vectors[np.sort(rng.choice(finite, sample_size, replace=False))],
                        dtype=np.float32)
    centroids = sample[rng.choice(len(sample), lists, replace=False)].copy()
    for _ in range(_ITERATIONS):
        assigned, _ = _nearest(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assigned, sample)
        empty = np.flatnonzero(np.bincount(assigned, minlength=lists) == 0)
        sums[empty] = sample[rng.choice(len(sample), len(empty))]  # reseed empty lists
        centroids = _unit(sums)
    safe = np.nan_to_num(np.asarray(vectors, dtype=np.float32), nan=0.0, posinf=0.0,
                         neginf=0.0)
    assigned, score = _nearest(safe, centroids)
    order = np.argsort(assigned, kind="stable")
    counts = np.bincount(assigned, minlength=lists)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    # ||x - c||² = ||x||² + ||c||² - 2 x·c, the largest per list
    norms = np.einsum("ij,ij->i", safe, safe)
    c_norms = np.einsum("ij,ij->i", centroids, centroids)
    squared = np.maximum(norms + c_norms[assigned] - 2.0 * score, 0.0)
    radii = np.zeros(lists, dtype=np.float32)
    np.maximum.at(radii, assigned, np.sqrt(squared).astype(np.float32))
    radii += np.float32(RADIUS_SLACK)
    return order, centroids, offsets, radii
