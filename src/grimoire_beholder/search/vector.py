"""The vector arm: every library vector in one in-memory float32 matrix, searched by dot product.

Reading 100k BLOBs per query would dominate search time, so the index is loaded once per
process and refreshed incrementally:

1. A free check — ``PRAGMA data_version`` plus the connection's ``total_changes`` — says
   whether anything at all was committed since the last refresh. Usually nothing was.
2. Otherwise the embeddings table's :class:`~grimoire_beholder.store.vectors.VectorSignature`
   (generation, count, max id, id sum; read from an index, no BLOB) tells what happened:
   unchanged → nothing; only higher chunk ids added → read and append just those rows;
   the generation moved (a book was deleted, a vector overwritten) or the counts do not
   add up → rebuild from scratch.

Rows are L2-normalised on load, so a dot product with the normalised query is the cosine.
Filters become a boolean mask over the parallel book-id array *before* the top-k
selection (``np.argpartition``), so a filtered search still returns ``k`` hits whenever the
allowed books hold that many vectors; when the allowed rows are under half the matrix only
those rows are multiplied.

This is the exact arm: libraries from ``index_writer.MIN_ROWS`` embedded chunks search the
persisted index (``search/index.py``) instead, which re-scores its int8 candidates exactly
(and reads only the nearest lists of big segments: approximate there, see ``persisted.py``).
Its cost is measured by ``bench/scale.py`` (README, "Performance").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Literal

import numpy as np

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.store import hit_queries, vectors

RefreshResult = Literal["unchanged", "appended", "rebuilt", "cleared"]


def _normalised(matrix: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rows scaled to unit length, written into ``out`` (a new array if None).

    Never a full-size temporary: ``np.linalg.norm(axis=1)`` would square the whole matrix
    first, so a 1M-row load would briefly hold three matrices; ``einsum`` sums row by row.
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    norms[norms == 0.0] = 1.0
    if out is None:
        out = np.empty(matrix.shape, dtype=np.float32)
    np.divide(matrix, norms, out=out)
    return out


class VectorIndex:
    """Normalised vectors with parallel chunk-id and book-id arrays, in chunk-id order.

    Storage grows by doubling so appends during an ingest do not copy the whole matrix each
    time. Not thread-safe on its own: the engine serialises refresh and search.
    """

    def __init__(self) -> None:
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._chunk_ids = np.zeros(0, dtype=np.int64)
        self._book_ids = np.zeros(0, dtype=np.int64)
        self._n = 0
        self._signature: vectors.VectorSignature | None = None
        self._token: tuple[int, int] | None = None
        self.rebuilds = 0  # how many full loads happened (for tests and diagnostics)

    @classmethod
    def from_arrays(cls, chunk_ids: np.ndarray, book_ids: np.ndarray,
                    matrix: np.ndarray) -> VectorIndex:
        """An index over given arrays, without a database (benchmarks, tests)."""
        index = cls()
        index._replace(np.asarray(chunk_ids, dtype=np.int64),
                       np.asarray(book_ids, dtype=np.int64), matrix)
        return index

    @property
    def size(self) -> int:
        return self._n

    @property
    def dimension(self) -> int:
        return int(self._matrix.shape[1])

    def _replace(self, chunk_ids: np.ndarray, book_ids: np.ndarray,
                 matrix: np.ndarray, *, owned: bool = False) -> None:
        """Take these arrays as the whole index. ``owned``: ``matrix`` is a fresh float32
        array nobody else holds (``read_vectors``), normalised in place so a load never holds
        two copies of the matrix; otherwise a normalised copy is made."""
        self._matrix = _normalised(matrix, out=matrix if owned else None)
        self._chunk_ids = chunk_ids.copy()
        self._book_ids = book_ids.copy()
        self._n = len(chunk_ids)

    def _append(self, chunk_ids: np.ndarray, book_ids: np.ndarray,
                matrix: np.ndarray) -> None:
        need = self._n + len(chunk_ids)
        if need > self._matrix.shape[0]:
            capacity = max(need, 2 * self._matrix.shape[0], 1024)
            grown = np.empty((capacity, self._matrix.shape[1]), dtype=np.float32)
            grown[:self._n] = self._matrix[:self._n]
            self._matrix = grown
            for name in ("_chunk_ids", "_book_ids"):
                old = getattr(self, name)
                new = np.empty(capacity, dtype=np.int64)
                new[:self._n] = old[:self._n]
                setattr(self, name, new)
        _normalised(matrix, out=self._matrix[self._n:need])
        self._chunk_ids[self._n:need] = chunk_ids
        self._book_ids[self._n:need] = book_ids
        self._n = need

    def _clear(self) -> None:
        self._replace(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                      np.zeros((0, 0), dtype=np.float32))

    def refresh(self, conn: sqlite3.Connection) -> RefreshResult:
        """Bring the index up to date with the database, as cheaply as possible."""
        token = hit_queries.change_token(conn)
        if token == self._token:
            return "unchanged"
        with hit_queries.snapshot(conn):
            result = self._refresh(conn)
        self._token = token
        return result

    def _refresh(self, conn: sqlite3.Connection) -> RefreshResult:
        stamp = vectors.get_stamp(conn)
        sig = vectors.signature(conn)
        old = self._signature
        self._signature = sig
        if stamp is None or sig.count == 0:
            self._clear()
            return "cleared"
        dimension = stamp[1]
        if old == sig and self.dimension == dimension:
            return "unchanged"
        if (old is not None and self.dimension == dimension and self._n == old.count
                and sig.generation == old.generation and sig.count > old.count):
            chunk_ids, book_ids, matrix = vectors.read_vectors(conn, dimension, old.max_id)
            if (old.count + len(chunk_ids) == sig.count
                    and old.id_sum + int(chunk_ids.sum()) == sig.id_sum):
                self._append(chunk_ids, book_ids, matrix)
                return "appended"
        self._clear()  # drop the old matrix before reading the new one: one copy at a time
        chunk_ids, book_ids, matrix = vectors.read_vectors(conn, dimension)
        self._replace(chunk_ids, book_ids, matrix, owned=True)
        self.rebuilds += 1
        return "rebuilt"

    def search(self, query: np.ndarray, k: int, book_ids: Collection[int] | None = None,
               chunk_ids: Collection[int] | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``k`` nearest vectors within ``book_ids``, best first.

        None means every book; an empty collection means none (empty result).
        ``chunk_ids`` (a reading position) narrows further, in the same mask.
        """
        n = self._n
        if n == 0 or k <= 0 or (book_ids is not None and not book_ids):
            return []
        if chunk_ids is not None and not chunk_ids:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dimension:
            raise EmbeddingMismatchError(
                f"the query vector has {q.shape[0]} dimensions but the library's vectors "
                f"have {self.dimension}; search with the model the library was embedded with"
            )
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or not np.isfinite(norm):
            return []
        q = q / norm
        if book_ids is None and chunk_ids is None:
            return self._top(np.arange(n), self._matrix[:n] @ q, k)
        mask = np.ones(n, dtype=bool)
        if book_ids is not None:
            mask &= np.isin(self._book_ids[:n], np.fromiter(book_ids, dtype=np.int64))
        if chunk_ids is not None:
            mask &= np.isin(self._chunk_ids[:n], np.fromiter(chunk_ids, dtype=np.int64))
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        if rows.size * 2 <= n:  # a small subset: gather its rows, skip the rest of the scan
            return self._top(rows, self._matrix[rows] @ q, k)
        scores = self._matrix[:n] @ q
        return self._top(rows, scores[rows], k)

    def _top(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The best ``k`` of ``scores`` (aligned with matrix ``rows``), best first; a row
        whose score is not finite (a NaN vector) is never among them."""
        finite = np.isfinite(scores)
        if not finite.all():
            rows, scores = rows[finite], scores[finite]
        k = min(k, scores.shape[0])
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(k)
        order = top[np.lexsort((rows[top], -scores[top]))]
        return [(int(self._chunk_ids[rows[i]]), float(scores[i])) for i in order]
