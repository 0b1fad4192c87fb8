"""The model stages' view of the store: what is left to do, and checkpoint writes.

Each stage only reads rows in the state it cares about and only moves them forward:
section summary NULL → set; chunk pending → contextualized (context set) → embedded (vector and
FTS rows written in the same transaction). So a rerun after a crash resumes exactly where the
last commit left off.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.store import fts, vectors
from grimoire_beholder.store.records import ChunkWork, Integrity

if TYPE_CHECKING:  # numpy is imported on use: `list` and `--help` must not load it
    import numpy as np


class StageStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def sections_without_summary(self, book_id: int | None = None
                                 ) -> list[tuple[int, int, str, str, str]]: ...
    def set_summary(self, section_id: int, summary: str) -> None: ...
    def pending_chunks(self, book_id: int | None = None, status: str = "pending"
                       ) -> list[ChunkWork]: ...
    def section_info(self, section_id: int) -> tuple[str, str, str, str]: ...
    def set_context(self, chunk_id: int, context: str) -> None: ...
    def mark_embedded(self, items: Sequence[tuple[ChunkWork, np.ndarray]], identity: str,
                      dimension: int) -> None: ...
    def status_counts(self) -> dict[str, int]: ...
    def summary_counts(self) -> dict[int, tuple[int, int]]: ...


def sections_without_summary(conn: sqlite3.Connection | StageStore, book_id: int | None = None
                             ) -> list[tuple[int, int, str, str, str]]:
    """(section id, book id, book name, breadcrumb, text) of sections still to summarise."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.sections_without_summary(book_id)
    sql = ("SELECT s.id, s.book_id, b.name, s.breadcrumb, s.text FROM sections s "
           "JOIN books b ON b.id = s.book_id WHERE s.summary IS NULL")
    args: tuple[int, ...] = ()
    if book_id is not None:
        sql += " AND s.book_id = ?"
        args = (book_id,)
    return [(r[0], r[1], r[2], r[3], r[4]) for r in conn.execute(sql + " ORDER BY s.id", args)]


def set_summary(conn: sqlite3.Connection | StageStore, section_id: int, summary: str) -> None:
    if not isinstance(conn, sqlite3.Connection):
        return conn.set_summary(section_id, summary)
    conn.execute("UPDATE sections SET summary = ? WHERE id = ? AND summary IS NULL",
                 (summary, section_id))


def pending_chunks(conn: sqlite3.Connection | StageStore, book_id: int | None = None,
                   status: str = "pending") -> list[ChunkWork]:
    """Chunks in ``status``, in section order (so a section's chunks come together), with
    their section's role and their book's kind of file."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.pending_chunks(book_id, status)
    sql = ("SELECT c.id, c.book_id, c.section_id, c.text, c.context, c.content_hash, s.role, "
           "b.source_type FROM chunks c JOIN sections s ON s.id = c.section_id "
           "JOIN books b ON b.id = c.book_id WHERE c.status = ?")
    args: list[object] = [status]
    if book_id is not None:
        sql += " AND c.book_id = ?"
        args.append(book_id)
    sql += " ORDER BY c.book_id, c.chapter_index, c.section_index, c.chunk_index"
    return [ChunkWork(id=r[0], book_id=r[1], section_id=r[2], text=r[3], context=r[4],
                      content_hash=r[5], role=r[6], source_type=r[7])
            for r in conn.execute(sql, args)]


def section_info(conn: sqlite3.Connection | StageStore, section_id: int
                 ) -> tuple[str, str, str, str]:
    """(book name, breadcrumb, summary, text) of a section, for chunk contexts."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.section_info(section_id)
    r = conn.execute(
        "SELECT b.name, s.breadcrumb, COALESCE(s.summary, ''), s.text FROM sections s "
        "JOIN books b ON b.id = s.book_id WHERE s.id = ?", (section_id,)).fetchone()
    return r[0], r[1], r[2], r[3]


def set_context(conn: sqlite3.Connection | StageStore, chunk_id: int, context: str) -> None:
    """Checkpoint one chunk's context: pending → contextualized."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.set_context(chunk_id, context)
    conn.execute("UPDATE chunks SET context = ?, status = 'contextualized' "
                 "WHERE id = ? AND status = 'pending'", (context, chunk_id))


def mark_embedded(conn: sqlite3.Connection | StageStore,
                  items: Sequence[tuple[ChunkWork, np.ndarray]], identity: str,
                  dimension: int) -> None:
    """Write vectors and FTS rows of a batch and mark it embedded. Call in one transaction."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.mark_embedded(items, identity, dimension)
    import numpy as np

    vectors.ensure_stamp(conn, identity, dimension)
    for _, vec in items:
        if np.shape(vec) != (dimension,) or not np.all(np.isfinite(vec)):
            raise EmbeddingMismatchError(
                f"the embedder returned a vector of shape {np.shape(vec)} (expected "
                f"({dimension},), finite); nothing from this batch was stored"
            )
    vectors.write_vectors(conn, [(w.id, w.book_id, v) for w, v in items])
    ids = [w.id for w, _ in items]
    conn.executemany("UPDATE chunks SET status = 'embedded' WHERE id = ?", [(i,) for i in ids])
    fts.index_chunks(conn, ids)


def status_counts(conn: sqlite3.Connection | StageStore) -> dict[str, int]:
    """Library-wide chunk counts by status."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.status_counts()
    out = {"pending": 0, "contextualized": 0, "embedded": 0}
    for status, n in conn.execute("SELECT status, count(*) FROM chunks GROUP BY status"):
        out[status] = n
    return out


def summary_counts(conn: sqlite3.Connection | StageStore) -> dict[int, tuple[int, int]]:
    """Per book: (sections summarised, sections total)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.summary_counts()
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT book_id, count(summary), count(*) FROM sections GROUP BY book_id")}


def integrity(conn: sqlite3.Connection) -> Integrity:
    """Consistency figures: SQLite's integrity check and FTS rows vs embedded chunks."""
    return Integrity(
        integrity_check=str(conn.execute("PRAGMA integrity_check").fetchone()[0]),
        fts_rows=fts.count_rows(conn),
        embedded_chunks=int(conn.execute(
            "SELECT count(*) FROM chunks WHERE status = 'embedded'").fetchone()[0]),
        vectors=int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]))
