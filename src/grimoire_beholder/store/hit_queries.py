"""The read side of search: filter resolution, FTS5 MATCH queries, hit metadata.

Every query here takes user-derived values only as bound parameters. The FTS5 ``MATCH``
expressions come from ``search.keyword``, which builds them from sanitised, double-quoted
tokens; this module never looks inside them. Lists of ids travel as one JSON parameter
(``IN (SELECT value FROM json_each(?))``) so no SQL text depends on their length.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from grimoire_beholder.errors import BookNotFoundError, GrimoireError
from grimoire_beholder.naming import near_labels, parse_book_ref
from grimoire_beholder.store import filter_misses
from grimoire_beholder.store.book_rows import not_found
from grimoire_beholder.store.db import ids_param
from grimoire_beholder.store.records import SectionPlace, filled
from grimoire_beholder.store.source_rows import SourceStore

if TYPE_CHECKING:
    from grimoire_beholder.store.records import CandidateFacts

# Mirrors the CHECK constraint on books.source_type (schema.sql, widened by migration 6).
SOURCE_TYPES: tuple[str, ...] = ("pdf", "epub", "markdown", "text", "html", "docx")

# bm25() column weights of chunks_fts, in column order: text, context, section, chapter, book.
# The chunk text is the evidence (1.0); the generated context restates it in other words
# (0.5). Titles are short (BM25's length normalisation already favours short fields) and
# they stack: the section breadcrumb repeats the chapter title, and the book title is in
# every chunk of the book. At 0.3 + 0.2 + 0.1 a term found only in all three titles still
# ranks below the same term in the text, so titles act as tie-breakers and topic hints.
WORD_WEIGHTS: tuple[float, float, float, float, float] = (1.0, 0.5, 0.3, 0.2, 0.1)


class HitStore(SourceStore, Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def change_token(self) -> tuple[int, int]: ...
    def library_state(self) -> tuple[int, bool]: ...
    def partly_searchable(self) -> list[Unfinished]: ...
    def chunk_positions(self, chunk_ids: Iterable[int]) -> dict[int, ChunkPosition]: ...
    def hit_rows(self, chunk_ids: Iterable[int]) -> dict[int, HitRow]: ...
    def word_match(self, tokens: list[str], limit: int, book_ids: Collection[int] | None,
                   chunk_ids: Collection[int] | None) -> list[tuple[int, float]]: ...
    def book_filter_rows(self) -> list[tuple[Any, ...]]: ...
    def not_found(self, key: int | str) -> BookNotFoundError: ...
    def snapshot(self) -> AbstractContextManager[object]: ...


class ChunkHead(NamedTuple):
    """What a hit row shows of a chunk beside its candidate facts (read with its passage:
    ``text_spans.passage_reads``)."""

    chapter: str
    section: str  # the section's breadcrumb
    context: str | None


class ChunkPosition(NamedTuple):
    """Where a chunk sits: its book, chapter, section and place in the section."""

    book_id: int
    chapter_index: int
    section_index: int
    chunk_index: int


@dataclass(frozen=True, kw_only=True)
class HitRow(SectionPlace):
    """Everything a search hit shows about one chunk and its book."""

    chunk_id: int
    page_labels: dict[int, str]
    chunk_index: int
    page_start: int | None
    page_end: int | None
    line_start: int | None
    line_end: int | None
    text: str
    context: str | None
    source_root: str | None = None
    group: str = ""
    role: str = "body"  # the section's role (structure.roles.ROLES)
    link: str | None = None  # opens the book in Calibre or Zotero (store/source_rows.py)


@contextmanager
def snapshot(conn: sqlite3.Connection | HitStore) -> Iterator[object]:
    """Run several reads against one consistent snapshot (a deferred read transaction).

    Inside a caller's transaction the reads already share one view, so nothing is started.
    """
    if not isinstance(conn, sqlite3.Connection):
        with conn.snapshot():
            yield conn
        return
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def change_token(conn: sqlite3.Connection | HitStore) -> tuple[int, int]:
    """A free "did anything change?" token: (PRAGMA data_version, this connection's changes).

    ``data_version`` moves when another connection commits; ``total_changes`` when this one
    writes. Equal tokens mean the database is unchanged as seen from ``conn``.
    """
    if not isinstance(conn, sqlite3.Connection):
        return conn.change_token()
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    return version, int(conn.total_changes)


def library_state(conn: sqlite3.Connection | HitStore) -> tuple[int, bool]:
    """(number of books, whether any chunk is embedded — hence searchable)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.library_state()
    books = int(conn.execute("SELECT count(*) FROM books").fetchone()[0])
    searchable = conn.execute(
        "SELECT 1 FROM chunks WHERE status = 'embedded' LIMIT 1").fetchone() is not None
    return books, searchable


class Unfinished(NamedTuple):
    """A book with chunks not yet embedded (an ingest stopped or still running): searches
    find only its ``embedded`` chunks of ``chunks``."""

    book_id: int
    slug: str
    embedded: int
    chunks: int


# Books with a chunk not embedded, and their counts: read from the (status, book_id) index
# alone, so a complete library's answer is one empty index range (PostgreSQL runs it too).
UNFINISHED_SQL = """SELECT c.book_id, b.slug, count(*) FILTER (WHERE c.status = 'embedded'),
                           count(*)
                    FROM chunks c JOIN books b ON b.id = c.book_id
                    WHERE c.status IN ('pending', 'contextualized', 'embedded')
                      AND c.book_id IN (SELECT book_id FROM chunks
                                        WHERE status IN ('pending', 'contextualized'))
                    GROUP BY c.book_id, b.slug ORDER BY b.slug"""


def partly_searchable(conn: sqlite3.Connection | HitStore) -> list[Unfinished]:
    """Every book with chunks searches do not see yet, by slug."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.partly_searchable()
    return [Unfinished(int(r[0]), r[1], int(r[2]), int(r[3]))
            for r in conn.execute(UNFINISHED_SQL)]


def _path_matches(prefix: str, source_path: str, root: str | None) -> bool:
    """Plain string prefix of the absolute source path, or of the path relative to the
    folder root it was ingested from (with "/" separators)."""
    if source_path.startswith(prefix) or source_path.startswith(
            os.path.normpath(os.path.expanduser(prefix))):
        return True
    if root and source_path.startswith(root.rstrip(os.sep) + os.sep):
        relative = Path(os.path.relpath(source_path, root)).as_posix()
        return relative.startswith(prefix.removeprefix("./"))
    return False


def resolve_books(conn: sqlite3.Connection | HitStore, book: str | int | None = None,
                  author: str | None = None, source_type: str | None = None, *,
                  group: str | None = None, path_prefix: str | None = None,
                  labels: Mapping[str, str | None] | None = None) -> list[int] | None:
    """The ids of books passing every given filter, or None when no filter is given.

    ``book`` is a book id or slug, read by ``naming.parse_book_ref`` (an int is an id, never
    a slug); unknown → BookNotFoundError naming known slugs.
    ``author`` matches a case-insensitive substring of the author (``casefold``, so it
    works beyond ASCII): "tolkien" finds "J. R. R. Tolkien". ``source_type`` must be one of
    SOURCE_TYPES. ``group`` is the exact top-level folder under an ingested root ("" for
    files directly in a root). ``path_prefix`` is a plain string prefix (not a glob, no
    component rule: "notes" also matches "notes-old/"; end it with "/" to mean a folder)
    of either the absolute source path or the path relative to the book's root, e.g.
    "/home/me/wiki/ops/" or "ops/". ``labels`` maps "tag", "collection" or "series" to a
    value a book from a Calibre or Zotero library must carry (case-insensitive; one no
    book carries is a GrimoireError naming those that exist). A filter that no book of
    the library passes — an author, type, group or path prefix found nowhere — is a
    GrimoireError too, naming what it probably meant or what there is
    (``filter_misses.py``). Filters compose with AND; the result may be empty (each
    matches some book, none all of them).
    """
    wanted = {k: v for k, v in (labels or {}).items() if v is not None}
    if (book is None and author is None and source_type is None and group is None
            and path_prefix is None and not wanted):
        return None
    rows = conn.book_filter_rows() if not isinstance(conn, sqlite3.Connection) else (
        conn.execute("SELECT id, slug, author, source_type, source_path, source_root, "
                     "source_group FROM books").fetchall())
    candidates = {int(r[0]) for r in rows}

    def keep(matched: set[int], miss: Callable[[], GrimoireError]) -> None:
        """Narrow to ``matched``; a filter no book passes is ``miss()`` (when books exist:
        an empty library is said so by the search)."""
        nonlocal candidates
        if rows and not matched:
            raise miss()
        candidates &= matched

    if book is not None:
        key = parse_book_ref(book)
        named = {int(r[0]) for r in rows if (r[0] if isinstance(key, int) else r[1]) == key}
        if not named:
            raise (not_found(conn, key) if isinstance(conn, sqlite3.Connection)
                   else conn.not_found(key))
        candidates &= named
    if author is not None:
        needle = author.strip().casefold()
        keep({int(r[0]) for r in rows if needle in (r[2] or "").casefold()},
             lambda: filter_misses.no_author(author, rows))
    if source_type is not None:
        kind = source_type.strip().lower()
        if kind not in SOURCE_TYPES:
            raise GrimoireError(
                f"unknown source_type {source_type!r}; use one of {', '.join(SOURCE_TYPES)}"
            )
        keep({int(r[0]) for r in rows if r[3] == kind},
             lambda: filter_misses.no_source_type(kind, rows))
    if group is not None:
        wanted_group = group.strip().strip("/")
        keep({int(r[0]) for r in rows if (r[6] or "") == wanted_group},
             lambda: filter_misses.no_group(wanted_group, rows))
    if path_prefix is not None and path_prefix.strip():
        prefix = path_prefix.strip()
        keep({int(r[0]) for r in rows if _path_matches(prefix, r[4], r[5])},
             lambda: filter_misses.no_path(prefix, rows))
    for kind, value in wanted.items():
        candidates &= _labelled(conn, kind, value)
    return sorted(candidates)


def _labelled(conn: sqlite3.Connection | SourceStore, kind: str, value: str) -> set[int]:
    from grimoire_beholder.store.source_rows import LABEL_KINDS, books_labelled, label_values

    if kind not in LABEL_KINDS:
        raise GrimoireError(f"unknown label {kind!r}; use one of {', '.join(LABEL_KINDS)}")
    found = books_labelled(conn, kind, value)
    if not found:
        known = label_values(conn, kind)
        close = near_labels(value, known)
        shown = ", ".join(known[:20]) + (" …" if len(known) > 20 else "")
        raise GrimoireError(f"no book has the {kind} {value.strip()!r}; "
                            + (f"did you mean: {', '.join(close)}" if close else
                               f"{kind}s in this library: {shown}" if known else
                               f"no book in this library has a {kind} (they come from "
                               "Calibre and Zotero libraries)"))
    return found


def _plain_tokens(expression: str) -> list[str] | None:
    """The tokens of ``"a" OR "b" OR …`` (as ``search.keyword`` writes it), else None (a
    prefix query, which a server engine does not answer)."""
    tokens = []
    for part in expression.split(" OR "):
        inner = part[1:-1] if len(part) >= 2 and part[0] == part[-1] == '"' else None
        if inner is None or '"' in inner:
            return None
        tokens.append(inner)
    return tokens


def _book_clause(conn: sqlite3.Connection, book_ids: Collection[int] | None,
                 args: list[object], chunk_ids: Collection[int] | None = None) -> str:
    """The JOIN and WHERE text restricting an FTS5 match to ``book_ids`` (None: no filter).

    Without a filter there is no join at all: joining every match to ``chunks`` reads the
    chunk rows (text included) and doubled the keyword arm's cost at 100k chunks. With one,
    the allowed books' chunk-id span is added as an FTS5 ``rowid`` range, which FTS5 uses to
    skip the rest of each posting list: a book's chunks are inserted together, so one
    book's span is small, and a one-book filter on a common word went from 52 to 2.5 CPU-ms
    at 100k chunks (bench/scale.py). The join on ``book_id`` stays as the exact test.
    ``chunk_ids`` (a reading position) is one more exact test, with its own id span.
    """
    if chunk_ids is not None:
        ids = ids_param(chunk_ids)
        args.extend([ids, min(chunk_ids, default=0), max(chunk_ids, default=-1)])
        return (" JOIN chunks c ON c.id = f.rowid WHERE {table} MATCH ?"
                " AND c.id IN (SELECT value FROM json_each(?)) AND f.rowid BETWEEN ? AND ?")
    if book_ids is None:
        return ""
    ids = ids_param(book_ids)
    low, high = conn.execute(
        "SELECT min(id), max(id) FROM chunks WHERE book_id IN (SELECT value FROM json_each(?))",
        (ids,),
    ).fetchone()
    args.extend([ids, low if low is not None else 0, high if high is not None else -1])
    return (" JOIN chunks c ON c.id = f.rowid WHERE {table} MATCH ?"
            " AND c.book_id IN (SELECT value FROM json_each(?)) AND f.rowid BETWEEN ? AND ?")


def _ranked(conn: sqlite3.Connection, table: str, weights: tuple[float, ...],
            expression: str, limit: int, book_ids: Collection[int] | None,
            chunk_ids: Collection[int] | None = None) -> list[tuple[int, float]]:
    """(chunk id, bm25) from one FTS5 table, best first. ``table`` is one of our two fixed
    names, never user text; the expression, weights and filter are bound parameters.
    ``chunk_ids`` is a subset of ``book_ids``' chunks (a reading position)."""
    args: list[object] = [*weights, expression]
    clause = _book_clause(conn, book_ids, args, chunk_ids) or " WHERE {table} MATCH ?"
    args.append(limit)
    marks = ", ".join("?" * len(weights))
    rows = conn.execute(
        f"SELECT f.rowid, bm25({table}{', ' + marks if marks else ''}) AS score FROM {table} f"
        + clause.format(table=table) + " ORDER BY score, f.rowid LIMIT ?",
        args,
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def word_match(conn: sqlite3.Connection | HitStore, expression: str, limit: int,
               book_ids: Collection[int] | None = None,
               chunk_ids: Collection[int] | None = None) -> list[tuple[int, float]]:
    """(chunk id, bm25) from the word index, best first; bm25 is negative, lower is better.

    The book filter is part of the query, so ``limit`` rows come from the allowed books.
    """
    if not isinstance(conn, sqlite3.Connection):
        tokens = _plain_tokens(expression)
        return [] if tokens is None else conn.word_match(tokens, limit, book_ids, chunk_ids)
    return _ranked(conn, "chunks_fts", tuple(WORD_WEIGHTS), expression, limit, book_ids,
                   chunk_ids)


def trigram_match(conn: sqlite3.Connection | HitStore, expression: str, limit: int,
                  book_ids: Collection[int] | None = None,
                  chunk_ids: Collection[int] | None = None) -> list[tuple[int, float]]:
    """(chunk id, bm25) from the trigram index, best first (see :func:`word_match`)."""
    if not isinstance(conn, sqlite3.Connection):
        return []  # no trigram table there: the vector arm covers such text
    return _ranked(conn, "chunks_fts_trigram", (), expression, limit, book_ids, chunk_ids)


def chunk_positions(conn: sqlite3.Connection | HitStore, chunk_ids: Iterable[int]
                    ) -> dict[int, ChunkPosition]:
    """Positions of these chunks (missing ids — e.g. deleted meanwhile — are left out)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chunk_positions(chunk_ids)
    rows = conn.execute(
        "SELECT id, book_id, chapter_index, section_index, chunk_index FROM chunks "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (ids_param(chunk_ids),),
    ).fetchall()
    return {int(r[0]): ChunkPosition(r[1], r[2], r[3], r[4]) for r in rows}


class BookFacts(NamedTuple):
    """What a hit row shows of its book (``hit_rows`` reads them once per book and keeps
    them in the caller's dict for as long as the caller knows the library unchanged)."""

    slug: str
    name: str
    author: str | None
    source_type: str
    source_path: str
    page_labels: dict[int, str]
    source_root: str | None
    group: str
    link: str | None


def _book_facts(conn: sqlite3.Connection, book_ids: Collection[int]) -> dict[int, BookFacts]:
    rows = conn.execute(
        "SELECT b.id, b.slug, b.name, b.author, b.source_type, b.source_path, b.page_labels, "
        "b.source_root, b.source_group, o.link FROM books b "
        "LEFT JOIN book_sources o ON o.book_id = b.id "
        "WHERE b.id IN (SELECT value FROM json_each(?))", (ids_param(book_ids),)).fetchall()
    return {int(r[0]): BookFacts(r[1], r[2], r[3], r[4], r[5], {
        int(k): str(v) for k, v in json.loads(r[6] or "{}").items()}, r[7], r[8] or "", r[9])
        for r in rows}


def hit_rows(conn: sqlite3.Connection | HitStore, chunk_ids: Iterable[int],
             books: dict[int, BookFacts] | None = None,
             facts: Mapping[int, CandidateFacts] | None = None,
             heads: Mapping[int, ChunkHead] | None = None) -> dict[int, HitRow]:
    """Full hit metadata of these chunks, keyed by chunk id (missing ids are left out).

    ``books`` holds the facts of books already read (a SQLite library only): the chunks'
    other books are read and added to it, and those in it are not read again — so the
    caller must clear it whenever the library may have changed (the search engine does at
    every change token). ``facts`` holds what ``text_spans.candidate_facts`` read of
    chunks in the same snapshot: when every chunk is in it, only their chapter titles,
    breadcrumbs and contexts are read, and nothing when ``heads`` holds those of every
    chunk (read in the same snapshot). A server engine reads every row whole."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.hit_rows(chunk_ids)
    ids = list(chunk_ids)
    rows: list[Any]
    if facts is not None and heads is not None and all(
            i in facts and i in heads for i in ids):
        rows = []
        for i in ids:
            known_chunk, head = facts[i], heads[i]
            span = known_chunk.span
            rows.append((i, span.book_id, span.chapter_index, head.chapter, span.section_index,
                         head.section, known_chunk.chunk_index, span.page_start, span.page_end,
                         span.line_start, span.line_end, known_chunk.text, head.context,
                         known_chunk.role))
    elif facts is not None and all(i in facts for i in ids):
        rows = []
        for r in conn.execute(
                "SELECT c.id, ch.title, s.breadcrumb, c.context FROM chunks c "
                "JOIN sections s ON s.id = c.section_id "
                "JOIN chapters ch ON ch.id = s.chapter_id "
                "WHERE c.id IN (SELECT value FROM json_each(?))", (ids_param(ids),)):
            known_chunk = facts[r[0]]
            span = known_chunk.span
            rows.append((r[0], span.book_id, span.chapter_index, r[1], span.section_index,
                         r[2], known_chunk.chunk_index, span.page_start, span.page_end,
                         span.line_start, span.line_end, known_chunk.text, r[3],
                         known_chunk.role))
    else:
        rows = conn.execute(
            """SELECT c.id, c.book_id, c.chapter_index, ch.title, c.section_index, s.breadcrumb,
                      c.chunk_index, c.page_start, c.page_end, c.line_start, c.line_end, c.text,
                      c.context, r.role
               FROM chunks c
               JOIN sections s ON s.id = c.section_id
               JOIN sections r INDEXED BY sections_role ON r.id = c.section_id
               JOIN chapters ch ON ch.id = s.chapter_id
               WHERE c.id IN (SELECT value FROM json_each(?))""",
            (ids_param(ids),),
        ).fetchall()
    known = {} if books is None else books
    missing = {int(r[1]) for r in rows} - known.keys()
    if missing:
        known.update(_book_facts(conn, missing))
    out: dict[int, HitRow] = {}
    for r in rows:
        book = known.get(r[1])
        if book is None:  # no such book row (the foreign key forbids it; a join dropped it)
            continue
        out[r[0]] = filled(HitRow, {
            "book_id": r[1], "slug": book.slug, "book": book.name, "author": book.author,
            "source_type": book.source_type, "source_path": book.source_path,
            "chapter_index": r[2], "chapter": r[3], "section_index": r[4], "section": r[5],
            "chunk_id": r[0], "page_labels": book.page_labels, "chunk_index": r[6],
            "page_start": r[7], "page_end": r[8], "line_start": r[9], "line_end": r[10],
            "text": r[11], "context": r[12] or None, "source_root": book.source_root,
            "group": book.group, "role": r[13], "link": book.link})
    return out
