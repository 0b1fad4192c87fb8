"""The persisted search index: same answers as FTS5 and the exact scan, and never trusted.

Libraries are real SQLite files built through the store functions (``add_book``); the index
threshold is lowered to 0 so small libraries get an index. Every check compares the
index's answer with the exact path's answer on the same database: FTS5's own ``bm25()``
ranking for keywords, the in-memory float32 scan for vectors.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grimoire_beholder.search import bounded_scan, index_writer, keyword
from grimoire_beholder.search import segment_files as seg
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.search.vector import VectorIndex
from grimoire_beholder.store import book_rows as books
from grimoire_beholder.store import db, fts
from grimoire_beholder.store import hit_queries as store_search
from grimoire_beholder.store.transactions import transaction
from helpers import EMBEDDER, open_library
from index_helpers import add_random_book, random_library


@pytest.fixture(autouse=True)
def _index_small_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "0")


QUERIES = ["lantern keeper", "the light of the lamps", "cafe creme", "running ship storm",
           "fog", "north coast cliff waves", "glass lens wick oil", "the and of",
           "gull rope signal beacon harbour tide rock"]


def _assert_matches_exact(conn: sqlite3.Connection, index: SearchIndex,
                          filters: list[list[int] | None]) -> None:
    exact = VectorIndex()
    exact.refresh(conn)
    rng = np.random.default_rng(7)
    for books_allowed in filters:
        for query in QUERIES:
            expression = keyword.build_query(query).word
            assert expression is not None
            got = index.keyword(conn, expression, 20, books_allowed)
            want = store_search.word_match(conn, expression, 20, books_allowed)
            assert got is not None
            assert [c for c, _ in got] == [c for c, _ in want], query
            assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9)
            vec = rng.standard_normal(EMBEDDER.dimension).astype(np.float32)
            assert ([c for c, _ in index.search(vec, 10, books_allowed)]
                    == [c for c, _ in exact.search(vec, 10, books_allowed)])


def test_index_ranks_exactly_like_fts5_and_the_exact_scan(tmp_path: Path) -> None:
    conn, path, ids = random_library(tmp_path)
    assert index_writer.update(conn, path) == "built"
    index = SearchIndex(path)
    assert index.refresh(conn) == "persisted" and index.persisted
    assert index.size == conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    _assert_matches_exact(conn, index, [None, [ids[1]], [ids[0], ids[2]]])


def test_reader_catches_up_from_the_log_and_the_writer_folds_changes_in(
        tmp_path: Path) -> None:
    conn, path, ids = random_library(tmp_path, n_books=8)  # changes below touch under half of it
    index_writer.update(conn, path)
    index = SearchIndex(path)
    index.refresh(conn)
    added = add_random_book(conn, "book-new", seed=11)
    with transaction(conn):
        books.delete_book(conn, ids[0])
        fts.rebuild(conn, ids[1])  # rewrites FTS rows in place: logged, masked, re-read
    assert index.refresh(conn) == "persisted"  # segments + a delta read from the log
    _assert_matches_exact(conn, index, [None, [added], [ids[1], ids[2]]])
    with transaction(conn):
        books.delete_book(conn, added)  # a change to the delta itself
    later = add_random_book(conn, "book-later", seed=12)
    assert index.refresh(conn) == "persisted"
    _assert_matches_exact(conn, index, [None, [later]])
    assert index_writer.update(conn, path) == "updated"
    assert index_writer.update(conn, path) == "fresh"
    fresh = SearchIndex(path)
    assert fresh.refresh(conn) == "persisted"
    _assert_matches_exact(conn, fresh, [None, [later]])
    assert index.refresh(conn) == "persisted"  # the old reader reopens the new manifest
    _assert_matches_exact(conn, index, [None])


def test_foreign_damaged_or_future_index_is_never_used(tmp_path: Path) -> None:
    conn, path, _ = random_library(tmp_path / "a")
    other, other_path, _ = random_library(tmp_path / "b", n_books=2)
    index_writer.update(conn, path)
    shutil.copytree(seg.folder_for(path), seg.folder_for(other_path))
    foreign = SearchIndex(other_path)
    assert foreign.refresh(other) != "persisted"  # another library's id
    assert index_writer.update(other, other_path) == "built"
    assert SearchIndex(other_path).refresh(other) == "persisted"

    backup = tmp_path / "backup.db"
    with sqlite3.connect(backup) as copy:
        conn.backup(copy)
    add_random_book(conn, "later", seed=5)
    index_writer.update(conn, path)  # the index now covers a later state than the backup
    restored = db.connect(backup)
    shutil.copytree(seg.folder_for(path), seg.folder_for(backup))
    assert SearchIndex(backup).refresh(restored) != "persisted"

    manifest = seg.read_manifest(seg.folder_for(path))
    assert manifest is not None
    victim = seg.folder_for(path) / manifest["segments"][0]["name"] / "lengths.npy"
    victim.write_bytes(victim.read_bytes()[:-8])  # a damaged file
    damaged = SearchIndex(path)
    assert damaged.refresh(conn) != "persisted"
    assert damaged.keyword(conn, '"fog"', 5, None) is None  # keyword goes to FTS5
    assert index_writer.update(conn, path) == "built"


def test_unlogged_change_makes_the_index_inconsistent_and_unused(tmp_path: Path) -> None:
    conn, path, _ = random_library(tmp_path)
    index_writer.update(conn, path)
    chunk = conn.execute("SELECT min(chunk_id) FROM embeddings").fetchone()[0]
    with transaction(conn):  # behind the log's back: FTS5 loses a row
        conn.execute("DELETE FROM chunks_fts WHERE rowid = ?", (chunk,))
    assert SearchIndex(path).refresh(conn) != "persisted"


def test_read_only_reader_and_small_library_write_no_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn, path, _ = random_library(tmp_path)
    reader = db.connect(path, read_only=True)
    index = SearchIndex(path)
    assert index.refresh(reader) != "persisted"
    assert not seg.folder_for(path).exists()
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "100000")
    assert index_writer.update(conn, path) == "small"
    assert not seg.folder_for(path).exists()


@pytest.mark.parametrize("preadv", [True, False])
def test_reading_position_scope_matches_the_exact_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preadv: bool) -> None:
    """The scope's rows are read from the vectors file: by ``os.preadv``, and by seek and
    read where there is none (Windows)."""
    if not preadv:
        monkeypatch.delattr(os, "preadv", raising=False)
    conn, path, ids = random_library(tmp_path)
    index_writer.update(conn, path)
    index, exact = SearchIndex(path), VectorIndex()
    assert index.refresh(conn) == "persisted"
    exact.refresh(conn)
    scope = [r[0] for r in conn.execute(
        "SELECT id FROM chunks WHERE book_id = ? AND chapter_index < 2", (ids[1],))]
    rng = np.random.default_rng(3)
    for _ in range(5):
        vec = rng.standard_normal(EMBEDDER.dimension).astype(np.float32)
        got = index.search(vec, 5, [ids[1]], scope)
        assert got and {c for c, _ in got} <= set(scope)
        assert [c for c, _ in got] == [c for c, _ in exact.search(vec, 5, [ids[1]], scope)]


def test_vector_search_shortlists_by_int8_and_still_finds_the_exact_top_k(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a library many times larger than the rows re-scored exactly, the int8 scan really
    chooses the shortlist, and the shortlist still holds the exact scan's best ``k``."""
    conn = open_library(tmp_path)
    for b in range(2):
        add_random_book(conn, f"big-{b}", seed=20 + b, sections=125)  # 2 × 125 × 8 = 2,000 chunks
    path = tmp_path / "library.db"
    assert index_writer.update(conn, path) == "built"
    index, exact = SearchIndex(path), VectorIndex()
    assert index.refresh(conn) == "persisted"
    exact.refresh(conn)
    rescored: list[tuple[int, int]] = []  # (rows in the segments, rows scored exactly)
    bounded = bounded_scan.bounded_top

    def spy(parts: list[tuple[seg.Segment, np.ndarray]], *args: Any
            ) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
        found, proven = bounded(parts, *args)
        assert proven  # a segment this small is scanned whole
        rescored.append((sum(s.size for s, _ in parts), sum(len(f[0]) for f in found)))
        return found, proven

    monkeypatch.setattr(bounded_scan, "bounded_top", spy)
    rng = np.random.default_rng(11)
    queries = [rng.standard_normal(EMBEDDER.dimension).astype(np.float32) for _ in range(20)]
    queries += [EMBEDDER.embed_query(q) for q in QUERIES]
    for i, vec in enumerate(queries):  # the same best scores (ids may differ between ties)
        got, want = index.search(vec, 10), exact.search(vec, 10)
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        if i < 20:  # a random direction: ten distinct scores, so the check above has teeth
            assert len({round(s, 4) for _, s in want}) == 10
    assert len(rescored) == len(queries) and all(size == 2000 for size, _ in rescored)
    # a random direction: the shortlist alone (an eighth of the rows); one-word queries, whose
    # scores tie in bulk on this small vocabulary, may need more rows, never every row
    assert all(kept == 256 for _, kept in rescored[:20]), rescored[:20]
    assert all(kept < size for size, kept in rescored), rescored


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_index_found_damaged_mid_search_answers_from_the_exact_arms(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The vector arm meeting damage (a vectors file cut short) sets the index aside and
    the same search answers from the exact arms — run on a worker beside the keyword arm
    or, in vector mode, on the searching thread."""
    from helpers import engine_for

    conn, path, _ = random_library(tmp_path)
    assert index_writer.update(conn, path) == "built"
    engine = engine_for(conn, db_path=str(path))
    want = [(h.chunk_id, h.score) for h in engine.search("lantern keeper", mode=mode).hits]
    assert want and engine.vector_index.persisted

    def cut_short(self: seg.Segment, rows: np.ndarray) -> np.ndarray:
        raise seg.IndexDamage(f"segment {self.name}: its vectors file is too short")

    monkeypatch.setattr(seg.Segment, "vectors_of", cut_short)
    got = engine.search("lantern keeper", mode=mode)
    assert [h.chunk_id for h in got.hits] == [c for c, _ in want]
    assert [h.score for h in got.hits] == pytest.approx([s for _, s in want])
    assert not engine.vector_index.persisted
