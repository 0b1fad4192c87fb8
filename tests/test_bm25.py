"""The keyword arm's pruned BM25 (common words added only where they can matter) returns
exactly what scoring every row returns: the same rows and the same floats."""

from __future__ import annotations

import numpy as np

from grimoire_beholder.search import bm25


def _postings(rng: np.random.Generator, size: int, share: float) -> bm25.Posting:
    rows = np.flatnonzero(rng.random(size) < share).astype(np.int32)
    return rows, rng.integers(1, 6, rows.size).astype(np.float32)


def test_pruned_scores_are_the_full_pass_exactly_and_pruning_happens() -> None:
    rng = np.random.default_rng(11)
    size, pruned = 20_000, 0
    lengths = rng.integers(20, 400, size).astype(np.int32)
    for trial in range(60):
        shares = [0.9, 0.6, *rng.choice([0.0005, 0.002, 0.01, 0.05, 0.3], rng.integers(1, 5))]
        posts = [_postings(rng, size, s) for s in shares]
        idf = [1e-6 if s > 0.5 else float(np.log((size - s * size + 0.5) / (s * size + 0.5)))
               for s in shares]
        allowed = rng.random(size) < (0.5 if trial % 3 == 0 else 1.1)
        limit = int(rng.choice([10, 50, 150]))
        common = [j for j, (rows, _) in enumerate(posts)
                  if rows.size * bm25.COMMON_SHARE > size]
        fast = bm25.segment_top(lengths, size, allowed, posts, idf, 180.0, limit)
        full = bm25._every_row(lengths, size, allowed, posts, idf, 180.0, limit)
        assert np.array_equal(fast[0], full[0]) and np.array_equal(fast[1], full[1])
        pruned += bm25._pruned(lengths, allowed, posts, idf, 180.0, limit, common) is not None
    assert pruned > 20  # most of these queries never score the common words' every row


def test_a_common_word_that_outweighs_the_rare_ones_is_scored_everywhere() -> None:
    """When rows holding only the common word can beat the rare words' rows, the bound
    does not hold and every row is scored."""
    rng = np.random.default_rng(5)
    size = 10_000
    lengths = rng.integers(20, 400, size).astype(np.int32)
    posts = [_postings(rng, size, 0.5), _postings(rng, size, 0.01)]
    idf = [5.0, 0.5]
    allowed = np.ones(size, dtype=bool)
    fast = bm25.segment_top(lengths, size, allowed, posts, idf, 180.0, 10)
    full = bm25._every_row(lengths, size, allowed, posts, idf, 180.0, 10)
    assert np.array_equal(fast[0], full[0]) and np.array_equal(fast[1], full[1])
    assert not np.isin(fast[0], posts[1][0]).all()  # common-word-only rows are among them
    assert bm25._pruned(lengths, allowed, posts, idf, 180.0, 10, [0]) is None
