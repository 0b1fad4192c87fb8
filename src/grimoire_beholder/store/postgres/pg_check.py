"""``check`` on a PostgreSQL library: the consistency rules of ``store/check.py`` in its
terms (PostgreSQL guards its own pages and foreign keys, so there is no file scan): every
embedded chunk has a vector and keyword postings, nothing else has either, each book's BM25
totals match its rows, and the stamp agrees with the vector column."""

from __future__ import annotations

from grimoire_beholder.store.check import LibraryCheck
from grimoire_beholder.store.postgres.pg_base import PgBase

_RULES: tuple[tuple[str, str], ...] = (
    ("embedded chunks without a vector",
     "SELECT count(*) FROM chunks c WHERE c.status = 'embedded' "
     "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)"),
    ("vectors of chunks that are not embedded",
     "SELECT count(*) FROM embeddings e JOIN chunks c ON c.id = e.chunk_id "
     "WHERE c.status != 'embedded'"),
    ("embedded chunks missing from the keyword index",
     "SELECT count(*) FROM chunks c WHERE c.status = 'embedded' "
     "AND NOT EXISTS (SELECT 1 FROM chunk_lengths l WHERE l.chunk_id = c.id)"),
    ("keyword rows of chunks that are not embedded",
     "SELECT count(*) FROM chunk_lengths l JOIN chunks c ON c.id = l.chunk_id "
     "WHERE c.status != 'embedded'"),
    ("books whose keyword totals disagree with their rows",
     "SELECT count(*) FROM (SELECT b.id FROM books b "
     "LEFT JOIN (SELECT book_id, count(*) AS n, sum(tokens) AS t FROM chunk_lengths "
     "GROUP BY book_id) l ON l.book_id = b.id LEFT JOIN book_totals t ON t.book_id = b.id "
     "WHERE coalesce(l.n, 0) != coalesce(t.rows, 0) "
     "OR coalesce(l.t, 0) != coalesce(t.tokens, 0)) AS wrong"),
)

_FIGURES = {
    "books": "SELECT count(*) FROM books",
    "chunks": "SELECT count(*) FROM chunks",
    "embedded_chunks": "SELECT count(*) FROM chunks WHERE status = 'embedded'",
    "fts_rows": "SELECT count(*) FROM chunk_lengths",
}


class CheckMixin(PgBase):
    def check(self) -> LibraryCheck:
        """Every rule; problems are reported, never raised."""
        result = LibraryCheck(database=self.location)
        has_vectors = bool(self.execute_one("SELECT to_regclass('embeddings') IS NOT NULL")[0])
        with self.conn.transaction():
            self.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            for name, sql in _FIGURES.items():
                result.figures[name] = int(self.execute_one(sql)[0])
            result.figures["vectors"] = int(self.execute_one(
                "SELECT count(*) FROM embeddings")[0]) if has_vectors else 0
            for problem, sql in _RULES:
                if "embeddings" in sql and not has_vectors:
                    if problem.startswith("embedded chunks") and result.figures[
                            "embedded_chunks"]:
                        result.problems.append(
                            f"{result.figures['embedded_chunks']} {problem}")
                    continue
                if n := int(self.execute_one(sql)[0]):
                    result.problems.append(f"{n} {problem}")
            stamp = dict(self.rows("SELECT key, value FROM library_meta WHERE key = "
                                   "'embedding_dimension'"))
            if has_vectors:
                typed = self.execute_one(
                    "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'embeddings'::regclass "
                    "AND attname = 'vector'")[0]
                if str(typed) != stamp.get("embedding_dimension"):
                    result.problems.append(
                        f"the vector column holds {typed} dimensions, the library is stamped "
                        f"{stamp.get('embedding_dimension') or 'with none'}")
        result.search_index = "in PostgreSQL (HNSW and keyword postings, checked above)"
        return result
