"""The keyword indexes (FTS5): writing rows for embedded chunks, deleting, rebuilding.

Both FTS5 tables use ``rowid = chunks.id``. ``chunks_fts`` holds the chunk text, its
generated context and the section/chapter/book titles (word tokenizer, stemmed, accents
folded); ``chunks_fts_trigram`` holds the chunk text again under the trigram tokenizer so
text in scripts without spaces is findable. The word table's text is ``text.index_fold``-ed
(NFKC, no soft hyphens), as the keyword arm folds a query; the trigram table's is as stored.
The read side (MATCH queries) lives in ``store.hit_queries``. Every write here is also
logged in ``search_log`` (``store.index_source``) so the persisted search index can catch up
with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

from grimoire_beholder.store import index_source, vectors
from grimoire_beholder.text import index_fold


def index_chunks(conn: sqlite3.Connection, chunk_ids: Sequence[int]) -> None:
    """(Re)write the FTS rows of these chunks. Call inside the embedding transaction."""
    if not chunk_ids:
        return
    ids = list(chunk_ids)
    _delete_rows(conn, ids)  # logs the ids too
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"""SELECT c.id, c.text, COALESCE(c.context, ''), s.breadcrumb, ch.title, b.name
                FROM chunks c
                JOIN sections s ON s.id = c.section_id
                JOIN chapters ch ON ch.id = s.chapter_id
                JOIN books b ON b.id = c.book_id
                WHERE c.id IN ({marks})""",
            part,
        ).fetchall()
        conn.executemany(
            "INSERT INTO chunks_fts (rowid, text, context, section, chapter, book) "
            "VALUES (?, ?, ?, ?, ?, ?)", [(r[0], *map(index_fold, r[1:])) for r in rows])
        conn.execute(
            f"INSERT INTO chunks_fts_trigram (rowid, text) "
            f"SELECT id, text FROM chunks WHERE id IN ({marks})",
            part,
        )


def _delete_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    index_source.log_chunks(conn, ids)
    for start in range(0, len(ids), 500):
        part = list(ids[start:start + 500])
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({marks})", part)
        conn.execute(f"DELETE FROM chunks_fts_trigram WHERE rowid IN ({marks})", part)


def delete_book(conn: sqlite3.Connection, book_id: int) -> None:
    """Remove a book's FTS rows. Call in the same transaction that deletes the book.

    Also bumps the vector generation: the book's embeddings are about to cascade away, and
    in-memory vector indexes must notice (see ``store.vectors``).
    """
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE book_id = ?", (book_id,))]
    _delete_rows(conn, ids)
    vectors.bump_generation(conn)


class KeywordStore(Protocol):
    """What a server engine (``store.server_engine``) answers for :func:`rebuild`."""

    def rebuild_keywords(self, book_id: int | None) -> int: ...


def rebuild(conn: sqlite3.Connection | KeywordStore, book_id: int | None = None) -> int:
    """Drop and rebuild the FTS rows (of one book, or all) from embedded chunks.

    Returns the number of chunks indexed. Call inside a transaction.
    """
    if not isinstance(conn, sqlite3.Connection):
        return conn.rebuild_keywords(book_id)
    if book_id is None:
        index_source.log_chunks(conn, [r[0] for r in conn.execute(
            "SELECT id FROM chunks_fts_content")])
        conn.execute("DELETE FROM chunks_fts")
        conn.execute("DELETE FROM chunks_fts_trigram")
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE status = 'embedded'")]
    else:
        delete_book(conn, book_id)
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM chunks WHERE status = 'embedded' AND book_id = ?", (book_id,))]
    index_chunks(conn, ids)
    return len(ids)


def count_rows(conn: sqlite3.Connection) -> int:
    """Rows in the word index (equals the number of embedded chunks when consistent)."""
    return int(conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0])
