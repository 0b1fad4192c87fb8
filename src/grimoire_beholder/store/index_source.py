"""What the persisted search index (``search/segment_files.py``) reads from the library.

* The change log (``search_log``, schema v4): the chunk ids whose vector or FTS rows were
  written or deleted, in the writer's own transaction, so a crash can never leave the log
  and the data disagreeing. The index remembers the last ``seq`` it covers and catches up
  from there.
* FTS5's own statistics (rows and tokens, from its averages record): BM25 needs them, and
  they double as a check that the index holds exactly what FTS5 holds.
* Tokens exactly as FTS5 indexes them (:class:`Tokenizer`), for postings and for queries.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

WORD_TABLE = "chunks_fts"


def _weights(given: Sequence[float], columns: int) -> list[float]:
    """bm25() weights per word-table column (FTS5 gives unweighted columns 1.0). Callers
    pass ``store.hit_queries.WORD_WEIGHTS``: importing it here would close an import cycle
    (``store.hit_queries`` → ``store.book_rows`` → ``store.fts`` → here)."""
    return (list(given) + [1.0] * columns)[:columns]


def library_id(conn: sqlite3.Connection) -> str:
    """A random id made when the library was created (or migrated to schema v4)."""
    row = conn.execute("SELECT value FROM library_meta WHERE key = 'library_id'").fetchone()
    return str(row[0]) if row else ""


def log_position(conn: sqlite3.Connection) -> int:
    """The highest ``seq`` ever given to a change (0 before the first)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'search_log'").fetchone()
    return int(row[0]) if row else 0


def changed_since(conn: sqlite3.Connection, seq: int) -> list[int]:
    """Chunk ids written or deleted after ``seq``."""
    return [int(r[0]) for r in conn.execute(
        "SELECT DISTINCT chunk_id FROM search_log WHERE seq > ?", (seq,))]


