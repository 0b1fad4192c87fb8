"""Section roles in the store: judging them again from stored data, and reading them for
search (see ``structure.roles`` for what a role is)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Protocol


class RoleStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def roles_and_texts(self, chunk_ids: Iterable[int]) -> dict[int, tuple[str, str]]: ...
    def chunk_ids_with_roles(self, book_ids: Collection[int] | None,
                             roles: Collection[str]) -> list[int]: ...


@dataclass(frozen=True)
class StoredSection:
    """What role judging reads of one stored section."""

    id: int
    chapter_title: str
    title: str
    text: str
    hints: frozenset[str]
    page_start: int | None
    page_end: int | None


def sections(conn: sqlite3.Connection, book_id: int) -> list[StoredSection]:
    """A book's sections in reading order, with their text, markup hints and pages."""
    rows = conn.execute(
        "SELECT s.id, ch.title, s.title, s.text, s.hints, s.page_start, s.page_end "
        "FROM sections s JOIN chapters ch ON ch.id = s.chapter_id WHERE s.book_id = ? "
        "ORDER BY s.chapter_index, s.section_index", (book_id,))
    return [StoredSection(int(r[0]), r[1], r[2], r[3], frozenset((r[4] or "").split()),
                          r[5], r[6]) for r in rows]


def set_roles(conn: sqlite3.Connection, roles: Iterable[tuple[int, str]]) -> None:
    """Store (section id, role) pairs. Call inside a transaction."""
    conn.executemany("UPDATE sections SET role = ? WHERE id = ?",
                     [(role, section_id) for section_id, role in roles])


def page_pieces(conn: sqlite3.Connection, book_id: int) -> list[tuple[int, str]]:
    """(physical page, text) of a book's one-page chunks, to read its pages back."""
    return [(int(r[0]), r[1]) for r in conn.execute(
        "SELECT page_start, text FROM chunks WHERE book_id = ? AND page_start IS NOT NULL "
        "AND page_start = page_end ORDER BY id", (book_id,))]


def roles_and_texts(conn: sqlite3.Connection | RoleStore, chunk_ids: Iterable[int]
                    ) -> dict[int, tuple[str, str]]:
    """(section role, chunk text) of each chunk, by chunk id, for re-ranking candidates.

    The role comes from the covering index ``sections_role``: in the row it is stored after
    the section's whole text, which SQLite would read through for every candidate."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.roles_and_texts(chunk_ids)
    rows = conn.execute(
        "SELECT c.id, s.role, c.text FROM chunks c "
        "JOIN sections s INDEXED BY sections_role ON s.id = c.section_id "
        "WHERE c.id IN (SELECT value FROM json_each(?))",
        (json.dumps([int(i) for i in chunk_ids]),)).fetchall()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def derived_version(conn: sqlite3.Connection) -> str | None:
    """The version of the rules the stored roles and index entries were judged by."""
    row = conn.execute("SELECT value FROM library_meta WHERE key = 'derived_version'").fetchone()
    return None if row is None else str(row[0])


def stamp_derived(conn: sqlite3.Connection, version: str) -> None:
    """Record the rules' version once every book is judged. Call inside a transaction."""
    conn.execute("INSERT OR REPLACE INTO library_meta (key, value) "
                 "VALUES ('derived_version', ?)", (version,))


def chunk_ids_with_roles(conn: sqlite3.Connection | RoleStore, book_ids: Collection[int] | None,
                         roles: Collection[str]) -> list[int]:
    """Ids of the chunks in sections of these roles (within these books; None: all)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chunk_ids_with_roles(book_ids, roles)
    sql = ("SELECT c.id FROM chunks c JOIN sections s ON s.id = c.section_id "
           "WHERE s.role IN (SELECT value FROM json_each(?))")
    args: list[object] = [json.dumps(sorted(roles))]
    if book_ids is not None:
        sql += " AND c.book_id IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(sorted(int(b) for b in book_ids)))
    return [int(r[0]) for r in conn.execute(sql + " ORDER BY c.id", args)]
