"""Big segments grouped in lists (``search/index_partition.py``): still FTS5's keyword
ranking, the exact vector top 10 whenever a search says it is proven, and filtered searches
exact.

The partition thresholds are lowered so a 2,000-chunk library gets lists (a real one gets
them from 20,000 rows per segment); every answer is compared with the exact arms' answer on
the same database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.search import index_partition, index_writer, keyword
from grimoire_beholder.search import segment_files as seg
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.search.vector import VectorIndex
from grimoire_beholder.store import hit_queries as store_search
from helpers import EMBEDDER, add_book, open_library

WORDS = ["lantern", "harbour", "tide", "keeper", "beacon", "fog", "rock", "signal", "storm",
         "gull", "rope", "café", "lamp", "lamps", "light", "the", "of", "and", "ship",
         "winter", "north", "coast", "cliff", "wave", "oil", "wick", "glass", "lens"]
QUERIES = ["lantern keeper", "the light of the lamps", "fog", "north coast cliff wave",
           "glass lens wick oil", "the and of"]


@pytest.fixture(autouse=True)
def _small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "0")
    monkeypatch.setattr(index_partition, "PARTITION_MIN_ROWS", 500)
    monkeypatch.setattr(index_partition, "ROWS_PER_LIST", 32)


def _add(conn: sqlite3.Connection, slug: str, seed: int) -> int:
    rng = np.random.default_rng(seed)
    specs = [(f"Chapter {c}", f"Part {c}",
              [" ".join(rng.choice(WORDS, int(rng.integers(8, 40)))) for _ in range(8)])
             for c in range(125)]  # 1,000 chunks
    return add_book(conn, slug, specs)


def _persisted(conn: sqlite3.Connection, path: Path) -> SearchIndex:
    index = SearchIndex(path)
    assert index.refresh(conn) == "persisted"
    return index


def test_lists_keep_keyword_ranking_and_exact_vectors_when_proven(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    ids = [_add(conn, f"book-{i}", seed=i) for i in range(2)]
    path = tmp_path / "library.db"
    assert index_writer.update(conn, path) == "built"
    folder = seg.folder_for(path)
    manifest = seg.read_manifest(folder)
    assert manifest is not None
    segment = seg.load_segment(folder, manifest["segments"][0]["name"])
    assert segment.lists == 2000 // 32
    bounds = segment.arrays["list_offsets"]
    assert bounds[0] == 0 and bounds[-1] == segment.size == 2000
    index = _persisted(conn, path)
    exact = VectorIndex()
    exact.refresh(conn)
    for query in QUERIES:  # postings follow the rows into their lists
        expression = keyword.build_query(query).word
        assert expression is not None
        got = index.keyword(conn, expression, 20, None)
        want = store_search.word_match(conn, expression, 20, None)
        assert got is not None and [c for c, _ in got] == [c for c, _ in want], query
    rng = np.random.default_rng(5)
    base = EMBEDDER.embed_query("lantern keeper")
    probes = [rng.standard_normal(EMBEDDER.dimension).astype(np.float32) for _ in range(30)]
    probes += [base + 0.05 * rng.standard_normal(EMBEDDER.dimension).astype(np.float32)
               for _ in range(10)]
    proven, hits = 0, 0
    for probe in probes:
        got = [c for c, _ in index.search(probe, 10)]
        want = [c for c, _ in exact.search(probe, 10)]
        hits += len(set(got) & set(want))
        assert index._persisted is not None
        if index._persisted.last_proven:
            proven += 1
            assert got == want
        for book in ids:  # one book of two: its rows alone are read, exactly
            assert ([c for c, _ in index.search(probe, 10, [book])]
                    == [c for c, _ in exact.search(probe, 10, [book])])
    assert hits / (10 * len(probes)) >= 0.9


def test_tight_topics_close_the_bound_and_the_top_10_is_the_exact_scan() -> None:
    """Rows in tight topics (cosine ~0.99 within one): the lists far from a query cannot
    reach its 10th best score, so the search is proven exact after reading a few lists."""
    from grimoire_beholder.search import bounded_scan, persisted

    rng = np.random.default_rng(2)
    topics = rng.standard_normal((40, 64))
    rows = np.repeat(topics, 100, axis=0) + 0.08 * rng.standard_normal((4000, 64))
    data = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    empty = seg.Postings(np.zeros(0, np.int32), np.zeros(0, np.uint64), np.zeros(0, np.float32))
    ids = np.arange(len(data))
    arrays, scale = seg.segment_arrays(ids, ids % 7, data, np.ones(len(data), np.int32), empty)
    segment = seg.Segment("s", scale, arrays, residual=seg.max_residual(
        arrays["vectors"], arrays["codes"], scale))
    assert segment.lists == 4000 // 32
    everything = np.ones(len(data), dtype=bool)
    for t in range(0, 40, 4):
        query = topics[t] + 0.3 * rng.standard_normal(64)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        found, proven = bounded_scan.bounded_top([(segment, everything)], query, 10, np.zeros(0))
        got = [c for c, _ in persisted._best(found, 10, descending=True)]
        assert proven
        assert got == list(np.argsort(-(data @ query), kind="stable")[:10])


def test_lists_that_do_not_add_up_are_refused(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    _add(conn, "book-0", seed=1)
    path = tmp_path / "library.db"
    assert index_writer.update(conn, path) == "built"
    folder = seg.folder_for(path)
    manifest = seg.read_manifest(folder)
    assert manifest is not None
    name = manifest["segments"][0]["name"]
    bounds = np.load(folder / name / "list_offsets.npy")
    bounds[-1] -= 1  # a row left out of every list
    np.save(folder / name / "list_offsets.npy", bounds)
    with pytest.raises(ValueError):
        seg.load_segment(folder, name)
    assert SearchIndex(path).refresh(conn) != "persisted"  # the exact arms answer


def test_chunk_scopes_on_lists_are_the_exact_scan(tmp_path: Path) -> None:
    """A set of chunk ids (a reading position, or the keyword candidates convex fusion
    scores) on segments whose rows are grouped in lists, so out of chunk-id order: the
    exact scan's answer, with and without a book filter, ids of deleted chunks ignored."""
    conn = open_library(tmp_path)
    ids = [_add(conn, f"book-{i}", seed=i) for i in range(2)]
    path = tmp_path / "library.db"
    assert index_writer.update(conn, path) == "built"
    index = _persisted(conn, path)
    exact = VectorIndex()
    exact.refresh(conn)
    chunk_ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    rng = np.random.default_rng(11)
    for _ in range(6):
        scope = sorted(int(c) for c in rng.choice(chunk_ids, 60, replace=False))
        scope_gone = [*scope, max(chunk_ids) + 7, -3]  # no such chunks
        vec = rng.standard_normal(EMBEDDER.dimension).astype(np.float32)
        for books in (None, [ids[0]]):
            got = index.search(vec, 60, books, scope_gone)
            want = exact.search(vec, 60, books, scope)
            assert got and [c for c, _ in got] == [c for c, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_a_small_segment_with_lists_still_finds_the_top_10() -> None:
    """Clustered rows with near-copies, queries drawn near the clusters: a 20,000-row
    segment (few lists) reads enough of them to find the exact top 10, ties aside."""
    from grimoire_beholder.search import bounded_scan, persisted

    rng = np.random.default_rng(4)

    def unit(m: np.ndarray) -> np.ndarray:
        return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)

    articles = unit(rng.standard_normal((30, 64)))
    bases = unit(articles[rng.integers(0, 30, 600)] + 0.8 * unit(rng.standard_normal((600, 64))))
    n = 20_000
    data = unit(bases[rng.integers(0, 600, n)] + 1.2 * unit(rng.standard_normal((n, 64))))
    copies = np.flatnonzero(rng.random(n) < 0.15)
    data[copies] = unit(data[rng.integers(0, n, copies.size)]
                        + 0.03 * unit(rng.standard_normal((copies.size, 64))))
    empty = seg.Postings(np.zeros(0, np.int32), np.zeros(0, np.uint64), np.zeros(0, np.float32))
    ids = np.arange(n)
    arrays, scale = seg.segment_arrays(ids, ids % 7, data, np.ones(n, np.int32), empty)
    segment = seg.Segment("s", scale, arrays, residual=seg.max_residual(
        arrays["vectors"], arrays["codes"], scale))
    assert segment.lists > 300
    everything = np.ones(n, dtype=bool)
    found_share = []
    for q in unit(bases[rng.integers(0, 600, 40)] + 1.5 * unit(rng.standard_normal((40, 64)))):
        found, _ = bounded_scan.bounded_top([(segment, everything)], q, 10, np.zeros(0))
        got = [c for c, _ in persisted._best(found, 10, descending=True)]
        scores = data @ q
        tenth = np.sort(scores)[-10]
        found_share.append(float(np.mean(scores[got] >= tenth - 1e-6)))
    assert np.mean(found_share) >= 0.99
