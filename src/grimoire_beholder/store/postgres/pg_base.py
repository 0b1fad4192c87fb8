"""The statement helpers every part of the PostgreSQL engine shares: one connection, used by
one thread at a time (a search's two arms run on two threads), parameters always bound.

**Reconnecting.** A long-running process (``serve-mcp`` on stdio or over HTTP) outlives its
server's restarts. :attr:`PgBase.conn` is the connection as it is *now*: outside a
transaction, before handing it out, it reads whatever the server sent meanwhile without
waiting (libpq's ``PQconsumeInput``: a restarted server's "terminating connection" and
end of stream), and a connection found dropped is made again (``reconnect``). So the first
request after a restart is answered; a request caught *by* the restart fails once with the
one-line StorageError below, and the next one reconnects. Never inside a transaction (its
work is gone with the old session: it fails whole), and never while this process holds a
book's advisory lock (the lock went with the old session, so another writer may hold it
now: the command fails instead of writing on without it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import StorageError
from grimoire_beholder.locate import redacted

if TYPE_CHECKING:
    import psycopg

Params = tuple[object, ...] | list[object]
READ_LOCK_WAIT_S = 10.0  # how long a reader's statement waits for a table another session locked
_IN_TRANSACTION = (1, 2, 3)  # libpq's PQTRANS_ACTIVE, INTRANS, INERROR


def _dropped(conn: psycopg.Connection[Any]) -> bool:
    """Whether the server has closed ``conn``, judged without a round trip: what it sent
    while the connection was idle is read (twice: a restart's notice, then the end of the
    stream) and a closed stream shows as an error."""
    import psycopg

    if conn.closed or conn.broken:
        return True
    try:
        for _ in range(2):
            conn.pgconn.consume_input()
    except psycopg.OperationalError:
        return True
    return bool(conn.pgconn.status)  # CONNECTION_OK is 0


class PgBase:
    def __init__(self, conn: psycopg.Connection[Any], url: str, reconnect: Callable[
                 [], psycopg.Connection[Any]] | None = None) -> None:
        self._conn = conn
        self.url = url
        self._reconnect = reconnect
        self._thread_lock = threading.RLock()
        self.session_locks = 0  # advisory locks this process holds on this session

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The connection, made again first when the server dropped it (see the module
        docstring); inside a transaction, the one the transaction runs on."""
        conn = self._conn
        if self._reconnect is None or conn.info.transaction_status in _IN_TRANSACTION:
            return conn
        with self._thread_lock:
            conn = self._conn
            if not _dropped(conn):
                return conn
            if self.session_locks:
                raise StorageError(
                    f"the PostgreSQL library {self.location} dropped the connection while "
                    "this process held a book's lock; nothing more was written: run the "
                    "command again")
            conn.close()
            with self.failures():
                self._conn = self._reconnect()
            return self._conn

    @contextmanager
    def failures(self) -> Iterator[None]:
        """A lost connection or a server that stopped, or a user the database does not
        allow this statement (a role that may only read, asked to write): one-line
        StorageError naming the library (our own SQL mistakes and constraint violations
        keep their type). A transaction it interrupts is rolled back whole."""
        import psycopg

        try:
            yield
        except psycopg.errors.LockNotAvailable as exc:
            raise StorageError(
                f"the PostgreSQL library {self.location} stayed locked by another session "
                "(an administrator's VACUUM FULL, REINDEX or ALTER TABLE?) longer than this "
                "command waits; try again once it is done") from exc
        except psycopg.OperationalError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StorageError(f"the PostgreSQL library {self.location} failed: {first}"
                               ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StorageError(f"the PostgreSQL library {self.location} refused: {first} "
                               "(the user in the URL lacks the rights for this command)"
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
