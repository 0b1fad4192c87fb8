"""Embedding storage: little-endian float32 BLOBs, one row per embedded chunk.

The embedding identity (backend, model, dimension) is stamped in ``library_meta`` on the first
embed; every later write is checked against it so vectors of two models never mix.

Search keeps every vector in memory (``search.vector.VectorIndex``) and refreshes it by
appending rows with a higher ``chunk_id``. Appends are detectable from ``count``/``max``, but
a removal or an overwrite is not (SQLite reuses the highest rowids after a delete), so every
store path that removes or overwrites vectors bumps ``vector_generation`` in
``library_meta``; the index rebuilds whenever that counter moves. Code that deletes
embeddings must therefore call :func:`bump_generation` in the same transaction
(``fts.delete_book`` and :func:`write_vectors` already do).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.store.db import ids_param

if TYPE_CHECKING:
    import numpy as np

# numpy is imported inside the functions that need it: ``list``/``--help`` import this
# module through library.py and must not pay numpy's ~100 ms import.
_FLOAT32_LE = "<f4"
_FLOAT32_BYTES = 4
_GENERATION_KEY = "vector_generation"


class StampStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def get_stamp(self) -> tuple[str, int] | None: ...
    def check_identity(self, identity: str) -> None: ...


def encode(vector: np.ndarray) -> bytes:
    """A vector as little-endian float32 bytes."""
    import numpy as np

    return np.asarray(vector, dtype=_FLOAT32_LE).tobytes()


def decode(blob: bytes, dimension: int) -> np.ndarray:
    """Little-endian float32 bytes back to a native float32 vector."""
    import numpy as np

    vec = np.frombuffer(blob, dtype=_FLOAT32_LE)
    if vec.shape[0] != dimension:
        raise EmbeddingMismatchError(
            f"stored vector has {vec.shape[0]} dimensions, the library is stamped {dimension}"
        )
    return vec.astype(np.float32, copy=False)


def get_stamp(conn: sqlite3.Connection | StampStore) -> tuple[str, int] | None:
    """The (identity, dimension) the library's vectors were made with, or None if unset."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.get_stamp()
    rows = dict(conn.execute(
        "SELECT key, value FROM library_meta WHERE key IN ('embedding_identity', "
        "'embedding_dimension')"
    ).fetchall())
    if "embedding_identity" not in rows:
        return None
    return rows["embedding_identity"], int(rows["embedding_dimension"])


def ensure_stamp(conn: sqlite3.Connection, identity: str, dimension: int) -> None:
    """Stamp the library on first use; refuse a different model or dimension afterwards."""
    stamp = get_stamp(conn)
    if stamp is None:
        conn.executemany(
            "INSERT OR REPLACE INTO library_meta (key, value) VALUES (?, ?)",
            [("embedding_identity", identity), ("embedding_dimension", str(dimension))],
        )
        return
    if stamp != (identity, dimension):
        raise EmbeddingMismatchError(
            f"this library was embedded with {stamp[0]} ({stamp[1]} dimensions) but the "
            f"configuration asks for {identity} ({dimension} dimensions); set the old "
            "embedding settings back, or point db_path at a new file to start a fresh library"
        )


def check_identity(conn: sqlite3.Connection | StampStore, identity: str) -> None:
    """Refuse (EmbeddingMismatchError) if the library is stamped with another embedder.

    Compares the identity only: asking a backend for its dimension can need the model.
    """
    if not isinstance(conn, sqlite3.Connection):
        return conn.check_identity(identity)
    stamp = get_stamp(conn)
    if stamp is not None and stamp[0] != identity:  # its dimension is not known: not said
        raise EmbeddingMismatchError(
            f"this library was embedded with {stamp[0]} ({stamp[1]} dimensions) but the "
            f"configuration asks for {identity}; set the old embedding settings back, or "
            "point db_path at a new file to start a fresh library")


def clear_stamp_if_empty(conn: sqlite3.Connection) -> None:
    """Forget the stamp once no vectors remain, so an emptied library can change model."""
    if conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is None:
        conn.execute(
            "DELETE FROM library_meta WHERE key IN ('embedding_identity', 'embedding_dimension')"
        )


