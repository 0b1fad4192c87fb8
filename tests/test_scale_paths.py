"""The paths the scale work changed: batched vector loads, the filtered keyword range, lazy
imports. Each would fail quietly (wrong rows, a missed book, a slow CLI), so each is pinned."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from grimoire_beholder.search import keyword
from grimoire_beholder.search.vector import VectorIndex
from grimoire_beholder.store import vectors
from grimoire_beholder.store.transactions import transaction
from helpers import add_book, open_library


def test_read_vectors_crosses_batches_in_order(tmp_path: Path) -> None:
    """More rows than one fetch batch: every row, in chunk-id order, bytes intact."""
    conn = open_library(tmp_path)
    add_book(conn, "one", [("C", "S", ["seed text"])], embed=False)
    rng = np.random.default_rng(3)
    n = 2 * vectors._READ_BATCH + 17
    mat = rng.standard_normal((n, 8), dtype=np.float32)
    ids = np.arange(1, n + 1) * 3  # gaps between ids
    conn.execute("PRAGMA foreign_keys = OFF")  # vectors without chunk rows: storage only
    with transaction(conn):
        vectors.ensure_stamp(conn, "test:vec", 8)
        vectors.write_vectors(conn, [(int(i), 1, v) for i, v in zip(ids[::-1], mat[::-1],
                                                                    strict=True)])
    got_ids, got_books, got = vectors.read_vectors(conn, 8)
    assert got_ids.tolist() == ids.tolist() and set(got_books.tolist()) == {1}
    assert np.array_equal(got, mat)
    tail_ids, _, tail = vectors.read_vectors(conn, 8, after_id=int(ids[-5]))
    assert tail_ids.tolist() == ids[-4:].tolist() and np.array_equal(tail, mat[-4:])


def test_index_load_normalises_without_keeping_the_raw_copy(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    add_book(conn, "one", [("C", "S", ["alpha beta", "gamma delta", "epsilon"])])
    index = VectorIndex()
    assert index.refresh(conn) == "rebuilt"
    norms = np.linalg.norm(index._matrix[:index.size], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    assert index._matrix.flags.writeable  # our own array, not a view of SQLite bytes


def test_filtered_keyword_range_keeps_books_apart(tmp_path: Path) -> None:
    """Books 1 and 3 allowed, book 2 (whose ids lie between theirs) must not leak in."""
    conn: sqlite3.Connection = open_library(tmp_path)
    for slug in ("first", "middle", "last"):
        add_book(conn, slug, [("C", f"S{i}", [f"shared lantern word {slug} {i}"])
                              for i in range(5)])
    ids = {slug: conn.execute("SELECT id FROM books WHERE slug = ?", (slug,)).fetchone()[0]
           for slug in ("first", "middle", "last")}
    hits = keyword.search(conn, "lantern", 50, [ids["first"], ids["last"]])
    books = {conn.execute("SELECT book_id FROM chunks WHERE id = ?", (c,)).fetchone()[0]
             for c, _ in hits}
    assert books == {ids["first"], ids["last"]} and len(hits) == 10
    assert keyword.search(conn, "lantern", 50, [ids["middle"]])
    assert len(keyword.search(conn, "lantern", 50, None)) == 15


def test_help_and_list_paths_do_not_import_numpy() -> None:
    """``--help`` and ``list`` import the CLI and the Library module; numpy costs ~0.1-0.3 s."""
    code = ("import sys, grimoire_beholder.cli.entry, grimoire_beholder.library; "
            "sys.exit('numpy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_one_book_counts_only_its_own_rows(tmp_path: Path) -> None:
    """Naming one book (a search filter, an outline) counts through the book_id indexes; its
    counts must still equal what the whole-library listing says for that book."""
    from grimoire_beholder.store import book_rows as book_store

    conn = open_library(tmp_path)
    add_book(conn, "small", [("C", "S", ["one chunk only"])])
    add_book(conn, "large", [("C1", "S1", ["a", "b", "c"]), ("C2", "S2", ["d", "e"])])
    listed = {b.slug: b for b in book_store.list_books(conn)}
    for slug in ("small", "large"):
        one = book_store.find_book(conn, slug)
        assert one is not None
        whole = listed[slug]
        assert (one.chapters, one.sections, one.chunks, one.status, one.approx_tokens) == (
            whole.chapters, whole.sections, whole.chunks, whole.status, whole.approx_tokens)
    large = listed["large"]
    assert (large.chapters, large.sections, large.chunks) == (2, 2, 5)
