"""Printed back-of-book indexes in the store: write a book's entries, look terms up.

Entries are matched on ``norm`` (see ``text.normalize_term``), which the caller
computes from user text; it only ever reaches SQL as a bound parameter.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from grimoire_beholder.store.records import NewIndexEntry


class IndexEntryStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def index_exact(self, norms: Collection[str], book_ids: Collection[int] | None
                    ) -> list[IndexRow]: ...
    def chunks_on_pages(self, book_id: int, start: int, end: int,
                        roles: Collection[str]) -> list[int]: ...
    def index_starting_with(self, prefix: str, limit: int, book_ids: Collection[int] | None
                            ) -> list[IndexRow]: ...
    def page_section_rows(self, book_id: int, last: int, first: int
                          ) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class IndexRow:
    """One stored term and locator, with its book."""

    book_id: int
    slug: str
    book: str
    term: str
    parent: str | None
    norm: str
    printed: str | None
    page_start: int | None
    page_end: int | None
    see: str
    spread: float = 0.0


@dataclass(frozen=True)
class PageSection:
    """A section whose page span overlaps a page an index entry points at."""

    chapter_index: int
    section_index: int
    chapter: str
    title: str
    breadcrumb: str
    page_start: int | None
    page_end: int | None
    role: str


def replace_entries(conn: sqlite3.Connection, book_id: int,
                    entries: Iterable[NewIndexEntry]) -> None:
    """A book's index entries, replacing any it had. Call inside a transaction."""
    conn.execute("DELETE FROM index_entries WHERE book_id = ?", (book_id,))
    conn.executemany(
        "INSERT INTO index_entries (book_id, term, parent, norm, printed, page_start, "
        "page_end, see, spread) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(book_id, e.term, e.parent, e.norm, e.printed, e.page_start, e.page_end, e.see,
          e.spread) for e in entries])


_ROW_SQL = ("SELECT e.book_id, b.slug, b.name, e.term, e.parent, e.norm, e.printed, "
            "e.page_start, e.page_end, e.see, e.spread FROM index_entries e "
            "JOIN books b ON b.id = e.book_id ")


def _rows(cursor: Iterable[sqlite3.Row]) -> list[IndexRow]:
    return [IndexRow(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9] or "",
                     float(r[10])) for r in cursor]


def _book_filter(book_ids: Collection[int] | None, args: list[object]) -> str:
    if book_ids is None:
        return ""
    args.append(json.dumps(sorted(int(b) for b in book_ids)))
    return " AND e.book_id IN (SELECT value FROM json_each(?))"


def any_entries(conn: sqlite3.Connection | IndexEntryStore) -> bool:
    """Whether the library holds any printed-index entry (a server: assumed so)."""
    if not isinstance(conn, sqlite3.Connection):
        return True
    return conn.execute("SELECT 1 FROM index_entries LIMIT 1").fetchone() is not None


def exact(conn: sqlite3.Connection | IndexEntryStore, norms: Collection[str],
          book_ids: Collection[int] | None = None) -> list[IndexRow]:
    """Entries whose normalised term is one of ``norms`` (an indexed lookup)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.index_exact(norms, book_ids)
    if not norms:
        return []
    args: list[object] = [json.dumps(sorted(set(norms)))]
    where = "WHERE e.norm IN (SELECT value FROM json_each(?))" + _book_filter(book_ids, args)
    return _rows(conn.execute(_ROW_SQL + where + " ORDER BY b.slug, e.id", args))


def starting_with(conn: sqlite3.Connection | IndexEntryStore, prefix: str, limit: int,
                  book_ids: Collection[int] | None = None) -> list[IndexRow]:
    """Entries whose normalised term starts with ``prefix`` (a range scan on the index)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.index_starting_with(prefix, limit, book_ids)
    args: list[object] = [prefix, prefix + "\U0010ffff"]
    where = "WHERE e.norm >= ? AND e.norm < ?" + _book_filter(book_ids, args)
    args.append(limit)
    return _rows(conn.execute(_ROW_SQL + where + " ORDER BY e.norm, b.slug, e.id LIMIT ?",
                              args))


def sections_on_pages(conn: sqlite3.Connection | IndexEntryStore, book_id: int,
                      spans: Iterable[tuple[int, int]]) -> dict[tuple[int, int],
                                                                list[PageSection]]:
    """For each physical page span, the sections of the book overlapping it, in order."""
    wanted = sorted(set(spans))
    if not wanted:
        return {}
    last, first = max(end for _, end in wanted), min(start for start, _ in wanted)
    rows = conn.page_section_rows(book_id, last, first) if not isinstance(
        conn, sqlite3.Connection) else conn.execute(
        "SELECT s.chapter_index, s.section_index, ch.title, s.title, s.breadcrumb, "
        "s.page_start, s.page_end, s.role FROM sections s "
        "JOIN chapters ch ON ch.id = s.chapter_id WHERE s.book_id = ? "
        "AND s.page_start IS NOT NULL AND s.page_start <= ? AND s.page_end >= ? "
        "ORDER BY s.chapter_index, s.section_index", (book_id, last, first)).fetchall()
    sections = [PageSection(*r) for r in rows]
    return {(start, end): [s for s in sections
                           if s.page_start is not None and s.page_end is not None
                           and s.page_start <= end and s.page_end >= start]
            for start, end in wanted}


def chunks_on_pages(conn: sqlite3.Connection | IndexEntryStore, book_id: int, start: int, end: int,
                    roles: Collection[str] = ("body",)) -> list[int]:
    """Ids of a book's chunks overlapping a physical page span, in sections of ``roles``."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chunks_on_pages(book_id, start, end, roles)
    rows = conn.execute(
        "SELECT c.id FROM chunks c JOIN sections s ON s.id = c.section_id "
        "WHERE c.book_id = ? AND c.page_start <= ? AND c.page_end >= ? "
        "AND s.role IN (SELECT value FROM json_each(?))",
        (book_id, end, start, json.dumps(sorted(roles))))
    return [int(r[0]) for r in rows]
