"""Opening the SQLite library: WAL, foreign keys, busy timeout, FTS5 check, schema version.

The connection class, storage-failure mapping and read-only media live in ``connection.py``;
the schema's steps in ``migrations.py``; write transactions in ``transactions.py``.

This package (``store``) is the only place in the project that speaks SQL.

A writable open applies the migrations the library lacks (``migrations.MIGRATIONS``, keyed
by ``PRAGMA user_version``), each in one transaction together with the ``user_version``
bump, so a crash mid-migration leaves the previous version intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from grimoire_beholder.errors import StorageError
from grimoire_beholder.store.connection import (
    LibraryConnection,
    open_read_only,
    require_fts5,
    set_up,
    sqlite_open,
    unwritable_reason,
)
from grimoire_beholder.store.migrations import MIGRATIONS, SCHEMA_VERSION
from grimoire_beholder.store.transactions import transaction

BUSY_TIMEOUT_MS = 30_000


def connect(path: Path, *, read_only: bool = False, create: bool = True) -> LibraryConnection:
    """Open (creating and migrating if needed) the library database at ``path``.

    ``read_only`` opens with SQLite's ``mode=ro``: no statement on that connection can
    write, whatever the code above it does. A read-only open never creates or migrates;
    without ``create`` no library is made in an empty SQLite database either.
    A library this process cannot write (read-only media, permissions) is opened read-only
    too, whatever was asked, so reading commands still work there; the connection's
    ``read_only_reason`` says why writes will be refused.
    """
    path = Path(path)
    require_fts5()
    reason = "it was opened read-only" if read_only else unwritable_reason(path)
    if reason is None:
        return _open_writable(path, create=create)
    if not path.is_file():
        if read_only:
            raise StorageError(f"no library database at {path} (ingest a book first)")
        raise StorageError(f"cannot create a library at {path}: {reason}")
    with set_up(open_read_only(path)) as conn:
        conn.read_only_reason = reason
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _check_version(conn, path, allow_older=False,
                       unwritable=unwritable_reason(path) if read_only else reason)
    return conn


def _open_writable(path: Path, *, create: bool) -> LibraryConnection:
    if not path.parent.is_dir():
        raise StorageError(f"the library's directory does not exist: {path.parent}")
    with set_up(sqlite_open(path, path)) as conn:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # before WAL: a foreign file stays as is
        _check_version(conn, path, allow_older=True, create=create)
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            raise StorageError(f"cannot write to library database {path}: {exc}") from exc
        if str(mode).lower() != "wal":
            raise StorageError(f"cannot switch {path} to WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        _apply_test_size_limit(conn)
        _migrate(conn, path)
    return conn


MAX_PAGES_ENV = "GRIMOIRE_BEHOLDER_MAX_PAGE_COUNT"


def _apply_test_size_limit(conn: sqlite3.Connection) -> None:
    """Test-only hook: ``GRIMOIRE_BEHOLDER_MAX_PAGE_COUNT=N`` caps the file at N pages.

    That is how the reliability tests simulate a full disk (SQLite then fails writes with
    SQLITE_FULL exactly as on a real one). Unset — always, outside tests — it does nothing.
    """
    raw = os.environ.get(MAX_PAGES_ENV, "")
    if raw.isdigit():
        conn.execute(f"PRAGMA max_page_count = {int(raw)}")


def _check_version(conn: sqlite3.Connection, path: Path, *, allow_older: bool,
                   unwritable: str | None = None, create: bool = True) -> int:
    """The library's schema version; an error for one this code cannot read. An older
    one is upgraded by a writable open, which media this process cannot write never get."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    _refuse_no_library(conn, path, version, creating=create and allow_older and unwritable is None)
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{path} was written by a newer grimoire-beholder (schema {version}, this one "
            f"knows {SCHEMA_VERSION}); upgrade grimoire-beholder"
        )
    if version < SCHEMA_VERSION and not allow_older:
        if unwritable is not None:
            raise StorageError(
                f"{path} uses an older schema ({version}) and cannot be upgraded here: "
                f"{unwritable}; upgrade a writable copy once with `grimoire-beholder sync "
                "--dry-run` (which changes no book)")
        raise StorageError(  # reading commands and the MCP server open read-only
            f"{path} uses an older schema ({version}); upgrade it once with "
            "`grimoire-beholder sync --dry-run` (which changes no book) or any command "
            "that writes")
    return version


# The tables every library has had since schema 1 (schema.sql), whatever its version.
_LIBRARY_TABLES = frozenset({"library_meta", "books", "chapters", "sections", "chunks"})


def _refuse_no_library(conn: sqlite3.Connection, path: Path, version: int, *,
                       creating: bool) -> None:
    """Refuse a database that is not a library (nothing is written to it): one with
    another program's tables — at schema 0 any table (schema 1 is made in the transaction
    that sets it), at any other ``user_version`` (which other programs set too) one lacking
    a library's tables; and an empty one at schema 0 unless ``creating`` a library there."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name")]
    if (tables and version == 0) or (version and not _LIBRARY_TABLES.issubset(tables)):
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise StorageError(
            f"{path} is an SQLite database of another program (its tables: {shown or 'none'}), "
            "not a grimoire-beholder library; nothing was written to it: name another file or "
            "folder")
    if not tables and not creating:
        raise StorageError(f"{path} holds no library yet (an empty SQLite database); "
                           "`grimoire-beholder ingest` creates one there")


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    version = _check_version(conn, path, allow_older=True)
    while version < SCHEMA_VERSION:
        with transaction(conn):
            # Re-read inside the write lock: another process may have migrated meanwhile.
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version >= SCHEMA_VERSION:
                break
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        version += 1


def ids_param(ids: Iterable[int]) -> str:
    """A list of ids as one bound parameter, for ``IN (SELECT value FROM json_each(?))``: no
    SQL text depends on the list's length, and only integers get in."""
    return json.dumps([int(i) for i in ids])

