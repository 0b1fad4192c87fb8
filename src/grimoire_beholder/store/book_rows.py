"""Books and their structure: insert a parsed book whole, list, find, outline, delete."""

from __future__ import annotations

import json
import sqlite3
from typing import Protocol

from grimoire_beholder.errors import BookNotFoundError
from grimoire_beholder.naming import check_section_exists, no_such_book
from grimoire_beholder.store import fts, index_entries, vectors
from grimoire_beholder.store.records import BookRow, NewBook, SectionRow


class BookStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def list_books(self) -> list[BookRow]: ...
    def find_book(self, key: int | str) -> BookRow | None: ...
    def not_found(self, key: int | str) -> BookNotFoundError: ...
    def find_book_by_hash(self, source_hash: str) -> BookRow | None: ...
    def delete_book(self, book_id: int) -> None: ...
    def outline(self, book_id: int) -> list[tuple[int, str, int | None, int | None,
                                                  list[SectionRow]]]: ...
    def section_of(self, book: BookRow, chapter_index: int, section_index: int
                   ) -> SectionRow: ...
    def insert_book(self, book: NewBook, book_id: int | None = None) -> int: ...
    def books_of_file(self, source_path: str) -> list[BookRow]: ...
    def books_with_hash(self, source_hash: str) -> list[BookRow]: ...
    def slugs(self) -> set[str]: ...
    def relocate_book(self, book_id: int, *, source_path: str, source_mtime: float,
                      source_root: str | None, source_group: str) -> None: ...


_BOOK_COLUMNS = (
    "id, slug, name, author, source_type, source_path, source_hash, source_size, "
    "source_mtime, page_count, line_count, page_labels, added_at, updated_at, source_root, "
    "source_group"
)


