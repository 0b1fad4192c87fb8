"""The library's SQLite connection: storage failures as one-line errors, read-only media.

Every statement of the project runs on a :class:`LibraryConnection` (``db.connect`` makes
them), whose cursors turn SQLite's reports of a damaged file (``SQLITE_CORRUPT``,
``SQLITE_NOTADB``) or a failing disk (``SQLITE_IOERR``) into a :class:`StorageError` naming
the file, wherever they surface: while preparing, stepping or fetching. So no query path
— ``list``, a search, the MCP server's warm-up — can end in a ``DatabaseError`` traceback.

Read-only media: a WAL database is normally read through its ``-shm`` index, which SQLite
creates beside the file. On a read-only mount (or in a folder this user cannot write) it
cannot, and a ``mode=ro`` open fails with "unable to open database file". Then, if there is
no ``-wal`` holding writes not yet copied into the main file, the file alone is the whole
library and is opened ``immutable=1`` (no locks, no index). A non-empty ``-wal`` without its
``-shm`` cannot be read there at all — immutable would silently ignore it — so that is a
clear error instead.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from grimoire_beholder import portable
from grimoire_beholder.errors import LibraryDamagedError, StorageError

T = TypeVar("T")

# Python's sqlite3 says this (with no SQLite error code) of a value that is not the text it
# should be: on a library that only writes valid text, overwritten pages.
_UNDECODABLE = "Could not decode to UTF-8 column"


def storage_failure(exc: sqlite3.DatabaseError, path: object) -> StorageError | None:
    """The one-line error for a damaged file or failing disk; None for anything else
    (our own SQL mistakes, constraint violations, busy locks keep their own handling)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary is None and str(exc).startswith(_UNDECODABLE):
        primary = sqlite3.SQLITE_CORRUPT  # bytes where our schema keeps numbers or UTF-8 text
    if primary == sqlite3.SQLITE_CORRUPT:
        return LibraryDamagedError(
            f"the library file {path} is damaged ({exc}); run `grimoire-beholder check` to "
            "see the damage, then restore the file from a backup, or move it aside and ingest "
            "the books again")
    if primary == sqlite3.SQLITE_NOTADB:  # `check` cannot open it either: not sent there
        return LibraryDamagedError(
            f"the library file {path} is not a library database, or its first page is "
            f"damaged ({exc}); if it was a library, restore it from a backup, or move it "
            "aside and ingest the books again; else name another file")
    if primary == sqlite3.SQLITE_IOERR:
        return StorageError(f"the disk failed reading or writing the library file {path} "
                            f"({exc}); check the drive, then run the command again")
    return None


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def call(self: sqlite3.Cursor, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            conn = self.connection
            failure = storage_failure(exc, getattr(conn, "path", "(unknown)"))
            if failure is None:
                raise
            if isinstance(failure, LibraryDamagedError) and isinstance(conn, LibraryConnection):
                conn.damage = failure  # no more writes on this connection (transactions.py)
            raise failure from exc
    return call


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose every step maps storage failures (see :func:`storage_failure`)."""

    execute = _guarded(sqlite3.Cursor.execute)
    executemany = _guarded(sqlite3.Cursor.executemany)
    fetchone = _guarded(sqlite3.Cursor.fetchone)
    fetchmany = _guarded(sqlite3.Cursor.fetchmany)
    fetchall = _guarded(sqlite3.Cursor.fetchall)
    __next__ = _guarded(sqlite3.Cursor.__next__)


class LibraryConnection(sqlite3.Connection):
    """A connection to one library file; ``read_only_reason`` says why it cannot write
    (None when it can), ``damage`` is the first damage met (then nothing more is written)."""

    path: Path = Path()
    read_only_reason: str | None = None
    damage: LibraryDamagedError | None = None

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or GuardedCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)


def sqlite_open(target: str | Path, path: Path, *, uri: bool = False) -> LibraryConnection:
    """``sqlite3.connect`` with our connection class; a refusal becomes a StorageError."""
    try:
        conn = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False,
                               factory=LibraryConnection)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open library database {path}: {exc}") from exc
    assert isinstance(conn, LibraryConnection)
    conn.path = path
    conn.row_factory = sqlite3.Row
    return conn


@functools.cache
def require_fts5() -> None:
    """Refuse a Python whose SQLite lacks FTS5 — probed on a private in-memory database,
    so a library file that cannot be opened is never mistaken for a missing FTS5."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE fts5_probe USING fts5(x)")
    except sqlite3.OperationalError as exc:
        raise StorageError(
            f"this Python's SQLite ({sqlite3.sqlite_version}) lacks FTS5, which the library "
            "needs; use a Python built with FTS5 (the python.org and uv builds have it)"
        ) from exc
    finally:
        probe.close()


def may_write(path: Path) -> bool:
    """Whether this process may write ``path`` (the one place that asks the OS)."""
    return os.access(path, os.W_OK)


def unwritable_reason(path: Path) -> str | None:
    """Why this process cannot write the library at ``path`` (read-only media, file or
    folder permissions), or None. ``os.access`` answers for the real mount and user, so
    a read-only mount is seen even by root."""
    folder = path.parent
    if not folder.is_dir() or (may_write(folder) and (not path.exists() or may_write(path))):
        return None
    if portable.on_read_only_mount(folder):
        return "it is on a read-only file system"
    if path.exists() and not may_write(path):
        return "this user may not write the file"
    return "this user may not write its folder, where SQLite keeps its -wal and -shm files"


def _companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def needs_immutable(path: Path) -> bool:
    """True when a ``mode=ro`` open cannot work but the main file alone is the whole
    library: the folder cannot hold a new ``-shm`` and no ``-wal`` has pending writes."""
    if may_write(path.parent) or _companion(path, "-shm").exists():
        return False
    wal = _companion(path, "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StorageError(
            f"{path} is in a read-only folder with writes not yet merged from {wal.name} and "
            f"no {path.name}-shm beside it, so SQLite cannot read them there; copy the "
            "library file together with its -wal file to a writable folder and open it there")
    return True


def open_read_only(path: Path) -> LibraryConnection:
    """A connection that cannot write: ``mode=ro``, or ``immutable=1`` on read-only media."""
    base = path.resolve().as_uri()
    if needs_immutable(path):
        return sqlite_open(f"{base}?immutable=1", path, uri=True)
    with set_up(sqlite_open(f"{base}?mode=ro", path, uri=True)) as conn:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL index
    return conn


@contextmanager
def set_up(conn: LibraryConnection) -> Iterator[LibraryConnection]:
    """Close ``conn`` if preparing it fails; SQLite's own refusal becomes one StorageError
    (damage and disk failures arrive already mapped, see :func:`storage_failure`)."""
    try:
        yield conn
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StorageError(f"cannot use library database {conn.path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
