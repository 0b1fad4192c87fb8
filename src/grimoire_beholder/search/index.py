"""What the engine searches: the persisted index when it is valid, else the exact arms.

Below ``index_writer.MIN_ROWS`` embedded chunks, or whenever the persisted index is missing,
foreign, stale beyond the change log or inconsistent with the library, vectors are scanned
exactly from the in-memory float32 matrix (``search/vector.py``) and keywords go to FTS5 —
exactly what happens in a small library, only slower. The persisted index is never written
here (readers, the MCP server among them, only read); writing commands keep it current
(``search/index_writer.py``).

Refreshing is cheap when nothing changed: the connection's change token and the
manifest's file identity are compared first. After a commit, the index catches up from the
change log (``PersistedIndex.catch_up``); after a writer published a new manifest, it is
reopened (memory-mapped: milliseconds).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Literal

import numpy as np

from grimoire_beholder.errors import EmbeddingMismatchError
from grimoire_beholder.search import segment_files
from grimoire_beholder.search.index_writer import min_rows
from grimoire_beholder.search.persisted import PersistedIndex
from grimoire_beholder.search.vector import RefreshResult, VectorIndex
from grimoire_beholder.store import hit_queries, index_source, vectors

log = logging.getLogger(__name__)

# Which vectors a search reads: the persisted index's, or the exact arms' (with how the
# in-memory matrix was brought up to date, or "exact" when it was not needed).
IndexState = Literal["persisted", "exact"] | RefreshResult


class SearchIndex:
    """The vector arm's index and the keyword arm's fast path for one library."""

    def __init__(self, db_path: Path | None = None) -> None:
        self._folder = segment_files.folder_for(db_path) if db_path is not None else None
        self._min_rows = min_rows()
        self._exact = VectorIndex()
        self._persisted: PersistedIndex | None = None
        self._manifest: tuple[int, int, int] | None = None
        self._token: tuple[int, int] | None = None
        self._exact_fresh = False
        self._damaged: tuple[int, int, int] | None = None  # a manifest found damaged

    @property
    def persisted(self) -> bool:
        """Whether searches use the persisted index (else the exact arms)."""
        return self._persisted is not None

    @property
    def size(self) -> int:
        return self._persisted.size if self._persisted else self._exact.size

    @property
    def dimension(self) -> int:
        return self._persisted.dimension if self._persisted else self._exact.dimension

    @property
    def rebuilds(self) -> int:
        return self._exact.rebuilds

    def refresh(self, conn: sqlite3.Connection, *, exact_vectors: bool = True
                ) -> IndexState:
        """Bring the index up to date with the database, as cheaply as possible.

        ``exact_vectors=False`` (keyword-only searches) skips loading the exact vector
        matrix when the persisted index cannot be used.
        """
        token = hit_queries.change_token(conn)
        manifest = segment_files.manifest_id(self._folder) if self._folder else None
        if token == self._token and manifest == self._manifest and (
                self._persisted is not None or not exact_vectors or self._exact_fresh):
            return "unchanged"
        with hit_queries.snapshot(conn):
            result = self._refresh(conn, manifest, exact_vectors)
        self._token, self._manifest = token, manifest
        self._exact_fresh = self._persisted is None and exact_vectors
        return result

    def _refresh(self, conn: sqlite3.Connection, manifest: tuple[int, int, int] | None,
                 exact_vectors: bool) -> IndexState:
        if (self._persisted is not None and manifest == self._manifest
                and index_source.log_position(conn) == self._persisted.seen_seq):
            # Nothing was logged since the last full check (a commit elsewhere, e.g. a
            # summary): skip the signature scan, ~0.1 s at 1M chunks.
            return "persisted"
        sig = vectors.signature(conn)
        if self._folder is None or manifest is None or sig.count < self._min_rows:
            self._persisted = None
            return self._exact.refresh(conn) if exact_vectors else "exact"
        if manifest is not None and manifest == self._damaged:
            self._persisted = None  # met impossible values: the exact arms until rewritten
        elif self._persisted is None or manifest != self._manifest:
            self._persisted = PersistedIndex.open(self._folder, conn)
        if self._persisted is not None and self._persisted.catch_up(conn, sig):
            self._exact = VectorIndex()  # free the exact matrix, if one was loaded
            return "persisted"
        self._persisted = None
        return self._exact.refresh(conn) if exact_vectors else "exact"

    def search(self, query: np.ndarray, k: int, book_ids: Collection[int] | None = None,
               chunk_ids: Collection[int] | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``k`` nearest vectors within ``book_ids`` (and
        ``chunk_ids``, a reading position, when given), best first."""
        index = self._persisted
        if index is None:
            return self._exact.search(query, k, book_ids, chunk_ids)
        if index.size == 0 or k <= 0 or any(ids is not None and not ids
                                            for ids in (book_ids, chunk_ids)):
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != index.dimension:
            raise EmbeddingMismatchError(
                f"the query vector has {q.shape[0]} dimensions but the library's vectors "
                f"have {index.dimension}; search with the model the library was embedded with")
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or not np.isfinite(norm):
            return []
        try:
            return index.vector_search(q / norm, k, _ids(book_ids), _ids(chunk_ids))
        except (segment_files.IndexDamage, IndexError) as exc:
            self._set_aside()
            raise segment_files.IndexDamage(str(exc)) from exc

    def keyword(self, conn: sqlite3.Connection, expression: str, limit: int,
                book_ids: Collection[int] | None) -> list[tuple[int, float]] | None:
        """FTS5's ranking of a word-table expression from ``search.keyword`` — (chunk id,
        bm25), best first — or None when FTS5 itself must answer (no valid index, or an
        expression that is not a plain OR of single-term words, such as a prefix)."""
        index = self._persisted
        if index is None:
            return None
        tokens = _plain_tokens(expression)
        if tokens is None:
            return None
        terms = index.tokenizer.query_terms(tokens)
        if any(len(t) != 1 for t in terms):
            return None  # a token FTS5 reads as a phrase of several terms, or as none
        try:
            return index.keyword_search([segment_files.term_hash(t[0]) for t in terms],
                                        limit, _ids(book_ids), index_source.fts_totals(conn))
        except (segment_files.IndexDamage, IndexError):
            self._set_aside()
            return None  # FTS5 answers

    def _set_aside(self) -> None:
        """The persisted index met impossible values: not used again until it is rewritten
        (the next writing command rebuilds it, see index_writer)."""
        log.warning("the search index beside the library is damaged; searching without it "
                    "until the next writing command rebuilds it")
        self._damaged = self._manifest
        self._persisted = None
        self._token = None  # the next refresh loads the exact arms


def _ids(ids: Collection[int] | None) -> np.ndarray | None:
    return None if ids is None else np.unique(np.fromiter(ids, dtype=np.int64))


def _plain_tokens(expression: str) -> list[str] | None:
    """The tokens of ``"a" OR "b" OR …`` (as ``search.keyword`` writes it), else None."""
    tokens = []
    for part in expression.split(" OR "):
        if len(part) < 2 or not (part.startswith('"') and part.endswith('"')):
            return None
        inner = part[1:-1]
        if '"' in inner:
            return None
        tokens.append(inner)
    return tokens