def insert_book(conn: sqlite3.Connection | BookStore, book: NewBook,
                book_id: int | None = None) -> int:
    """Write a book with all its chapters, sections and (pending) chunks; return its id.

    Call inside a transaction: the book appears whole or not at all. ``book_id`` reuses the
    id of a book deleted in the same transaction (sync replaces a changed file in place);
    otherwise the book gets an id no book ever had (see ``_new_book_id``).
    """
    if not isinstance(conn, sqlite3.Connection):
        return conn.insert_book(book, book_id)
    if book_id is None:
        book_id = _new_book_id(conn)
    cur = conn.execute(
        """INSERT INTO books (id, slug, name, author, source_type, source_path, source_hash,
                              source_size, source_mtime, page_count, line_count, page_labels,
                              source_root, source_group)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (book_id, book.slug, book.name, book.author, book.source_type, book.source_path,
         book.source_hash, book.source_size, book.source_mtime, book.page_count,
         book.line_count, json.dumps({str(k): v for k, v in book.page_labels.items()}),
         book.source_root, book.source_group),
    )
    book_id = int(cur.lastrowid or 0)
    for ci, chapter in enumerate(book.chapters):
        ch_id = conn.execute(
            "INSERT INTO chapters (book_id, chapter_index, title, page_start, page_end) "
            "VALUES (?, ?, ?, ?, ?)",
            (book_id, ci, chapter.title, chapter.page_start, chapter.page_end),
        ).lastrowid
        for si, sec in enumerate(chapter.sections):
            sec_id = conn.execute(
                """INSERT INTO sections (book_id, chapter_id, chapter_index, section_index,
                       title, breadcrumb, text, approx_tokens, page_start, page_end,
                       line_start, line_end, role, hints)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (book_id, ch_id, ci, si, sec.title, sec.breadcrumb, sec.text,
                 sec.approx_tokens, sec.page_start, sec.page_end, sec.line_start,
                 sec.line_end, sec.role, " ".join(sorted(sec.hints))),
            ).lastrowid
            conn.executemany(
                """INSERT INTO chunks (book_id, section_id, chapter_index, section_index,
                       chunk_index, text, char_start, char_end, approx_tokens, page_start,
                       page_end, line_start, line_end, content_hash)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [(book_id, sec_id, ci, si, k, c.text, c.char_start, c.char_end,
                  c.approx_tokens, c.page_start, c.page_end, c.line_start, c.line_end,
                  c.content_hash) for k, c in enumerate(sec.chunks)],
            )
    index_entries.replace_entries(conn, book_id, book.index_entries)
    return book_id


_LAST_ID_KEY = "last_book_id"


def _new_book_id(conn: sqlite3.Connection) -> int:
    """One more than any id a book ever had: SQLite alone would give a deleted book's id
    to the next book, and an id an assistant kept from a search would then name another
    book. The high-water mark lives in ``library_meta`` (set by migration 3)."""
    (book_id,) = conn.execute(
        "SELECT max(coalesce((SELECT max(id) FROM books), 0), coalesce((SELECT CAST(value AS "
        "INTEGER) FROM library_meta WHERE key = ?), 0)) + 1", (_LAST_ID_KEY,)).fetchone()
    conn.execute("INSERT INTO library_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO "
                 "UPDATE SET value = excluded.value", (_LAST_ID_KEY, str(book_id)))
    return int(book_id)


def _book_from_row(row: sqlite3.Row) -> BookRow:
    labels = {int(k): v for k, v in json.loads(row["page_labels"] or "{}").items()}
    return BookRow(
        id=row["id"], slug=row["slug"], name=row["name"], author=row["author"],
        source_type=row["source_type"], source_path=row["source_path"],
        source_hash=row["source_hash"], source_size=row["source_size"],
        source_mtime=row["source_mtime"], page_count=row["page_count"],
        line_count=row["line_count"], page_labels=labels, added_at=row["added_at"],
        updated_at=row["updated_at"], source_root=row["source_root"],
        source_group=row["source_group"] or "",
    )


_COUNT_QUERIES = (
    ("chapters", "SELECT book_id, count(*), 0 FROM chapters {where} GROUP BY book_id"),
    ("sections", "SELECT book_id, count(*), sum(approx_tokens) FROM sections {where} "
                 "GROUP BY book_id"),
    ("roles", "SELECT book_id, role, count(*) FROM sections {where} GROUP BY book_id, role"),
    ("chunks", "SELECT book_id, status, count(*) FROM chunks {where} GROUP BY book_id, status"),
)


def _fill_counts(conn: sqlite3.Connection, books: list[BookRow],
                 one_book: bool = False) -> list[BookRow]:
    """Chapter/section/chunk counts per book. ``one_book``: count only ``books[0]``'s rows
    through the ``book_id`` indexes — naming one book (a search filter, an outline) must not
    scan a million-chunk library."""
    by_id = {b.id: b for b in books}
    if not by_id:
        return books
    where, params = ("WHERE book_id = ?", (books[0].id,)) if one_book else ("", ())
    # Counts and short columns only: reading section text would make `list` cost grow with the
    # size of the whole library.
    for kind, sql in _COUNT_QUERIES:
        for book_id, a, b in conn.execute(sql.format(where=where), params):
            book = by_id.get(book_id)
            if book is None:
                continue
            if kind == "chapters":
                book.chapters = a
            elif kind == "sections":
                book.sections, book.approx_tokens = a, b or 0
            elif kind == "roles":
                book.roles[a] = b
            else:
                book.status[a] = b
                book.chunks += b
    for book in books:
        for status in ("pending", "contextualized", "embedded"):
            book.status.setdefault(status, 0)
    return books


def list_books(conn: sqlite3.Connection | BookStore) -> list[BookRow]:
    """Every book with its chapter/section/chunk counts, in slug order."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.list_books()
    rows = conn.execute(f"SELECT {_BOOK_COLUMNS} FROM books ORDER BY slug").fetchall()
    return _fill_counts(conn, [_book_from_row(r) for r in rows])


def find_book(conn: sqlite3.Connection | BookStore, key: int | str) -> BookRow | None:
    """The book with this id (an int) or this slug (a str), exactly: a str is never read as
    an id here (``naming.parse_book_ref`` turns what a user typed into one or the other)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.find_book(key)
    column = "id" if isinstance(key, int) else "slug"
    row = conn.execute(f"SELECT {_BOOK_COLUMNS} FROM books WHERE {column} = ?",
                       (key,)).fetchone()
    if row is None:
        return None
    return _fill_counts(conn, [_book_from_row(row)], one_book=True)[0]


def not_found(conn: sqlite3.Connection | BookStore, key: int | str) -> BookNotFoundError:
    """The error for a reference naming no book: the closest slugs, or some that exist."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.not_found(key)
    books = [(r[0], r[1]) for r in conn.execute("SELECT slug, name FROM books ORDER BY slug")]
    return no_such_book(key, books)


def find_book_by_hash(conn: sqlite3.Connection | BookStore, source_hash: str) -> BookRow | None:
    """A book whose source file had exactly these bytes (first by id)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.find_book_by_hash(source_hash)
    row = conn.execute(f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_hash = ? ORDER BY id",
                       (source_hash,)).fetchone()
    return _fill_counts(conn, [_book_from_row(row)], one_book=True)[0] if row else None


def books_of_file(conn: sqlite3.Connection | BookStore, source_path: str) -> list[BookRow]:
    """The books whose file is ``source_path`` (one at most, unless an older version let a
    second one in), without counts."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.books_of_file(source_path)
    rows = conn.execute(f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_path = ? ORDER BY id",
                        (source_path,)).fetchall()
    return [_book_from_row(r) for r in rows]


def books_with_hash(conn: sqlite3.Connection | BookStore, source_hash: str) -> list[BookRow]:
    """Every book whose source file had exactly these bytes (by id), without counts."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.books_with_hash(source_hash)
    rows = conn.execute(f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_hash = ? ORDER BY id",
                        (source_hash,)).fetchall()
    return [_book_from_row(r) for r in rows]


def slugs(conn: sqlite3.Connection | BookStore) -> set[str]:
    if not isinstance(conn, sqlite3.Connection):
        return conn.slugs()
    return {r[0] for r in conn.execute("SELECT slug FROM books")}


def delete_book(conn: sqlite3.Connection | BookStore, book_id: int) -> None:
    """Remove a book and everything under it, FTS rows included. Call inside a transaction."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.delete_book(book_id)
    fts.delete_book(conn, book_id)
    conn.execute("DELETE FROM books WHERE id = ?", (book_id,))
    vectors.clear_stamp_if_empty(conn)


def relocate_book(conn: sqlite3.Connection | BookStore, book_id: int, *, source_path: str,
                  source_mtime: float, source_root: str | None, source_group: str) -> None:
    """Point a book at its file's new place (a move or rename with the same content)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.relocate_book(book_id, source_path=source_path, source_mtime=source_mtime,
                                  source_root=source_root, source_group=source_group)
    conn.execute(
        "UPDATE books SET source_path = ?, source_mtime = ?, source_root = ?, source_group = ?, "
        "updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
        (source_path, source_mtime, source_root, source_group, book_id),
    )


def outline(conn: sqlite3.Connection | BookStore, book_id: int) -> list[tuple[int, str, int | None,
                                                                  int | None, list[SectionRow]]]:
    """Chapters (index, title, page_start, page_end, sections without text) in order."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.outline(book_id)
    chapters = conn.execute(
        "SELECT chapter_index, title, page_start, page_end FROM chapters WHERE book_id = ? "
        "ORDER BY chapter_index", (book_id,)).fetchall()
    counts = {(r[0], r[1]): r[2] for r in conn.execute(
        "SELECT chapter_index, section_index, count(*) FROM chunks WHERE book_id = ? "
        "GROUP BY chapter_index, section_index", (book_id,))}
    by_chapter: dict[int, list[SectionRow]] = {}
    for r in conn.execute(
        """SELECT s.chapter_index, s.section_index, ch.title AS chapter_title, s.title,
                  s.breadcrumb, s.approx_tokens, s.page_start, s.page_end, s.line_start,
                  s.line_end, s.summary, s.role
           FROM sections s JOIN chapters ch ON ch.id = s.chapter_id
           WHERE s.book_id = ? ORDER BY s.chapter_index, s.section_index""", (book_id,)):
        by_chapter.setdefault(r["chapter_index"], []).append(SectionRow(
            book_id=book_id, chapter_index=r["chapter_index"], section_index=r["section_index"],
            chapter_title=r["chapter_title"], title=r["title"], breadcrumb=r["breadcrumb"],
            text="", approx_tokens=r["approx_tokens"], page_start=r["page_start"],
            page_end=r["page_end"], line_start=r["line_start"], line_end=r["line_end"],
            summary=r["summary"], chunks=counts.get((r["chapter_index"], r["section_index"]), 0),
            role=r["role"],
        ))
    return [(c["chapter_index"], c["title"], c["page_start"], c["page_end"],
             by_chapter.get(c["chapter_index"], [])) for c in chapters]


def get_section(conn: sqlite3.Connection, book_id: int, chapter_index: int,
                section_index: int) -> SectionRow | None:
    """One section with its full text and summary."""
    r = conn.execute(
        """SELECT s.*, ch.title AS chapter_title,
                  (SELECT count(*) FROM chunks c WHERE c.section_id = s.id) AS n_chunks
           FROM sections s JOIN chapters ch ON ch.id = s.chapter_id
           WHERE s.book_id = ? AND s.chapter_index = ? AND s.section_index = ?""",
        (book_id, chapter_index, section_index)).fetchone()
    if r is None:
        return None
    return SectionRow(
        book_id=book_id, chapter_index=chapter_index, section_index=section_index,
        chapter_title=r["chapter_title"], title=r["title"], breadcrumb=r["breadcrumb"],
        text=r["text"], approx_tokens=r["approx_tokens"], page_start=r["page_start"],
        page_end=r["page_end"], line_start=r["line_start"], line_end=r["line_end"],
        summary=r["summary"], chunks=r["n_chunks"], role=r["role"],
    )


def section_counts(conn: sqlite3.Connection, book_id: int) -> list[int]:
    """Number of sections in each chapter, by chapter index (for range messages)."""
    rows = conn.execute(
        "SELECT ch.chapter_index, count(s.id) FROM chapters ch "
        "LEFT JOIN sections s ON s.chapter_id = ch.id WHERE ch.book_id = ? "
        "GROUP BY ch.chapter_index ORDER BY ch.chapter_index", (book_id,)).fetchall()
    return [r[1] for r in rows]


def section_of(conn: sqlite3.Connection | BookStore, book: BookRow, chapter_index: int,
               section_index: int) -> SectionRow:
    """One section of ``book``; NotFoundError saying which indices exist when out of range."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.section_of(book, chapter_index, section_index)
    check_section_exists(book.slug, section_counts(conn, book.id), chapter_index, section_index)
    row = get_section(conn, book.id, chapter_index, section_index)
    assert row is not None
    return row
