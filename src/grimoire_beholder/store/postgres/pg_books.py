"""Books and their structure in PostgreSQL: insert a book whole, list, find, outline, delete.

The same contracts as ``store/book_rows.py`` (whose row types these return); only the SQL
differs. Methods of :class:`BookRowsMixin`, mixed into ``pg_engine.PostgresEngine``.
"""

from __future__ import annotations

import json
from typing import Any

from grimoire_beholder.errors import BookNotFoundError, SlugConflictError
from grimoire_beholder.naming import check_section_exists, no_such_book
from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.postgres.pg_schema import NOW as _NOW
from grimoire_beholder.store.postgres.pg_schema import STAMP_LOCK
from grimoire_beholder.store.records import BookRow, NewBook, SectionRow

_BOOK_COLUMNS = (
    "id, slug, name, author, source_type, source_path, source_hash, source_size, "
    "source_mtime, page_count, line_count, page_labels, added_at, updated_at, source_root, "
    "source_group"
)


def _book(r: tuple[Any, ...]) -> BookRow:
    labels = {int(k): v for k, v in json.loads(r[11] or "{}").items()}
    return BookRow(id=int(r[0]), slug=r[1], name=r[2], author=r[3], source_type=r[4],
                   source_path=r[5], source_hash=r[6], source_size=int(r[7]),
                   source_mtime=float(r[8]), page_count=r[9], line_count=r[10],
                   page_labels=labels, added_at=r[12], updated_at=r[13], source_root=r[14],
                   source_group=r[15] or "")


