"""Reads of chunk spans and section text for quotation checks, passages and health checks:
chunk spans, slices of section text, whole sections of one book, chapter titles.

All values arrive as bound parameters; id lists travel as one JSON parameter.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from grimoire_beholder.store.db import ids_param
from grimoire_beholder.store.hit_queries import ChunkHead, ChunkPosition
from grimoire_beholder.store.records import CandidateFacts, ChunkSpan
from grimoire_beholder.store.role_rows import RoleStore


class SpanStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def chunk_spans(self, chunk_ids: Iterable[int]) -> dict[int, ChunkSpan]: ...
    def section_spans(self, book_id: int, chapter_index: int, section_index: int
                      ) -> list[ChunkSpan]: ...
    def section_slice(self, book_id: int, chapter_index: int, section_index: int,
                      start: int, end: int) -> str: ...
    def section_head(self, book_id: int, chapter_index: int, section_index: int
                     ) -> SectionHead | None: ...
    def book_sections(self, book_id: int) -> list[tuple[SectionHead, str, int, str]]: ...
    def book_spans(self, book_id: int) -> list[tuple[ChunkSpan, str]]: ...


class FactStore(SpanStore, RoleStore, Protocol):
    """What a server engine answers for :func:`candidate_facts`."""

    def chunk_positions(self, chunk_ids: Iterable[int]) -> dict[int, ChunkPosition]: ...


@dataclass(frozen=True)
class SectionHead:
    """A section's place and titles, without its text."""

    book_id: int
    chapter_index: int
    section_index: int
    chapter: str
    title: str
    breadcrumb: str
    length: int  # characters of text


_SPAN_COLUMNS = ("c.id, c.book_id, c.chapter_index, c.section_index, c.char_start, c.char_end, "
                 "c.page_start, c.page_end, c.line_start, c.line_end")


def _span(row: sqlite3.Row | tuple[object, ...]) -> ChunkSpan:
    return ChunkSpan(*row)


