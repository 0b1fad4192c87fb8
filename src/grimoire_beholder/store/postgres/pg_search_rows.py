"""The read side of search in a PostgreSQL library: filters, the two arms, hit metadata.

Same contracts (and row types) as ``store/hit_queries.py``, ``role_rows``,
``index_entries``, ``text_spans`` and ``reading_positions``; the shared search code reaches
these through those modules' functions.

* Vector arm: pgvector's HNSW index (cosine). A filter (books, a reading position, roles)
  is applied during the scan with ``hnsw.iterative_scan = relaxed_order`` (pgvector ≥ 0.8),
  so a narrow filter still returns ``k`` rows instead of whatever survived the first
  ``ef_search`` candidates; the rows are re-sorted by exact distance.
* Keyword arm: BM25 exactly as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75, idf floored
  at 1e-6, weighted term frequency per column, length = tokens in all columns), from the
  postings ``pg_terms`` stored: same terms, same scores, same order as the SQLite library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from grimoire_beholder.store.hit_queries import UNFINISHED_SQL, ChunkPosition, HitRow, Unfinished
from grimoire_beholder.store.postgres import pg_terms
from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.records import ChunkSpan
from grimoire_beholder.store.text_spans import SectionHead

if TYPE_CHECKING:
    import numpy as np

_K1, _B = 1.2, 0.75
EF_SEARCH_MIN = 400  # HNSW candidate list: at least this, or the pool asked for (README)
SPAN_COLUMNS = ("c.id, c.book_id, c.chapter_index, c.section_index, c.char_start, c.char_end, "
                 "c.page_start, c.page_end, c.line_start, c.line_end")


def ids_list(ids: Iterable[int]) -> list[int]:
    return sorted({int(i) for i in ids})


class SearchRowsMixin(PgBase):
    def library_state(self) -> tuple[int, bool]:
        books = int(self.execute_one("SELECT count(*) FROM books")[0])
        searchable = bool(self.rows("SELECT 1 FROM chunks WHERE status = 'embedded' LIMIT 1"))
        return books, searchable

    def partly_searchable(self) -> list[Unfinished]:
        return [Unfinished(int(r[0]), r[1], int(r[2]), int(r[3]))
                for r in self.rows(UNFINISHED_SQL)]

    def book_filter_rows(self) -> list[tuple[Any, ...]]:
        """(id, slug, author, source_type, source_path, source_root, source_group) of every
        book, for ``hit_queries.resolve_books``."""
        return self.rows("SELECT id, slug, author, source_type, source_path, source_root, "
                         "source_group FROM books")

    def chunk_positions(self, chunk_ids: Iterable[int]) -> dict[int, ChunkPosition]:
        return {int(r[0]): ChunkPosition(int(r[1]), r[2], r[3], r[4]) for r in self.rows(
            "SELECT id, book_id, chapter_index, section_index, chunk_index FROM chunks "
            "WHERE id = ANY(%s)", (ids_list(chunk_ids),))}

    def hit_rows(self, chunk_ids: Iterable[int]) -> dict[int, HitRow]:
        out: dict[int, HitRow] = {}
        labels: dict[int, dict[int, str]] = {}
        for r in self.rows(
                """SELECT c.id, c.book_id, b.slug, b.name, b.author, b.source_type,
                          b.source_path, b.page_labels, c.chapter_index, ch.title,
                          c.section_index, s.breadcrumb, c.chunk_index, c.page_start,
                          c.page_end, c.line_start, c.line_end, c.text, c.context,
                          b.source_root, b.source_group, s.role
                   FROM chunks c JOIN sections s ON s.id = c.section_id
                   JOIN chapters ch ON ch.id = s.chapter_id JOIN books b ON b.id = c.book_id
                   WHERE c.id = ANY(%s)""", (ids_list(chunk_ids),)):
            book_id = int(r[1])
            if book_id not in labels:
                labels[book_id] = {int(k): str(v) for k, v in json.loads(r[7] or "{}").items()}
            out[int(r[0])] = HitRow(
                chunk_id=int(r[0]), book_id=book_id, slug=r[2], book=r[3], author=r[4],
                source_type=r[5], source_path=r[6], page_labels=labels[book_id],
                chapter_index=r[8], chapter=r[9], section_index=r[10], section=r[11],
                chunk_index=r[12], page_start=r[13], page_end=r[14], line_start=r[15],
                line_end=r[16], text=r[17], context=r[18] or None, source_root=r[19],
                group=r[20] or "", role=r[21], link=None)
        return out

    def roles_and_texts(self, chunk_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        return {int(r[0]): (r[1], r[2]) for r in self.rows(
            "SELECT c.id, s.role, c.text FROM chunks c JOIN sections s ON s.id = c.section_id "
            "WHERE c.id = ANY(%s)", (ids_list(chunk_ids),))}

    def chunk_ids_with_roles(self, book_ids: Collection[int] | None,
                             roles: Collection[str]) -> list[int]:
        sql = ("SELECT c.id FROM chunks c JOIN sections s ON s.id = c.section_id "
               "WHERE s.role = ANY(%s)")
        args: list[object] = [sorted(roles)]
        if book_ids is not None:
            sql += " AND c.book_id = ANY(%s)"
            args.append(ids_list(book_ids))
        return [int(r[0]) for r in self.rows(sql + " ORDER BY c.id", args)]

    def chunks_on_pages(self, book_id: int, start: int, end: int,
                        roles: Collection[str]) -> list[int]:
        return [int(r[0]) for r in self.rows(
            "SELECT c.id FROM chunks c JOIN sections s ON s.id = c.section_id "
            "WHERE c.book_id = %s AND c.page_start <= %s AND c.page_end >= %s "
            "AND s.role = ANY(%s) ORDER BY c.id", (book_id, end, start, sorted(roles)))]

    def chunk_spans(self, chunk_ids: Iterable[int]) -> dict[int, ChunkSpan]:
        return {int(r[0]): ChunkSpan(*r) for r in self.rows(
            f"SELECT {SPAN_COLUMNS} FROM chunks c WHERE c.id = ANY(%s)", (ids_list(chunk_ids),))}

    def section_spans(self, book_id: int, chapter_index: int, section_index: int
                      ) -> list[ChunkSpan]:
        return [ChunkSpan(*r) for r in self.rows(
            f"SELECT {SPAN_COLUMNS} FROM chunks c WHERE c.book_id = %s "
            "AND c.chapter_index = %s AND c.section_index = %s ORDER BY c.chunk_index",
            (book_id, chapter_index, section_index))]

    def section_slice(self, book_id: int, chapter_index: int, section_index: int,
                      start: int, end: int) -> str:
        found = self.rows(
            "SELECT substr(text, %s, %s) FROM sections WHERE book_id = %s "
            "AND chapter_index = %s AND section_index = %s",
            (max(start, 0) + 1, max(end - max(start, 0), 0), book_id, chapter_index,
             section_index))
        return str(found[0][0]) if found else ""

    def section_head(self, book_id: int, chapter_index: int, section_index: int
                     ) -> SectionHead | None:
        found = self.rows(
            "SELECT s.book_id, s.chapter_index, s.section_index, ch.title, s.title, "
            "s.breadcrumb, length(s.text) FROM sections s JOIN chapters ch "
            "ON ch.id = s.chapter_id WHERE s.book_id = %s AND s.chapter_index = %s "
            "AND s.section_index = %s", (book_id, chapter_index, section_index))
        return SectionHead(*found[0]) if found else None

    def chapter_titles(self, book_id: int) -> list[str]:
        return [str(r[0]) for r in self.rows(
            "SELECT title FROM chapters WHERE book_id = %s ORDER BY chapter_index", (book_id,))]

    def chunk_ids_until(self, book_ids: Iterable[int], last_chapter: int) -> list[int]:
        return [int(r[0]) for r in self.rows(
            "SELECT id FROM chunks WHERE book_id = ANY(%s) AND chapter_index <= %s "
            "ORDER BY id", (ids_list(book_ids), last_chapter))]

    # -- the arms -------------------------------------------------------------------------
    def word_match(self, tokens: list[str], limit: int, book_ids: Collection[int] | None,
                   chunk_ids: Collection[int] | None) -> list[tuple[int, float]]:
        """(chunk id, bm25) best first, bm25 negative as FTS5's: the query's tokens are
        ORed single-term phrases (``search.keyword`` writes nothing else)."""
        counted = pg_terms.query_terms(tokens)
        terms = list(counted)
        if not terms:
            return []
        rows_total, tokens_total = self.execute_one(
            "SELECT coalesce(sum(rows), 0)::bigint, coalesce(sum(tokens), 0)::bigint "
            "FROM book_totals")
        if not rows_total:
            return []
        hits = dict(self.rows("SELECT term, count(*) FROM chunk_terms WHERE term = ANY(%s) "
                              "GROUP BY term", (terms,)))
        idf = []
        for term in terms:
            value = math.log((rows_total - hits.get(term, 0) + 0.5) / (hits.get(term, 0) + 0.5))
            idf.append((value if value > 0.0 else 1e-6) * counted[term])  # one per phrase
        where, args = "", [terms, idf, float(tokens_total) / float(rows_total)]
        if book_ids is not None:
            where += " AND t.book_id = ANY(%s)"
            args.append(ids_list(book_ids))
        if chunk_ids is not None:
            where += " AND t.chunk_id = ANY(%s)"
            args.append(ids_list(chunk_ids))
        args.append(limit)
        return [(int(r[0]), float(r[1])) for r in self.rows(
            f"""WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q (term, idf)),
                    p AS (SELECT %s::float8 AS avgdl)
                SELECT t.chunk_id, -sum(q.idf * (t.tf * {_K1 + 1.0})
                           / (t.tf + {_K1} * ({1.0 - _B} + {_B} * t.tokens / p.avgdl))) AS score
                FROM chunk_terms t JOIN q ON q.term = t.term CROSS JOIN p
                WHERE true{where}
                GROUP BY t.chunk_id ORDER BY score, t.chunk_id LIMIT %s""", args)]

    def nearest(self, query: np.ndarray, k: int, book_ids: Collection[int] | None,
                chunk_ids: Collection[int] | None) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest embedded chunks within the
        filters, best first (HNSW; filtered scans iterate until ``k`` rows pass)."""
        import numpy as np

        if not self.execute_one("SELECT to_regclass('embeddings') IS NOT NULL")[0]:
            return []
        where = ""
        args: list[object] = [np.asarray(query, dtype=np.float32)]
        if book_ids is not None:
            where += " AND book_id = ANY(%s)"
            args.append(ids_list(book_ids))
        if chunk_ids is not None:
            where += " AND chunk_id = ANY(%s)"
            args.append(ids_list(chunk_ids))
        args.append(k)
        with self._thread_lock, self.conn.transaction():
            self.run("SELECT set_config('hnsw.ef_search', %s, true)",
                     (str(min(1000, max(EF_SEARCH_MIN, k))),))
            self.run("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
            found = self.rows(
                f"""SELECT chunk_id, distance FROM (
                        SELECT chunk_id, vector <=> %s AS distance FROM embeddings
                        WHERE true{where} ORDER BY distance LIMIT %s) AS nearest
                    ORDER BY distance, chunk_id""", args)
        return [(int(r[0]), 1.0 - float(r[1])) for r in found]