class BookRowsMixin(PgBase):
    """Book rows."""

    def insert_book(self, book: NewBook, book_id: int | None = None) -> int:
        """Write a book with its chapters, sections, pending chunks and printed-index
        entries; its id. Call inside a transaction: the book appears whole or not at all.
        ``book_id``: the id of a book deleted in the same transaction (sync replaces a
        changed file in place); otherwise the identity column's next, never reused."""
        if self.rows("SELECT 1 FROM books WHERE slug = %s", (book.slug,)):
            raise SlugConflictError(f"slug '{book.slug}' is already taken; use --name to "
                                    "give this book another name")
        book_id = int(self.execute_one(
            """INSERT INTO books (id, slug, name, author, source_type, source_path,
                   source_hash, source_size, source_mtime, page_count, line_count,
                   page_labels, source_root, source_group)
               VALUES (coalesce(%s, nextval(pg_get_serial_sequence('books', 'id'))), %s, %s,
                   %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
            (book_id, book.slug, book.name, book.author, book.source_type, book.source_path,
             book.source_hash, book.source_size, book.source_mtime, book.page_count,
             book.line_count, json.dumps({str(k): v for k, v in book.page_labels.items()}),
             book.source_root, book.source_group))[0])
        for ci, chapter in enumerate(book.chapters):
            ch_id = self.execute_one(
                "INSERT INTO chapters (book_id, chapter_index, title, page_start, page_end) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (book_id, ci, chapter.title, chapter.page_start, chapter.page_end))[0]
            for si, sec in enumerate(chapter.sections):
                sec_id = self.execute_one(
                    """INSERT INTO sections (book_id, chapter_id, chapter_index, section_index,
                           title, breadcrumb, text, approx_tokens, page_start, page_end,
                           line_start, line_end, role, hints)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                       RETURNING id""",
                    (book_id, ch_id, ci, si, sec.title, sec.breadcrumb, sec.text,
                     sec.approx_tokens, sec.page_start, sec.page_end, sec.line_start,
                     sec.line_end, sec.role, " ".join(sorted(sec.hints))))[0]
                self.run_many(
                        """INSERT INTO chunks (book_id, section_id, chapter_index, section_index,
                               chunk_index, text, char_start, char_end, approx_tokens,
                               page_start, page_end, line_start, line_end, content_hash)
                           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                        [(book_id, sec_id, ci, si, k, c.text, c.char_start, c.char_end,
                          c.approx_tokens, c.page_start, c.page_end, c.line_start, c.line_end,
                          c.content_hash) for k, c in enumerate(sec.chunks)])
        self.run_many("INSERT INTO index_entries (book_id, term, parent, norm, printed, "
                     "page_start, page_end, see, spread) "
                      "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                      [(book_id, e.term, e.parent, e.norm, e.printed, e.page_start, e.page_end,
                        e.see, e.spread) for e in book.index_entries])
        return book_id

    def _fill_counts(self, books: list[BookRow], one_book: bool = False) -> list[BookRow]:
        by_id = {b.id: b for b in books}
        if not by_id:
            return books
        where, params = ("WHERE book_id = %s", (books[0].id,)) if one_book else ("", ())
        for book_id, n in self.rows(f"SELECT book_id, count(*) FROM chapters {where} "
                                    "GROUP BY book_id", params):
            if book_id in by_id:
                by_id[book_id].chapters = int(n)
        for book_id, role, n, tokens in self.rows(
                f"SELECT book_id, role, count(*), sum(approx_tokens) FROM sections {where} "
                "GROUP BY book_id, role", params):
            if book_id in by_id:
                book = by_id[book_id]
                book.roles[role] = int(n)
                book.sections += int(n)
                book.approx_tokens += int(tokens or 0)
        for book_id, status, n in self.rows(
                f"SELECT book_id, status, count(*) FROM chunks {where} "
                "GROUP BY book_id, status", params):
            if book_id in by_id:
                by_id[book_id].status[status] = int(n)
                by_id[book_id].chunks += int(n)
        for book in books:
            for status in ("pending", "contextualized", "embedded"):
                book.status.setdefault(status, 0)
        return books

    def list_books(self) -> list[BookRow]:
        """Every book with its counts, in slug order (``slug`` compared byte-wise, as SQLite)."""
        return self._fill_counts([_book(r) for r in self.rows(
            f"SELECT {_BOOK_COLUMNS} FROM books ORDER BY slug COLLATE \"C\"")])

    def find_book(self, key: int | str) -> BookRow | None:
        if isinstance(key, str) and "\x00" in key:
            return None  # PostgreSQL text cannot hold NUL: no slug has one
        column = "id" if isinstance(key, int) else "slug"
        found = self.rows(f"SELECT {_BOOK_COLUMNS} FROM books WHERE {column} = %s", (key,))
        return self._fill_counts([_book(found[0])], one_book=True)[0] if found else None

    def find_book_by_hash(self, source_hash: str) -> BookRow | None:
        found = self.rows(f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_hash = %s "
                          "ORDER BY id LIMIT 1", (source_hash,))
        return self._fill_counts([_book(found[0])], one_book=True)[0] if found else None

    def books_of_file(self, source_path: str) -> list[BookRow]:
        return [_book(r) for r in self.rows(
            f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_path = %s ORDER BY id",
            (source_path,))]

    def books_with_hash(self, source_hash: str) -> list[BookRow]:
        return [_book(r) for r in self.rows(
            f"SELECT {_BOOK_COLUMNS} FROM books WHERE source_hash = %s ORDER BY id",
            (source_hash,))]

    def slugs(self) -> set[str]:
        return {str(r[0]) for r in self.rows("SELECT slug FROM books")}

    def relocate_book(self, book_id: int, *, source_path: str, source_mtime: float,
                      source_root: str | None, source_group: str) -> None:
        self.run(f"UPDATE books SET source_path = %s, source_mtime = %s, source_root = %s, "
                 f"source_group = %s, updated_at = {_NOW} WHERE id = %s",
                 (source_path, source_mtime, source_root, source_group, book_id))

    def not_found(self, key: int | str) -> BookNotFoundError:
        books = [(r[0], r[1]) for r in self.rows(
            "SELECT slug, name FROM books ORDER BY slug COLLATE \"C\"")]
        return no_such_book(key, books)

    def delete_book(self, book_id: int) -> None:
        """Remove a book and everything under it (the foreign keys cascade). Call inside a
        transaction; forgets the stamp once no vector is left."""
        self.run("DELETE FROM books WHERE id = %s", (book_id,))
        if not self._vector_table_empty():
            return
        self.run("SELECT pg_advisory_xact_lock(%s)", (STAMP_LOCK,))  # writers commit first
        if self._vector_table_empty():
            self.run("DELETE FROM library_meta WHERE key IN ('embedding_identity', "
                     "'embedding_dimension')")
            self.run("DROP TABLE embeddings")

    def _vector_table_empty(self) -> bool:
        return bool(self.execute_one("SELECT to_regclass('embeddings') IS NOT NULL")[0]) and (
            not self.rows("SELECT 1 FROM embeddings LIMIT 1"))

    def outline(self, book_id: int) -> list[tuple[int, str, int | None, int | None,
                                                  list[SectionRow]]]:
        chapters = self.rows(
            "SELECT chapter_index, title, page_start, page_end FROM chapters "
            "WHERE book_id = %s ORDER BY chapter_index", (book_id,))
        counts = {(r[0], r[1]): int(r[2]) for r in self.rows(
            "SELECT chapter_index, section_index, count(*) FROM chunks WHERE book_id = %s "
            "GROUP BY chapter_index, section_index", (book_id,))}
        by_chapter: dict[int, list[SectionRow]] = {}
        for r in self.rows(
                """SELECT s.chapter_index, s.section_index, ch.title, s.title, s.breadcrumb,
                          s.approx_tokens, s.page_start, s.page_end, s.line_start,
                          s.line_end, s.summary, s.role
                   FROM sections s JOIN chapters ch ON ch.id = s.chapter_id
                   WHERE s.book_id = %s ORDER BY s.chapter_index, s.section_index""",
                (book_id,)):
            by_chapter.setdefault(r[0], []).append(SectionRow(
                book_id=book_id, chapter_index=r[0], section_index=r[1], chapter_title=r[2],
                title=r[3], breadcrumb=r[4], text="", approx_tokens=r[5], page_start=r[6],
                page_end=r[7], line_start=r[8], line_end=r[9], summary=r[10],
                chunks=counts.get((r[0], r[1]), 0), role=r[11]))
        return [(c[0], c[1], c[2], c[3], by_chapter.get(c[0], [])) for c in chapters]

    def section_of(self, book: BookRow, chapter_index: int, section_index: int) -> SectionRow:
        counts = [int(r[1]) for r in self.rows(
            "SELECT ch.chapter_index, count(s.id) FROM chapters ch "
            "LEFT JOIN sections s ON s.chapter_id = ch.id WHERE ch.book_id = %s "
            "GROUP BY ch.chapter_index ORDER BY ch.chapter_index", (book.id,))]
        check_section_exists(book.slug, counts, chapter_index, section_index)
        r = self.rows(
            """SELECT ch.title, s.title, s.breadcrumb, s.text, s.approx_tokens, s.page_start,
                      s.page_end, s.line_start, s.line_end, s.summary, s.role,
                      (SELECT count(*) FROM chunks c WHERE c.section_id = s.id)
               FROM sections s JOIN chapters ch ON ch.id = s.chapter_id
               WHERE s.book_id = %s AND s.chapter_index = %s AND s.section_index = %s""",
            (book.id, chapter_index, section_index))[0]
        return SectionRow(
            book_id=book.id, chapter_index=chapter_index, section_index=section_index,
            chapter_title=r[0], title=r[1], breadcrumb=r[2], text=r[3], approx_tokens=r[4],
            page_start=r[5], page_end=r[6], line_start=r[7], line_end=r[8], summary=r[9],
            role=r[10], chunks=int(r[11]))