def log_chunks(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> None:
    """Record that these chunks' FTS rows changed. Call inside the writing transaction."""
    conn.execute("INSERT INTO search_log (chunk_id) SELECT value FROM json_each(?)",
                 (json.dumps([int(i) for i in chunk_ids]),))


def prune_log(conn: sqlite3.Connection, through: int) -> None:
    """Forget changes up to ``through`` (an index covering them has been saved)."""
    conn.execute("DELETE FROM search_log WHERE seq <= ?", (through,))


def log_size(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM search_log").fetchone()[0])


def log_start(conn: sqlite3.Connection) -> int | None:
    """The lowest ``seq`` still in the log (None when it is empty)."""
    row = conn.execute("SELECT min(seq) FROM search_log").fetchone()
    return None if row[0] is None else int(row[0])


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (7 bits a byte, big-endian; a 9th byte carries 8 bits)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def fts_totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens in all columns) of the word table, as its BM25 sees them."""
    row = conn.execute(f"SELECT block FROM {WORD_TABLE}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    numbers = _varints(bytes(row[0]))
    return numbers[0], sum(numbers[1:])


def word_table_sql(conn: sqlite3.Connection) -> str:
    """The word table's CREATE statement: its columns and tokenizer, stamped in the index."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (WORD_TABLE,)).fetchone()
    return str(row[0]) if row else ""


def _columns(conn: sqlite3.Connection) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({WORD_TABLE})")]


def fts_rows(conn: sqlite3.Connection, chunk_ids: Sequence[int]) -> list[tuple[object, ...]]:
    """(rowid, column texts…) of the word table's rows for these chunks, by rowid."""
    columns = _columns(conn)
    return conn.execute(
        "SELECT id, " + ", ".join(f"c{i}" for i in range(len(columns)))
        + f" FROM {WORD_TABLE}_content WHERE id IN (SELECT value FROM json_each(?)) "
        "ORDER BY id", (json.dumps([int(i) for i in chunk_ids]),)).fetchall()


class Tokenizer:
    """FTS5's own tokenizer: a twin of the word table in a private in-memory database.

    The twin is declared with the word table's own CREATE statement, so stemming, accent
    folding and token boundaries cannot differ from FTS5's. Being private, it never writes
    to the library's connection: TEMP tables there bumped its change counter (so every
    search looked like a change) and their creation re-prepared every statement.
    """

    def __init__(self, conn: sqlite3.Connection, weights: Sequence[float]) -> None:
        self.columns = _columns(conn)
        self.weights = _weights(weights, len(self.columns))
        self._db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        twin = re.sub(r"^CREATE VIRTUAL TABLE\s+\S+\s+USING", "CREATE VIRTUAL TABLE t USING",
                      word_table_sql(conn), flags=re.IGNORECASE)
        self._db.execute(twin)
        self._db.execute("CREATE VIRTUAL TABLE ti USING fts5vocab(t, instance)")
        self._db.execute("CREATE VIRTUAL TABLE tr USING fts5vocab(t, row)")

    def close(self) -> None:
        self._db.close()

    def _load(self, rows: Sequence[Sequence[object]]) -> None:
        self._db.execute("DELETE FROM t")
        names = ", ".join(self.columns)
        marks = ", ".join("?" * (len(self.columns) + 1))
        self._db.executemany(f"INSERT INTO t (rowid, {names}) VALUES ({marks})", rows)

    def postings(self, rows: Sequence[Sequence[object]], hash_term: Callable[[str], int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Postings of FTS rows (from :func:`fts_rows`): (term hashes, chunk ids, weighted
        tf, count), one entry per (term, chunk), ordered by term then chunk id.

        The weighted tf is what FTS5's ``bm25()`` sums with ``WORD_WEIGHTS`` per column (in
        the same order); the count is unweighted (a chunk's length is the sum of its
        counts). Fetching one Python row per token instance cost ~3 µs each (3 s for 5,000
        chunks), so SQLite packs every instance's (chunk, column) into one integer of one
        ``group_concat`` string, in the vocabulary's (term, chunk, column) order, and the
        ``row`` vocabulary's per-term instance counts say where each term's run ends.
        """
        import numpy as np

        self._load(rows)
        n = len(self.columns)
        terms = self._db.execute("SELECT term, cnt FROM tr").fetchall()
        case = " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(self.columns))
        packed = self._db.execute(
            f"SELECT group_concat(doc * {n} + CASE col {case} END) FROM ti").fetchone()[0]
        self._db.execute("DELETE FROM t")
        if not terms or not packed:
            return (np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.float64),
                    np.zeros(0, np.int64))
        docs, cols = np.divmod(np.array(packed.split(","), dtype=np.int64), n)
        term_index = np.repeat(np.arange(len(terms)), [int(t[1]) for t in terms])
        if len(term_index) != len(docs):
            raise sqlite3.DatabaseError("FTS5 vocabulary counts disagree with its instances")
        starts = np.flatnonzero(np.diff(term_index, prepend=-1) | np.diff(docs, prepend=-1))
        tf = np.add.reduceat(np.array(self.weights)[cols], starts)
        counts = np.diff(np.append(starts, len(docs)))
        hashes = np.array([hash_term(t[0]) for t in terms], dtype=np.uint64)
        return hashes[term_index[starts]], docs[starts], tf, counts

    def query_terms(self, tokens: Sequence[str]) -> list[list[str]]:
        """The terms FTS5 makes of each query token (a quoted token may give 0, 1 or more)."""
        self._load([(i + 1, t, *[""] * (len(self.columns) - 1)) for i, t in enumerate(tokens)])
        out: list[list[str]] = [[] for _ in tokens]
        for term, doc in self._db.execute("SELECT term, doc FROM ti ORDER BY doc, offset"):
            out[int(doc) - 1].append(str(term))
        self._db.execute("DELETE FROM t")
        return out


def library_postings(conn: sqlite3.Connection, weights: Sequence[float],
                     max_instances: int = 4_000_000
                     ) -> Iterator[tuple[list[str], np.ndarray, np.ndarray, np.ndarray,
                                         np.ndarray]]:
    """Every posting of the word table, read from FTS5's own index, in runs of terms.

    Yields (terms, term index per posting, chunk id, weighted tf, token count), postings
    ordered by term then chunk id. For a full build this reads FTS5's index once through
    its ``instance`` vocabulary (term ranges of about ``max_instances`` token instances,
    packed as in :meth:`Tokenizer.postings`) instead of tokenizing every chunk again: ten
    times faster, and exactly what FTS5 holds. The TEMP vocabulary tables it creates belong
    to the calling writer's connection.
    """
    import numpy as np

    columns = _columns(conn)
    n = len(columns)
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.index_build_rows "
                 f"USING fts5vocab(main, {WORD_TABLE}, row)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.index_build_instances "
                 f"USING fts5vocab(main, {WORD_TABLE}, instance)")
    terms = conn.execute("SELECT term, cnt FROM temp.index_build_rows").fetchall()
    case = " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(columns))
    column_weights = np.array(_weights(weights, n))
    start = 0
    while start < len(terms):
        end, total = start, 0
        while end < len(terms) and (end == start or total + terms[end][1] <= max_instances):
            total += int(terms[end][1])
            end += 1
        packed = conn.execute(
            f"SELECT group_concat(doc * {n} + CASE col {case} END) FROM "
            "temp.index_build_instances WHERE term >= ? AND term <= ?",
            (terms[start][0], terms[end - 1][0])).fetchone()[0]
        docs, cols = np.divmod(np.array(packed.split(","), dtype=np.int64), n)
        term_index = np.repeat(np.arange(end - start), [int(t[1]) for t in terms[start:end]])
        if len(term_index) != len(docs):
            raise sqlite3.DatabaseError("FTS5 vocabulary counts disagree with its instances")
        runs = np.flatnonzero(np.diff(term_index, prepend=-1) | np.diff(docs, prepend=-1))
        tf = np.add.reduceat(column_weights[cols], runs)
        counts = np.diff(np.append(runs, len(docs)))
        yield [t[0] for t in terms[start:end]], term_index[runs], docs[runs], tf, counts
        start = end


def vector_ids(conn: sqlite3.Connection) -> list[int]:
    """Every chunk id with a vector, ascending (from the BLOB-free ``book_id`` index)."""
    return [int(r[0]) for r in conn.execute(
        "SELECT chunk_id FROM embeddings INDEXED BY embeddings_book ORDER BY chunk_id")]


def vectors_of(conn: sqlite3.Connection, chunk_ids: Sequence[int], dimension: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk ids, book ids, float32 vectors) of those chunks that have a vector."""
    import numpy as np

    rows = conn.execute(
        "SELECT chunk_id, book_id, vector FROM embeddings "
        "WHERE chunk_id IN (SELECT value FROM json_each(?)) ORDER BY chunk_id",
        (json.dumps([int(i) for i in chunk_ids]),)).fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    books = np.array([r[1] for r in rows], dtype=np.int64)
    blob = b"".join(r[2] for r in rows)
    matrix = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if matrix.size != len(rows) * dimension:
        from grimoire_beholder.errors import EmbeddingMismatchError

        raise EmbeddingMismatchError(
            f"stored vectors do not all have the library's {dimension} dimensions")
    return ids, books, matrix.reshape(len(rows), dimension)
