"""Write transactions on the library: ``BEGIN IMMEDIATE`` … ``COMMIT``, and a failed write
(a full disk, read-only media) told as one line a person can act on.

Every write of the project runs inside :func:`transaction`; a server engine
(``store.server_engine``) runs its own instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, overload

from grimoire_beholder import portable
from grimoire_beholder.errors import LibraryDamagedError, ReadOnlyLibraryError, StorageError


class TransactionStore(Protocol):
    """A server engine's own transactions (``store.server_engine``)."""

    def transaction(self) -> AbstractContextManager[object]: ...


@overload
def transaction(conn: sqlite3.Connection) -> AbstractContextManager[sqlite3.Connection]: ...


@overload
def transaction(conn: TransactionStore) -> AbstractContextManager[object]: ...


@contextmanager
def transaction(conn: Any) -> Iterator[Any]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception.

    IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout
    instead of failing halfway through with a lock upgrade error. A server engine runs its
    own transaction instead.
    """
    if not isinstance(conn, sqlite3.Connection):
        with conn.transaction():
            yield conn
        return
    damage = getattr(conn, "damage", None)
    if damage is not None:  # once damage is seen, writing on around it only spreads it
        raise LibraryDamagedError(str(damage))
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise _storage_error(exc, conn) from exc
    try:
        yield conn
    except BaseException as exc:
        # SQLite rolls some failures back itself (a full disk, an I/O error); a second
        # ROLLBACK would then raise and hide the real cause.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and _is_storage_fault(exc):
            raise _storage_error(exc, conn) from exc
        raise
    else:
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise _storage_error(exc, conn) from exc


_STORAGE_FAULTS = ("full", "readonly", "read-only", "disk i/o", "unable to open")


def _is_storage_fault(exc: sqlite3.OperationalError) -> bool:
    """A write failing because of the disk or permissions, not because of our SQL."""
    return any(word in str(exc).lower() for word in _STORAGE_FAULTS)


def _storage_error(exc: sqlite3.OperationalError, conn: sqlite3.Connection) -> StorageError:
    """One line a person can act on; the transaction was rolled back, nothing half-written."""
    text = str(exc)
    if "full" in text.lower():
        return StorageError(f"{_which_disk_is_full(conn)} ({text}); nothing was "
                            "half-written — free some space and run the command again")
    if "readonly" in text.lower() or "read-only" in text.lower():
        return ReadOnlyLibraryError(f"the library database is read-only ({text}); nothing "
                                    "was written")
    return StorageError(f"cannot write to the library database: {text}")


def _which_disk_is_full(conn: sqlite3.Connection) -> str:
    """Which disk a write found full: the library's, or the temporary folder SQLite keeps its
    scratch files in (``SQLITE_TMPDIR``/``TMPDIR``), when that one is elsewhere and fuller."""
    try:
        row = conn.execute("PRAGMA main.page_count").fetchone()
        limit = conn.execute("PRAGMA main.max_page_count").fetchone()
        file = next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")
    except sqlite3.Error:
        return "the disk (or the library's size limit) is full"
    if row and limit and row[0] >= limit[0]:
        return "the library's size limit is reached (the database is full)"
    folder = Path(file).parent if file else None
    scratch = portable.sqlite_temp_folder()
    library_free = portable.free_bytes(folder) if folder else None
    scratch_free = portable.free_bytes(scratch) if scratch else None
    if (scratch is not None and scratch_free is not None and library_free is not None
            and not portable.same_disk(scratch, folder) and scratch_free < library_free):
        return (f"the temporary folder {scratch}, where SQLite keeps its scratch files, ran "
                f"out of space ({_size(scratch_free)} free now), not the library's disk "
                f"({_size(library_free)} free in {folder}); point TMPDIR at a folder with "
                f"space (e.g. TMPDIR={folder})")
    where = f" ({_size(library_free)} free in {folder})" if library_free is not None else ""
    return f"the library's disk is full{where}"


def _size(n: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n // 1024} kB"
