"""The PostgreSQL engine: one connection, explicit transactions, advisory locks, the stamp.

:class:`PostgresEngine` is what a PostgreSQL library's ``Library`` holds instead of a SQLite
connection; it satisfies ``store.engine.ServerEngine``, the seam the shared store functions
hand their work to when given one. The connection runs in autocommit mode, so every write is
inside an explicit :meth:`transaction` (the same checkpoint promises as on SQLite) and every
read outside one sees the latest committed data; a search reads one snapshot.

Concurrency: PostgreSQL's MVCC means readers never wait for writers. Writers take advisory
locks per book (the file's content hash while a file is ingested, the book id while it is
deleted), so several processes add different books at once; the same file twice waits.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import LibraryBusyError, LibraryDamagedError, StorageError
from grimoire_beholder.locate import redacted, scrubbed, unencoded_password
from grimoire_beholder.store.postgres import pg_schema
from grimoire_beholder.store.postgres.pg_base import READ_LOCK_WAIT_S
from grimoire_beholder.store.postgres.pg_books import BookRowsMixin
from grimoire_beholder.store.postgres.pg_check import CheckMixin
from grimoire_beholder.store.postgres.pg_folders import FolderRowsMixin
from grimoire_beholder.store.postgres.pg_lookup import LookupRowsMixin
from grimoire_beholder.store.postgres.pg_search_rows import SearchRowsMixin
from grimoire_beholder.store.postgres.pg_sources import SourceRowsMixin
from grimoire_beholder.store.postgres.pg_stages import StageRowsMixin
from grimoire_beholder.store.postgres.pg_tokens import TokenRowsMixin

if TYPE_CHECKING:
    import psycopg



def _session(url: str, *, read_only: bool) -> psycopg.Connection[Any]:
    """A connection made again after the server dropped the engine's (``pg_base``): as
    :meth:`PostgresEngine.open` sets it up, on the library it opened. A database dropped and
    made again meanwhile (a restore from a dump under way) may hold no library, or another
    schema: one-line StorageError then (it was "unexpected error (ProgrammingError): vector
    type not found in the database", with a traceback), and the next request tries again."""
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    shown = redacted(url)
    try:
        current = pg_schema.version(conn)
        if current == 0:
            raise StorageError(f"no library in the PostgreSQL database {shown} any more (it "
                               "was dropped or emptied since this process opened it)")
        if current != pg_schema.SCHEMA_VERSION:
            raise StorageError(f"the PostgreSQL library {shown} now has schema version "
                               f"{current}, not the {pg_schema.SCHEMA_VERSION} this process "
                               "opened; restart it")
        register_vector(conn)
        if read_only:
            _reading(conn)
    except psycopg.Error as exc:
        conn.close()
        raise StorageError(scrubbed(f"the PostgreSQL library {shown}: {exc}", url
                                    ).splitlines()[0]) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _reading(conn: psycopg.Connection[Any]) -> None:
    """Make ``conn`` a reader's: it cannot write, and a statement waits at most
    ``pg_base.READ_LOCK_WAIT`` for a table another session locked (an administrator's
    ``VACUUM FULL``, ``REINDEX`` or ``ALTER TABLE``), then fails in one line; a search
    waited for as long as the lock was held, and serve-mcp's every later request behind it.
    Writers keep waiting: their book locks are advisory locks, which the timeout would cut."""
    conn.execute("SET default_transaction_read_only = on")
    conn.execute(f"SET lock_timeout = '{READ_LOCK_WAIT_S * 1000:.0f}ms'")


def _lock_key(kind: str, value: object) -> int:
    """A 63-bit advisory lock key for one book (crc32 of the kind and value, per kind)."""
    return (zlib.crc32(kind.encode()) << 31) ^ zlib.crc32(f"{kind}:{value}".encode())


class PostgresEngine(BookRowsMixin, StageRowsMixin, SearchRowsMixin, CheckMixin,
                     FolderRowsMixin, SourceRowsMixin, LookupRowsMixin, TokenRowsMixin):
    """A library in one PostgreSQL database (see the module docstring)."""

    def __init__(self, conn: psycopg.Connection[Any], url: str, *, read_only: bool) -> None:
        super().__init__(conn, url, reconnect=lambda: _session(url, read_only=read_only))
        self.read_only_reason = "it was opened read-only" if read_only else None

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open(cls, url: str, *, read_only: bool = False, create: bool = True) -> PostgresEngine:
        """Connect, migrate (unless ``read_only``) and check the schema version.

        No ``postgres`` extra installed, a server that does not answer, a database without
        this library (and ``create`` false) or a newer schema: one-line StorageError."""
        try:
            import psycopg
            from pgvector.psycopg import register_vector
        except ImportError as exc:
            raise StorageError(
                "a PostgreSQL library needs the postgres extra: install "
                "grimoire-beholder-mcp[postgres] (psycopg and pgvector)") from exc
        shown = redacted(url)
        misread = unencoded_password(url)
        if misread is not None:  # libpq would take a piece of the password for the host
            raise StorageError(f"the password in the PostgreSQL URL {shown} holds {misread}; "
                               "percent-encode it, or leave it out and use PGPASSWORD or "
                               "~/.pgpass")
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StorageError(f"cannot connect to the PostgreSQL library {shown}: "
                               f"{scrubbed(first, url)}") from None
        try:
            current = pg_schema.version(conn)
            if current == 0 and (read_only or not create):
                raise StorageError(
                    f"no library in the PostgreSQL database {shown}; create it with "
                    f"`grimoire-beholder ingest FILE --library {shown}`")
            if current > pg_schema.SCHEMA_VERSION:
                raise StorageError(
                    f"the PostgreSQL library {shown} has schema version {current}, newer "
                    f"than this program's {pg_schema.SCHEMA_VERSION}; upgrade grimoire-beholder")
            if current < pg_schema.SCHEMA_VERSION:
                if read_only:
                    raise StorageError(  # check opens read-only too: not the advice
                        f"the PostgreSQL library {shown} uses an older schema ({current}); "
                        "upgrade it once with `grimoire-beholder sync --dry-run` (which "
                        "changes no book) or any command that writes")
                pg_schema.migrate(conn)
            register_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise StorageError(scrubbed(f"the PostgreSQL library {shown}: {exc}", url
                                        ).splitlines()[0]) from exc
        except LibraryDamagedError as exc:
            conn.close()
            raise LibraryDamagedError(f"the PostgreSQL library {shown}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        if read_only:
            _reading(conn)
        return cls(conn, url, read_only=read_only)

    def close(self) -> None:
        self._conn.close()

    # -- transactions and locks -------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[PostgresEngine]:
        """One transaction (a savepoint inside another): all of it commits, or none."""
        with self._thread_lock, self.conn.transaction():
            yield self

    @contextmanager
    def snapshot(self) -> Iterator[PostgresEngine]:
        """Several reads against one consistent snapshot (a repeatable-read transaction)."""
        with self._thread_lock:
            if self.conn.info.transaction_status != 0:  # inside a caller's transaction
                yield self
                return
            with self.conn.transaction():
                self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                yield self

    def change_token(self) -> tuple[int, int]:
        """Moves when a book is added or deleted, or the library is stamped or unstamped
        (the search engine asks for the query embedder again then); one cheap query."""
        row = self.execute_one(
            "SELECT coalesce(max(id), 0) * 2 + (SELECT count(*) FROM library_meta "
            "WHERE key = 'embedding_identity'), count(*) FROM books")
        return int(row[0]), int(row[1])

    @contextmanager
    def book_lock(self, kind: str, value: object, *, wait: bool = True) -> Iterator[None]:
        """Hold the advisory lock of one book (``kind``: what names it: "file", "book") for
        the block. ``wait`` false: LibraryBusyError at once when another process holds it."""
        key = _lock_key(kind, value)
        if wait:
            self.run("SELECT pg_advisory_lock(%s)", (key,))
        else:
            got = self.execute_one("SELECT pg_try_advisory_lock(%s)", (key,))[0]
            if not got:
                raise LibraryBusyError(
                    f"another process is writing this book ({kind} {value}) in "
                    f"{self.location}; wait for it to finish")
        session = self._conn  # the lock lives and dies with this session (pg_base: reconnect)
        self.session_locks += 1
        try:
            yield
        finally:
            self.session_locks -= 1
            if session is self._conn and not session.broken:
                self.run("SELECT pg_advisory_unlock(%s)", (key,))