def chunk_spans(conn: sqlite3.Connection | SpanStore, chunk_ids: Iterable[int]
                ) -> dict[int, ChunkSpan]:
    """The spans of these chunks, keyed by id (missing ids are left out)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chunk_spans(chunk_ids)
    rows = conn.execute(f"SELECT {_SPAN_COLUMNS} FROM chunks c "
                        "WHERE c.id IN (SELECT value FROM json_each(?))",
                        (ids_param(chunk_ids),)).fetchall()
    return {int(r[0]): _span(tuple(r)) for r in rows}


def candidate_facts(conn: sqlite3.Connection | FactStore, chunk_ids: Iterable[int]
                    ) -> dict[int, CandidateFacts]:
    """The facts of these chunks, keyed by id (missing ids are left out), in one read.

    The role comes from the covering index ``sections_role`` (in the row it is stored
    after the section's whole text, which SQLite would read through for every chunk)."""
    ids = [int(i) for i in chunk_ids]
    if not isinstance(conn, sqlite3.Connection):
        texts, spans = conn.roles_and_texts(ids), conn.chunk_spans(ids)
        places = conn.chunk_positions(ids)
        return {i: CandidateFacts(texts[i][0], texts[i][1], spans[i], places[i].chunk_index)
                for i in ids if i in texts and i in spans and i in places}
    rows = conn.execute(
        f"SELECT {_SPAN_COLUMNS}, c.chunk_index, s.role, c.text FROM chunks c "
        "JOIN sections s INDEXED BY sections_role ON s.id = c.section_id "
        "WHERE c.id IN (SELECT value FROM json_each(?))", (ids_param(ids),)).fetchall()
    return {int(r[0]): CandidateFacts(r[11], r[12], ChunkSpan(*r[:10]), r[10]) for r in rows}


Section = tuple[int, int, int]  # (book id, chapter index, section index)


def _wanted(rows: Sequence[tuple[int, ...]]) -> tuple[str, list[int]]:
    """A ``w(k, b, ch, s, lo, hi, id)`` table of bound integers, one row per wanted
    (section, two numbers, chunk id), ``k`` its index; and its parameters. Bound, not
    parsed from JSON row by row: the (book_id, chapter_index, section_index) index serves
    each row (one cached statement per number of rows)."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(rows))
    return (f"WITH w(k, b, ch, s, lo, hi, id) AS (VALUES {values}) ",
            [int(v) for n, row in enumerate(rows) for v in (n, *row)])


def passage_reads(conn: sqlite3.Connection | SpanStore,
                  wanted: Sequence[tuple[Section, int, int, int]]
                  ) -> list[tuple[str, list[ChunkSpan], ChunkHead | None]]:
    """For each (section, start, end, chunk id): characters ``[start, end)`` of the
    section's text (as :func:`section_slice`), the spans of the section's chunks
    overlapping them, in order, and the chunk's chapter title, breadcrumb and context
    (what its hit row shows beside the candidate facts; None from a server engine) — all
    in one read."""
    if not isinstance(conn, sqlite3.Connection):
        return [(conn.section_slice(*key, start, end),
                 [s for s in conn.section_spans(*key) if s.char_start < end and s.char_end > start],
                 None)
                for key, start, end, _ in wanted]
    if not wanted:
        return []
    table, args = _wanted([(*key, start, end, chunk) for key, start, end, chunk in wanted])
    # One compound statement: a slice row has no chunk index (-1), its text where a span
    # row has its chunk id, and the chunk's heads in the next three columns.
    rows = conn.execute(
        f"{table}SELECT w.k, -1, substr(s.text, max(w.lo, 0) + 1, max(w.hi - max(w.lo, 0), 0)), "
        "ch.title, s.breadcrumb, (SELECT c.context FROM chunks c WHERE c.id = w.id), "
        "NULL, NULL, NULL, NULL, NULL, NULL FROM w JOIN sections s "
        "ON s.book_id = w.b AND s.chapter_index = w.ch AND s.section_index = w.s "
        "JOIN chapters ch ON ch.id = s.chapter_id "
        f"UNION ALL SELECT w.k, c.chunk_index, {_SPAN_COLUMNS} FROM w JOIN chunks c "
        "ON c.book_id = w.b AND c.chapter_index = w.ch AND c.section_index = w.s "
        "AND c.char_start < w.hi AND c.char_end > w.lo ORDER BY 1, 2", args).fetchall()
    out: list[tuple[str, list[ChunkSpan], ChunkHead | None]] = [("", [], None) for _ in wanted]
    for r in rows:
        if r[1] < 0:
            out[r[0]] = (str(r[2]), out[r[0]][1], ChunkHead(r[3], r[4], r[5]))
        else:
            out[r[0]][1].append(ChunkSpan(*r[2:]))
    return out


def section_spans(conn: sqlite3.Connection | SpanStore, book_id: int, chapter_index: int,
                  section_index: int) -> list[ChunkSpan]:
    """Every chunk span of one section, in order."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.section_spans(book_id, chapter_index, section_index)
    rows = conn.execute(
        f"SELECT {_SPAN_COLUMNS} FROM chunks c WHERE c.book_id = ? AND c.chapter_index = ? "
        "AND c.section_index = ? ORDER BY c.chunk_index",
        (book_id, chapter_index, section_index)).fetchall()
    return [_span(tuple(r)) for r in rows]


def section_slice(conn: sqlite3.Connection | SpanStore, book_id: int, chapter_index: int,
                  section_index: int, start: int, end: int) -> str:
    """Characters ``[start, end)`` of a section's text, without reading the rest of it."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.section_slice(book_id, chapter_index, section_index, start, end)
    row = conn.execute(
        "SELECT substr(text, ?, ?) FROM sections WHERE book_id = ? AND chapter_index = ? "
        "AND section_index = ?",
        (max(start, 0) + 1, max(end - max(start, 0), 0), book_id, chapter_index,
         section_index)).fetchone()
    return str(row[0]) if row else ""


def section_head(conn: sqlite3.Connection | SpanStore, book_id: int, chapter_index: int,
                 section_index: int) -> SectionHead | None:
    if not isinstance(conn, sqlite3.Connection):
        return conn.section_head(book_id, chapter_index, section_index)
    row = conn.execute(
        "SELECT s.book_id, s.chapter_index, s.section_index, ch.title, s.title, s.breadcrumb, "
        "length(s.text) FROM sections s JOIN chapters ch ON ch.id = s.chapter_id "
        "WHERE s.book_id = ? AND s.chapter_index = ? AND s.section_index = ?",
        (book_id, chapter_index, section_index)).fetchone()
    return SectionHead(*tuple(row)) if row else None


def book_sections(conn: sqlite3.Connection | SpanStore, book_id: int
                  ) -> Iterator[tuple[SectionHead, str, int, str]]:
    """(head, text, approx_tokens, role) of every section of a book, in reading order."""
    if not isinstance(conn, sqlite3.Connection):
        yield from conn.book_sections(book_id)
        return
    cursor = conn.execute(
        "SELECT s.book_id, s.chapter_index, s.section_index, ch.title, s.title, s.breadcrumb, "
        "length(s.text), s.text, s.approx_tokens, s.role FROM sections s "
        "JOIN chapters ch ON ch.id = s.chapter_id WHERE s.book_id = ? "
        "ORDER BY s.chapter_index, s.section_index", (book_id,))
    for row in cursor:
        yield SectionHead(*tuple(row)[:7]), str(row[7]), int(row[8]), str(row[9])


def book_spans(conn: sqlite3.Connection | SpanStore, book_id: int
               ) -> list[tuple[ChunkSpan, str]]:
    """Every chunk span of a book with its status, in reading order."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.book_spans(book_id)
    rows = conn.execute(
        f"SELECT {_SPAN_COLUMNS}, c.status FROM chunks c WHERE c.book_id = ? "
        "ORDER BY c.chapter_index, c.section_index, c.chunk_index", (book_id,)).fetchall()
    return [(_span(tuple(r)[:10]), str(r[10])) for r in rows]
