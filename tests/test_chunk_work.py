"""What the model stages read about a chunk waiting for them (a real SQLite library)."""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.store import chunk_progress
from helpers import add_book, open_library


def test_waiting_chunks_carry_their_sections_role_and_their_books_kind_of_file(
        tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    book_id = add_book(conn, "r-intro", [("Manual", "Vectors", ["Vectors hold numbers."]),
                                         ("Manual", "Index", ["abline 55, abs 22"])],
                       source_type="pdf", embed=False)
    other = add_book(conn, "notes", [("Notes", "", ["A note."])], source_type="markdown",
                     embed=False)
    conn.execute("UPDATE sections SET role = 'index' WHERE title = 'Index'")
    work = chunk_progress.pending_chunks(conn, book_id)
    assert [(w.text, w.role, w.source_type) for w in work] == [
        ("Vectors hold numbers.", "body", "pdf"), ("abline 55, abs 22", "index", "pdf")]
    assert [(w.book_id, w.source_type) for w in chunk_progress.pending_chunks(conn)] == [
        (book_id, "pdf"), (book_id, "pdf"), (other, "markdown")]
