"""The persisted index's vector arm: an int8 shortlist, re-scored exactly, with a proven
bound on what the shortlist can have missed.

:func:`bounded_top` takes segments (``search/segment_files.py``) with the rows each may
return and a unit query vector, and gives back the rows that can be in the exact top ``k``,
scored exactly from the float32 vectors, and whether that is proven (it is, unless a
segment read list by list (``index_partition``) left lists unread that its bound still
reaches). :func:`exact_scores` scores chosen rows exactly. Nothing here reads the library.
"""

from __future__ import annotations

import numpy as np

from grimoire_beholder.search import index_partition, segment_files

_MIN_RESCORE = 256
_SLACK = 1e-5  # float32 rounding of estimates and exact scores, with room to spare


def exact_scores(segment: segment_files.Segment, rows: np.ndarray, query: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(chunk id, cosine) of ``rows`` of ``segment``, scored from its float32 vectors; a
    row whose vector is not finite matches nothing."""
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    scores = np.asarray(segment.vectors_of(rows) @ query, dtype=np.float64)
    finite = np.isfinite(scores)  # a NaN vector (damaged, or so embedded) matches nothing
    return np.asarray(segment.arrays["chunk_ids"][rows])[finite], scores[finite]


def bounded_top(parts: list[tuple[segment_files.Segment, np.ndarray]], query: np.ndarray,
                k: int, known: np.ndarray) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
    """The rows of ``parts`` (segment, allowed rows) that can be in the exact top ``k``,
    scored exactly, and whether that is proven (else approximate); ``known`` holds exact
    scores of rows elsewhere (the delta).

    The int8 estimate ``e = q8·c / (scale_q · scale)`` of a row's cosine errs by at most
    ``b = ||q8 / scale_q|| · R + ||q - q8 / scale_q||``, ``R`` being the segment's largest
    ``||x - c / scale||`` (Cauchy-Schwarz on ``q·x - e = q̂·(x - x̂) + (q - q̂)·x`` with
    ``||x|| = 1``). The best ``max(4k, 256)`` estimates of each segment are scored exactly;
    their ``k``-th best score ``t`` (with ``known``) is at most the true ``k``-th best, so a
    row whose ``e + b < t`` cannot be in the top ``k`` and every other row is scored too.
    Near-copies (a book in two formats, boilerplate) all fall within ``b`` of each other
    and are all scored: exact, at the price of those extra rows.

    A segment whose rows are grouped in lists (``index_partition``) is read list by list:
    the nearest ``probe_count`` lists, then every list whose bound ``q·c_j + r_j`` reaches
    ``t``, nearest first, up to as many again. Rows of a list left unread cannot be in the
    top ``k`` unless its bound reaches ``t``: the result is proven exact when no such list
    is left, approximate otherwise (a filter that keeps under half a segment's rows reads
    just those rows: exact).
    """
    q8, q_scale = segment_files.quantize(query[None, :])
    q_hat = q8[0].astype(np.float64) / q_scale
    q_error = float(np.linalg.norm(np.asarray(query, dtype=np.float64) - q_hat))
    q_norm = float(np.linalg.norm(q_hat))
    probes = [Probe(segment, mask, query, q8, q_scale) for segment, mask in parts
              if mask.any()]
    found = [probe.first(k) for probe in probes]
    scores = np.concatenate([known, *(f[1] for f in found)])
    threshold = (float(np.partition(scores, scores.size - k)[scores.size - k])
                 if scores.size >= k else -np.inf)
    for probe in probes:
        bound = q_norm * probe.segment.residual_bound() + q_error + _SLACK
        found.append(probe.within(threshold - bound))
    scores = np.concatenate([known, *(f[1] for f in found)])
    if scores.size >= k:
        threshold = max(threshold, float(np.partition(scores, scores.size - k)
                                         [scores.size - k]))
    proven = True
    for probe in probes:
        bound = q_norm * probe.segment.residual_bound() + q_error + _SLACK
        more, complete = probe.more_lists(threshold, bound)
        found.append(more)
        proven = proven and complete
    return found, proven


def _dots(query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows @ query`` (float32 or int8 alike) on this thread: SIMD, and no BLAS thread
    pool to wake (under load its spinning threads cost more than the product)."""
    import simsimd

    if len(rows) == 0:
        return np.zeros(0, np.float32)
    return np.asarray(simsimd.cdist(query[None, :], rows, metric="dot", out_dtype="float32"),
                      dtype=np.float32).reshape(-1)


class Probe:
    """One segment's int8 estimates of the rows read so far, for :func:`bounded_top`."""

    def __init__(self, segment: segment_files.Segment, mask: np.ndarray, query: np.ndarray,
                 q8: np.ndarray, q_scale: float) -> None:
        self.segment, self.mask, self.q8, self.query = segment, mask, q8, query
        self.divisor = np.float32(q_scale * segment.scale)
        self.left = np.zeros(0, dtype=np.int64)  # unread lists, nearest first
        self.upper = np.zeros(0, dtype=np.float32)  # their bounds q·c_j + r_j
        lists = segment.lists
        if lists == 0:  # scanned whole
            self.rows = np.arange(segment.size)
            self.estimate = self._estimate(segment.arrays["codes"])
            self.estimate[~mask] = -np.inf
            return
        allowed = int(mask.sum())
        if allowed * 2 <= segment.size:  # a selective filter: just its rows
            self.rows = np.flatnonzero(mask)
            self.estimate = self._estimate(segment.arrays["codes"][self.rows])
            return
        near = _dots(query, segment.arrays["centroids"])
        order = np.argsort(-near, kind="stable")
        probe = index_partition.probe_count(lists)
        self.left = order[probe:]
        self.upper = near[self.left] + segment.arrays["radii"][self.left]
        self.rows, self.estimate = self._read(order[:probe])

    def _estimate(self, codes: np.ndarray) -> np.ndarray:
        return _dots(self.q8[0], codes) / self.divisor

    def _read(self, lists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Allowed rows of ``lists`` and their estimates."""
        if lists.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        bounds = self.segment.arrays["list_offsets"]
        starts, sizes = bounds[lists], bounds[lists + 1] - bounds[lists]
        ends = np.cumsum(sizes)
        rows = np.arange(int(ends[-1])) + np.repeat(starts - (ends - sizes), sizes)
        rows = rows[self.mask[rows]]
        return rows, self._estimate(self.segment.arrays["codes"][rows])

    def first(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``max(4k, 256)`` estimates, scored exactly (and not candidates again)."""
        live = int(np.isfinite(self.estimate).sum())
        keep = min(live, max(4 * k, _MIN_RESCORE))
        if keep <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        picked = (np.argpartition(-self.estimate, keep - 1)[:keep]
                  if keep < len(self.estimate) else np.flatnonzero(np.isfinite(self.estimate)))
        scored = exact_scores(self.segment, np.sort(self.rows[picked]), self.query)
        self.estimate[picked] = -np.inf
        return scored

    def within(self, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """Every row read whose estimate reaches ``floor``, scored exactly."""
        rows = self.rows[self.estimate >= np.float32(floor)]
        return exact_scores(self.segment, np.sort(rows), self.query)

    def more_lists(self, threshold: float, bound: float
                   ) -> tuple[tuple[np.ndarray, np.ndarray], bool]:
        """Unread lists whose bound reaches ``threshold`` (up to ``probe_count`` of them):
        their rows that may reach it, scored exactly; and whether none was left out."""
        reach = self.left[self.upper >= np.float32(threshold)]
        if reach.size == 0:
            return (np.zeros(0, np.int64), np.zeros(0, np.float64)), True
        budget = index_partition.probe_count(self.segment.lists)
        rows, estimate = self._read(reach[:budget])
        found = exact_scores(self.segment, np.sort(rows[estimate >= np.float32(threshold - bound)]),
                       self.query)
        return found, len(reach) <= budget
