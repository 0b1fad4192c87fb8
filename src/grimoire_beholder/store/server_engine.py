"""The storage seam: what the shared code needs from a library that lives in a server.

A SQLite library is a ``sqlite3.Connection`` (``store/db.py``) and every store function
runs its SQL on it. A library in a server database (PostgreSQL: ``store/postgres/``) is an
engine object satisfying :class:`ServerEngine`; the same store functions hand their work to
it (``if not isinstance(conn, sqlite3.Connection): return conn.…``), so ingest's model
stages, the search engine, fusion, the role prior, the printed-index lift and passages run
unchanged on either. Each store module states its own part of the seam as a small Protocol
(``hit_queries.HitStore``, ``chunk_progress.StageStore``, …); this one joins them with what
``Library`` itself calls. The SQLite path pays one ``isinstance`` per store call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from grimoire_beholder.store.book_rows import BookStore
from grimoire_beholder.store.chunk_progress import StageStore
from grimoire_beholder.store.folders import FolderStore
from grimoire_beholder.store.fts import KeywordStore
from grimoire_beholder.store.hit_queries import HitStore
from grimoire_beholder.store.index_entries import IndexEntryStore
from grimoire_beholder.store.reading_positions import PositionStore
from grimoire_beholder.store.role_rows import RoleStore
from grimoire_beholder.store.source_rows import SourceStore
from grimoire_beholder.store.text_spans import SpanStore
from grimoire_beholder.store.token_rows import TokenStore
from grimoire_beholder.store.transactions import TransactionStore
from grimoire_beholder.store.vectors import StampStore

if TYPE_CHECKING:
    import numpy as np

    from grimoire_beholder.store.check import LibraryCheck


class ServerEngine(BookStore, StageStore, TransactionStore, HitStore, IndexEntryStore,
                   FolderStore, SourceStore, KeywordStore, PositionStore, RoleStore,
                   SpanStore, StampStore, TokenStore, Protocol):
    """A library in a server database (see the module docstring)."""

    read_only_reason: str | None

    @property
    def location(self) -> str:
        """Where the library is, for messages (a URL without its password)."""
        ...

    def close(self) -> None: ...

    def book_lock(self, kind: str, value: object, *, wait: bool = True
                  ) -> AbstractContextManager[None]:
        """Hold one book's writer lock (other books' writers go on)."""
        ...

    def nearest(self, query: np.ndarray, k: int, book_ids: Collection[int] | None,
                chunk_ids: Collection[int] | None) -> list[tuple[int, float]]:
        """The vector arm: (chunk id, cosine similarity) best first within the filters."""
        ...

    def check(self) -> LibraryCheck:
        """The library's consistency rules, as ``store.check.check`` states them."""
        ...


Store = sqlite3.Connection | ServerEngine
