"""The statement helpers every part of the PostgreSQL engine shares: one connection, used by
one thread at a time (a search's two arms run on two threads), parameters always bound."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import StorageError
from grimoire_beholder.locate import redacted

if TYPE_CHECKING:
    import psycopg

Params = tuple[object, ...] | list[object]


class PgBase:
    def __init__(self, conn: psycopg.Connection[Any], url: str) -> None:
        self.conn = conn
        self.url = url
        self._thread_lock = threading.RLock()

    @contextmanager
    def failures(self) -> Iterator[None]:
        """A lost connection or a server that stopped: one-line StorageError naming the
        library (our own SQL mistakes and constraint violations keep their type)."""
        import psycopg

        try:
            yield
        except psycopg.OperationalError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StorageError(f"the PostgreSQL library {self.location} failed: {first}"
                               ) from exc

    @property
    def location(self) -> str:
        """The library's URL without its password."""
        return redacted(self.url)

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        with self._thread_lock, self.failures():
            return [tuple(r) for r in self.conn.execute(sql, params)]

    def execute_one(self, sql: str, params: Params = ()) -> tuple[Any, ...]:
        found = self.rows(sql, params)
        assert found, sql
        return found[0]

    def run(self, sql: str, params: Params = ()) -> int:
        """Execute a write; the number of rows it touched."""
        with self._thread_lock, self.failures():
            return int(self.conn.execute(sql, params).rowcount)

    def run_many(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        if rows:
            with self._thread_lock, self.failures(), self.conn.cursor() as cursor:
                cursor.executemany(sql, rows)