def write_vectors(conn: sqlite3.Connection, rows: Iterable[tuple[int, int, np.ndarray]]) -> None:
    """Insert or replace (chunk_id, book_id, vector) rows. Call inside a transaction.

    Overwriting an existing row bumps the generation, so in-memory indexes rebuild.
    """
    params = [(chunk_id, book_id, encode(vec)) for chunk_id, book_id, vec in rows]
    if not params:
        return
    if conn.execute(
        "SELECT 1 FROM embeddings WHERE chunk_id IN (SELECT value FROM json_each(?)) LIMIT 1",
        (ids_param(p[0] for p in params),),
    ).fetchone() is not None:
        bump_generation(conn)
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings (chunk_id, book_id, vector) VALUES (?, ?, ?)", params
    )


def bump_generation(conn: sqlite3.Connection) -> None:
    """Record that vectors were removed or overwritten (see the module docstring)."""
    conn.execute(
        "INSERT INTO library_meta (key, value) VALUES (?, '1') ON CONFLICT (key) "
        "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        (_GENERATION_KEY,),
    )


@dataclass(frozen=True)
class VectorSignature:
    """A cheap fingerprint of the embeddings table, read from its covering index.

    ``generation`` moves on removals/overwrites; ``count``, ``max_id`` and ``id_sum`` move on
    appends, which lets a reader fetch only the new rows.
    """

    generation: int
    count: int
    max_id: int
    id_sum: int


def signature(conn: sqlite3.Connection) -> VectorSignature:
    """The current :class:`VectorSignature` (a few ms for 100k rows: no BLOB is read)."""
    gen = conn.execute("SELECT value FROM library_meta WHERE key = ?",
                       (_GENERATION_KEY,)).fetchone()
    # The (book_id) index holds every chunk_id (the rowid) and no BLOB: scanning it instead
    # of the table reads a few MB rather than the vectors themselves.
    count, max_id, id_sum = conn.execute(
        "SELECT count(*), COALESCE(max(chunk_id), 0), COALESCE(sum(chunk_id), 0) "
        "FROM embeddings INDEXED BY embeddings_book"
    ).fetchone()
    return VectorSignature(int(gen[0]) if gen else 0, int(count), int(max_id), int(id_sum))


_READ_BATCH = 4096


def read_vectors(conn: sqlite3.Connection, dimension: int, after_id: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk ids, book ids, vectors) of rows with ``chunk_id > after_id``, by chunk id.

    One query, read in batches of 4096 rows straight into a preallocated float32 matrix:
    each batch's BLOBs are joined and decoded by one ``frombuffer`` (no per-row array).
    Fetching every row first and then joining held the BLOBs twice (row tuples + joined
    buffer) and left RSS at 2.1x the matrix after a 100k-row load; batches keep the peak at
    the matrix plus ~6 MB (bench/scale.py). The matrix is the caller's to normalise in place.
    """
    import numpy as np

    # Counted from the (book_id) index, which holds every chunk_id and no BLOB.
    count = int(conn.execute(
        "SELECT count(*) FROM embeddings INDEXED BY embeddings_book WHERE chunk_id > ?",
        (after_id,),
    ).fetchone()[0])
    chunk_ids = np.empty(count, dtype=np.int64)
    book_ids = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, dimension), dtype=np.float32)
    cursor = conn.execute(
        "SELECT chunk_id, book_id, vector FROM embeddings WHERE chunk_id > ? ORDER BY chunk_id",
        (after_id,),
    )
    done = 0
    while batch := cursor.fetchmany(_READ_BATCH):
        n = len(batch)
        blob = b"".join(r[2] for r in batch)
        if done + n > count or len(blob) != n * dimension * _FLOAT32_BYTES:
            raise EmbeddingMismatchError(
                f"stored vectors do not all have the library's {dimension} dimensions; "
                "re-embed the library"
            )
        chunk_ids[done:done + n] = [r[0] for r in batch]
        book_ids[done:done + n] = [r[1] for r in batch]
        matrix[done:done + n] = np.frombuffer(blob, dtype=_FLOAT32_LE).reshape(n, dimension)
        done += n
    # Inside the caller's snapshot the count and the scan agree; fewer rows means a writer
    # got in between (no snapshot), so return only what was read.
    return chunk_ids[:done], book_ids[:done], matrix[:done]
