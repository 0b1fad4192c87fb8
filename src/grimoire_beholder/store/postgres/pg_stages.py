"""The model stages' view of a PostgreSQL library: what is left to do, checkpoint writes,
and the embedding stamp. Same contracts as ``store/chunk_progress.py`` and
``store/vectors.py``: each stage reads rows in its input state and moves them forward, so a
rerun after a crash resumes at the last commit; vectors and keyword postings of a batch are
written in one transaction with its status change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.store.postgres import pg_schema, pg_terms
from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.records import ChunkWork

if TYPE_CHECKING:
    import numpy as np


class StageRowsMixin(PgBase):
    def sections_without_summary(self, book_id: int | None = None
                                 ) -> list[tuple[int, int, str, str, str]]:
        sql = ("SELECT s.id, s.book_id, b.name, s.breadcrumb, s.text FROM sections s "
               "JOIN books b ON b.id = s.book_id WHERE s.summary IS NULL")
        args: list[object] = []
        if book_id is not None:
            sql += " AND s.book_id = %s"
            args.append(book_id)
        return [(int(r[0]), int(r[1]), r[2], r[3], r[4])
                for r in self.rows(sql + " ORDER BY s.id", args)]

    def set_summary(self, section_id: int, summary: str) -> None:
        self.run("UPDATE sections SET summary = %s WHERE id = %s AND summary IS NULL",
                 (summary, section_id))

    def pending_chunks(self, book_id: int | None = None, status: str = "pending"
                       ) -> list[ChunkWork]:
        sql = ("SELECT c.id, c.book_id, c.section_id, c.text, c.context, c.content_hash, "
               "s.role, b.source_type FROM chunks c JOIN sections s ON s.id = c.section_id "
               "JOIN books b ON b.id = c.book_id WHERE c.status = %s")
        args: list[object] = [status]
        if book_id is not None:
            sql += " AND c.book_id = %s"
            args.append(book_id)
        sql += " ORDER BY c.book_id, c.chapter_index, c.section_index, c.chunk_index"
        return [ChunkWork(id=int(r[0]), book_id=int(r[1]), section_id=int(r[2]), text=r[3],
                          context=r[4], content_hash=r[5], role=r[6], source_type=r[7])
                for r in self.rows(sql, args)]

    def section_info(self, section_id: int) -> tuple[str, str, str, str]:
        r = self.execute_one(
            "SELECT b.name, s.breadcrumb, COALESCE(s.summary, ''), s.text FROM sections s "
            "JOIN books b ON b.id = s.book_id WHERE s.id = %s", (section_id,))
        return r[0], r[1], r[2], r[3]

    def set_context(self, chunk_id: int, context: str) -> None:
        self.run("UPDATE chunks SET context = %s, status = 'contextualized' "
                 "WHERE id = %s AND status = 'pending'", (context, chunk_id))

    def mark_embedded(self, items: Sequence[tuple[ChunkWork, np.ndarray]], identity: str,
                      dimension: int) -> None:
        """Write a batch's vectors and keyword postings and mark it embedded. Call in one
        transaction."""
        import numpy as np

        self.ensure_stamp(identity, dimension)
        for _, vec in items:
            if np.shape(vec) != (dimension,) or not np.all(np.isfinite(vec)):
                raise EmbeddingMismatchError(
                    f"the embedder returned a vector of shape {np.shape(vec)} (expected "
                    f"({dimension},), finite); nothing from this batch was stored")
        ids = [w.id for w, _ in items]
        self.run_many(
            "INSERT INTO embeddings (chunk_id, book_id, vector) VALUES (%s, %s, %s) "
            "ON CONFLICT (chunk_id) DO UPDATE SET vector = excluded.vector",
            [(w.id, w.book_id, np.asarray(v, dtype=np.float32)) for w, v in items])
        self.run("UPDATE chunks SET status = 'embedded' WHERE id = ANY(%s)", (ids,))
        self.index_chunks(ids)

    def index_chunks(self, chunk_ids: list[int]) -> None:
        """(Re)write the keyword postings and lengths of these chunks, and their books'
        totals (BM25's row count and average length)."""
        if not chunk_ids:
            return
        old = {int(r[0]): (int(r[1]), int(r[2])) for r in self.rows(
            "SELECT book_id, count(*), sum(tokens) FROM chunk_lengths WHERE chunk_id = ANY(%s) "
            "GROUP BY book_id", (chunk_ids,))}
        self.run("DELETE FROM chunk_terms WHERE chunk_id = ANY(%s)", (chunk_ids,))
        self.run("DELETE FROM chunk_lengths WHERE chunk_id = ANY(%s)", (chunk_ids,))
        rows = self.rows(
            """SELECT c.id, c.text, COALESCE(c.context, ''), s.breadcrumb, ch.title, b.name,
                      c.book_id
               FROM chunks c JOIN sections s ON s.id = c.section_id
               JOIN chapters ch ON ch.id = s.chapter_id JOIN books b ON b.id = c.book_id
               WHERE c.id = ANY(%s) ORDER BY c.id""", (chunk_ids,))
        book_of = {int(r[0]): int(r[6]) for r in rows}
        postings, lengths = pg_terms.postings([r[:6] for r in rows])
        with self._thread_lock, self.conn.cursor() as cursor:
            with cursor.copy("COPY chunk_terms (term, chunk_id, book_id, tf, tokens) "
                             "FROM STDIN") as cp:
                for term, chunk_id, tf in postings:
                    cp.write_row((term, chunk_id, book_of[chunk_id], tf, lengths[chunk_id]))
            with cursor.copy("COPY chunk_lengths (chunk_id, book_id, tokens) FROM STDIN") as cp:
                for chunk_id, tokens in lengths.items():
                    cp.write_row((chunk_id, book_of[chunk_id], tokens))
        added: dict[int, tuple[int, int]] = {}
        for chunk_id, tokens in lengths.items():
            rows_before, tokens_before = added.get(book_of[chunk_id], (0, 0))
            added[book_of[chunk_id]] = (rows_before + 1, tokens_before + tokens)
        for book_id in sorted(set(added) | set(old)):  # only this book's writer touches it
            rows_new, tokens_new = added.get(book_id, (0, 0))
            rows_old, tokens_old = old.get(book_id, (0, 0))
            self.run(
                "INSERT INTO book_totals AS t (book_id, rows, tokens) VALUES (%s, %s, %s) "
                "ON CONFLICT (book_id) DO UPDATE SET rows = t.rows + excluded.rows, "
                "tokens = t.tokens + excluded.tokens",
                (book_id, rows_new - rows_old, tokens_new - tokens_old))

    def rebuild_keywords(self, book_id: int | None) -> int:
        """Drop and rebuild the keyword postings (of one book, or all) from the embedded
        chunks; how many chunks were indexed. Call inside a transaction."""
        if book_id is None:
            for table in ("chunk_terms", "chunk_lengths", "book_totals"):
                self.run(f"DELETE FROM {table}")  # constant names
            ids = [int(r[0]) for r in self.rows(
                "SELECT id FROM chunks WHERE status = 'embedded' ORDER BY id")]
        else:
            for table in ("chunk_terms", "chunk_lengths", "book_totals"):
                self.run(f"DELETE FROM {table} WHERE book_id = %s", (book_id,))
            ids = [int(r[0]) for r in self.rows(
                "SELECT id FROM chunks WHERE status = 'embedded' AND book_id = %s ORDER BY id",
                (book_id,))]
        self.index_chunks(ids)
        return len(ids)

    def status_counts(self) -> dict[str, int]:
        out = {"pending": 0, "contextualized": 0, "embedded": 0}
        for status, n in self.rows("SELECT status, count(*) FROM chunks GROUP BY status"):
            out[status] = int(n)
        return out

    def summary_counts(self) -> dict[int, tuple[int, int]]:
        return {int(r[0]): (int(r[1]), int(r[2])) for r in self.rows(
            "SELECT book_id, count(summary), count(*) FROM sections GROUP BY book_id")}


    def get_stamp(self) -> tuple[str, int] | None:
        found = dict(self.rows(
            "SELECT key, value FROM library_meta WHERE key IN ('embedding_identity', "
            "'embedding_dimension')"))
        if "embedding_identity" not in found:
            return None
        return str(found["embedding_identity"]), int(found["embedding_dimension"])

    def ensure_stamp(self, identity: str, dimension: int) -> None:
        """Stamp the library (and make its vector table) on first use; refuse another model
        or dimension afterwards. Call inside a transaction."""
        # Writers of vectors share the stamp lock until they commit; making the vector table
        # (here) or dropping it (the last book deleted) takes it alone.
        stamp = self.get_stamp()
        self.run("SELECT pg_advisory_xact_lock(%s)" if stamp is None else
                 "SELECT pg_advisory_xact_lock_shared(%s)", (pg_schema.STAMP_LOCK,))
        stamp = self.get_stamp()  # another writer may have stamped it meanwhile
        if stamp is None:
            # The vector table's foreign keys lock books and chunks; a book being written
            # locks them in that order, so take them so too, or each waits on the other.
            self.run("LOCK TABLE books, chunks IN SHARE ROW EXCLUSIVE MODE")
            for statement in pg_schema.embeddings_sql(dimension):
                self.run(statement)
            self.run("INSERT INTO library_meta (key, value) VALUES ('embedding_identity', %s), "
                     "('embedding_dimension', %s)", (identity, str(dimension)))
            return
        if stamp != (identity, dimension):
            raise EmbeddingMismatchError(
                f"this library was embedded with {stamp[0]} ({stamp[1]} dimensions) but the "
                f"configuration asks for {identity} ({dimension} dimensions); set the old "
                "embedding settings back, or use another database for a fresh library")

    def check_identity(self, identity: str) -> None:
        stamp = self.get_stamp()
        if stamp is not None and stamp[0] != identity:  # its dimension is not known: not said
            raise EmbeddingMismatchError(
                f"this library was embedded with {stamp[0]} ({stamp[1]} dimensions) but the "
                f"configuration asks for {identity}; set the old embedding settings back, or "
                "use another database for a fresh library")

    def has_vectors_table(self) -> bool:
        return bool(self.execute_one("SELECT to_regclass('embeddings') IS NOT NULL")[0])
