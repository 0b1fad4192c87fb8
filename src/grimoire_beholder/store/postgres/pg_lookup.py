"""Printed back-of-book indexes and whole-book reads in PostgreSQL: index entries by term
and by prefix, the sections on a span of pages, and every section and chunk span of a book
(``lookup`` and ``health``). The same contracts as ``store/index_entries.py`` and
``store/text_spans.py``, whose row types these return; what the rows mean is decided there.
Methods of :class:`LookupRowsMixin`, mixed into ``pg_engine.PostgresEngine``."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from grimoire_beholder.store.index_entries import IndexRow
from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.postgres.pg_search_rows import SPAN_COLUMNS, ids_list
from grimoire_beholder.store.records import ChunkSpan
from grimoire_beholder.store.text_spans import SectionHead

_ENTRY_SQL = ("SELECT e.book_id, b.slug, b.name, e.term, e.parent, e.norm, e.printed, "
              "e.page_start, e.page_end, e.see, e.spread FROM index_entries e "
              "JOIN books b ON b.id = e.book_id ")


class LookupRowsMixin(PgBase):
    def _entries(self, where: str, args: list[object], book_ids: Collection[int] | None,
                 order: str, limit: int | None = None) -> list[IndexRow]:
        if book_ids is not None:
            where += " AND e.book_id = ANY(%s)"
            args.append(ids_list(book_ids))
        sql = _ENTRY_SQL + where + " ORDER BY " + order
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        return [IndexRow(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9] or "",
                         float(r[10])) for r in self.rows(sql, args)]

    def index_exact(self, norms: Collection[str], book_ids: Collection[int] | None
                    ) -> list[IndexRow]:
        norms = [n for n in norms if "\x00" not in n]  # no stored term holds NUL
        return self._entries("WHERE e.norm = ANY(%s)", [sorted(set(norms))], book_ids,
                             "b.slug COLLATE \"C\", e.id")

    def index_starting_with(self, prefix: str, limit: int, book_ids: Collection[int] | None
                            ) -> list[IndexRow]:
        # code-point order, as SQLite compares: the database's collation may not be "C"
        if "\x00" in prefix:
            return []  # no stored term holds NUL
        return self._entries("WHERE e.norm COLLATE \"C\" >= %s AND e.norm COLLATE \"C\" < %s",
                             [prefix, prefix + "\U0010ffff"], book_ids,
                             "e.norm COLLATE \"C\", b.slug COLLATE \"C\", e.id", limit)

    def page_section_rows(self, book_id: int, last: int, first: int
                          ) -> list[tuple[Any, ...]]:
        return self.rows(
            "SELECT s.chapter_index, s.section_index, ch.title, s.title, s.breadcrumb, "
            "s.page_start, s.page_end, s.role FROM sections s "
            "JOIN chapters ch ON ch.id = s.chapter_id WHERE s.book_id = %s "
            "AND s.page_start IS NOT NULL AND s.page_start <= %s AND s.page_end >= %s "
            "ORDER BY s.chapter_index, s.section_index", (book_id, last, first))

    def book_sections(self, book_id: int) -> list[tuple[SectionHead, str, int, str]]:
        return [(SectionHead(int(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6])), str(r[7]),
                 int(r[8]), str(r[9])) for r in self.rows(
            "SELECT s.book_id, s.chapter_index, s.section_index, ch.title, s.title, "
            "s.breadcrumb, length(s.text), s.text, s.approx_tokens, s.role FROM sections s "
            "JOIN chapters ch ON ch.id = s.chapter_id WHERE s.book_id = %s "
            "ORDER BY s.chapter_index, s.section_index", (book_id,))]

    def book_spans(self, book_id: int) -> list[tuple[ChunkSpan, str]]:
        return [(ChunkSpan(*r[:10]), str(r[10])) for r in self.rows(
            f"SELECT {SPAN_COLUMNS}, c.status FROM chunks c WHERE c.book_id = %s "
            "ORDER BY c.chapter_index, c.section_index, c.chunk_index", (book_id,))]
