"""Embedding storage: little-endian float32 BLOBs, one row per embedded chunk.

The embedding identity (backend, model, dimension) is stamped in ``library_meta`` on the first
embed; every later write is checked against it so vectors of two models never mix.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from ..errors import EmbeddingMismatchError

_FLOAT32_LE = np.dtype("<f4")


def encode(vector: np.ndarray) -> bytes:
    """A vector as little-endian float32 bytes."""
    return np.asarray(vector, dtype=_FLOAT32_LE).tobytes()


def decode(blob: bytes, dimension: int) -> np.ndarray:
    """Little-endian float32 bytes back to a native float32 vector."""
    vec = np.frombuffer(blob, dtype=_FLOAT32_LE)
    if vec.shape[0] != dimension:
        raise EmbeddingMismatchError(
            f"stored vector has {vec.shape[0]} dimensions, the library is stamped {dimension}"
        )
    return vec.astype(np.float32, copy=False)


def get_stamp(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The (identity, dimension) the library's vectors were made with, or None if unset."""
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


def clear_stamp_if_empty(conn: sqlite3.Connection) -> None:
    """Forget the stamp once no vectors remain, so an emptied library can change model."""
    if conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is None:
        conn.execute(
            "DELETE FROM library_meta WHERE key IN ('embedding_identity', 'embedding_dimension')"
        )


def write_vectors(conn: sqlite3.Connection, rows: Iterable[tuple[int, int, np.ndarray]]) -> None:
    """Insert or replace (chunk_id, book_id, vector) rows. Call inside a transaction."""
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings (chunk_id, book_id, vector) VALUES (?, ?, ?)",
        [(chunk_id, book_id, encode(vec)) for chunk_id, book_id, vec in rows],
    )
