"""The in-memory vector index: exact top-k, filters before top-k, incremental refresh, speed."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.search.vector import VectorIndex
from grimoire_beholder.store import db, vectors
from grimoire_beholder.store.transactions import transaction
from helpers import EMBEDDER, add_book, open_library, remove_book


def _random_index(n: int, dim: int, books: int, seed: int = 0) -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    book_ids = np.arange(n, dtype=np.int64) % books
    index = VectorIndex.from_arrays(np.arange(1, n + 1), book_ids, matrix)
    return index, matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_top_k_matches_brute_force() -> None:
    index, normed = _random_index(2_000, 32, books=4)
    query = np.random.default_rng(1).standard_normal(32).astype(np.float32)
    hits = index.search(query, 10)
    expected = np.argsort(-(normed @ (query / np.linalg.norm(query))))[:10] + 1
    assert [cid for cid, _ in hits] == expected.tolist()
    assert all(a[1] >= b[1] for a, b in itertools.pairwise(hits))
    assert -1.0 <= hits[-1][1] <= hits[0][1] <= 1.0


def test_filter_is_a_mask_before_top_k() -> None:
    index, _ = _random_index(1_000, 16, books=100)  # book 7 holds 10 rows
    query = np.ones(16, dtype=np.float32)
    hits = index.search(query, 5, book_ids={7})
    assert len(hits) == 5 and all((cid - 1) % 100 == 7 for cid, _ in hits)
    assert len(index.search(query, 50, book_ids=[7])) == 10  # all there is
    assert len(index.search(query, 50, book_ids=[7, 8])) == 20
    assert index.search(query, 5, book_ids=[]) == []
    assert index.search(query, 5, book_ids=[12345]) == []


def test_degenerate_queries() -> None:
    index, _ = _random_index(10, 8, books=1)
    assert index.search(np.zeros(8, dtype=np.float32), 3) == []
    assert len(index.search(np.ones(8), 50)) == 10
    with pytest.raises(EmbeddingMismatchError, match="dimensions"):
        index.search(np.ones(9), 3)
    assert VectorIndex().search(np.ones(8), 3) == []


def _book(slug: str, text: str) -> list[tuple[str, str, list[str]]]:
    return [("C", "S", [f"{text} one", f"{text} two", f"{text} three"])]


def test_refresh_appends_then_rebuilds_on_delete(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    index = VectorIndex()
    assert index.refresh(conn) == "cleared" and index.size == 0
    first = add_book(conn, "first", _book("first", "unicorn horn"))
    assert index.refresh(conn) == "rebuilt" and index.size == 3
    assert index.refresh(conn) == "unchanged"
    add_book(conn, "second", _book("second", "phoenix ash"))
    assert index.refresh(conn) == "appended" and index.size == 6 and index.rebuilds == 1
    top = index.search(EMBEDDER.embed_query("phoenix ash two"), 1)
    second_ids = {r[0] for r in conn.execute(
        "SELECT id FROM chunks WHERE book_id = (SELECT id FROM books WHERE slug = 'second')")}
    assert top[0][0] in second_ids
    remove_book(conn, first)
    assert index.refresh(conn) == "rebuilt" and index.size == 3
    assert {cid for cid, _ in index.search(np.ones(EMBEDDER.dimension), 10)} == second_ids


def test_refresh_notices_reused_ids_after_delete(tmp_path: Path) -> None:
    """Deleting the newest book and adding another of the same size reuses the same rowids."""
    conn = open_library(tmp_path)
    add_book(conn, "keep", _book("keep", "kraken ink"))
    last = add_book(conn, "last", _book("last", "hydra heads"))
    index = VectorIndex()
    index.refresh(conn)
    before = vectors.signature(conn)
    remove_book(conn, last)
    add_book(conn, "again", _book("again", "chimera goat"))
    after = vectors.signature(conn)
    assert (after.count, after.max_id) == (before.count, before.max_id)  # ids were reused
    assert index.refresh(conn) == "rebuilt"
    query = EMBEDDER.embed_query("chimera goat one")
    best = index.search(query, 1)[0]
    assert best[1] == pytest.approx(1.0, abs=1e-5)


def test_overwriting_a_vector_forces_a_rebuild(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    book = add_book(conn, "only", _book("only", "golem clay"))
    index = VectorIndex()
    index.refresh(conn)
    chunk_id = conn.execute("SELECT min(id) FROM chunks").fetchone()[0]
    flipped = -EMBEDDER.embed_query("golem clay one")
    with transaction(conn):
        vectors.write_vectors(conn, [(chunk_id, book, flipped)])
    assert index.refresh(conn) == "rebuilt"
    assert index.search(flipped, 1)[0] == (chunk_id, pytest.approx(1.0, abs=1e-5))


def test_refresh_sees_another_connections_commit(tmp_path: Path) -> None:
    writer = open_library(tmp_path)
    add_book(writer, "one", _book("one", "sphinx riddle"))
    reader = db.connect(tmp_path / "library.db", read_only=True)
    index = VectorIndex()
    assert index.refresh(reader) == "rebuilt"
    assert index.refresh(reader) == "unchanged"
    add_book(writer, "two", _book("two", "cerberus bark"))
    assert index.refresh(reader) == "appended" and index.size == 6
