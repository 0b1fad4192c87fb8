"""Opening the SQLite library: WAL, foreign keys, busy timeout, FTS5 check, migrations.

The connection class, storage-failure mapping and read-only media live in ``connection.py``.

This package (``store``) is the only place in the project that speaks SQL.

Migrations are keyed by ``PRAGMA user_version``: version N means the first N entries of
``MIGRATIONS`` have been applied. Each migration runs in one transaction together with the
``user_version`` bump, so a crash mid-migration leaves the previous version intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, overload

from grimoire_beholder import portable
from grimoire_beholder.errors import LibraryDamagedError, ReadOnlyLibraryError, StorageError
from grimoire_beholder.store.connection import (
    LibraryConnection,
    open_read_only,
    require_fts5,
    set_up,
    sqlite_open,
    unwritable_reason,
)
from grimoire_beholder.store.token_rows import schema_v7

BUSY_TIMEOUT_MS = 30_000


def _schema_v1(conn: sqlite3.Connection) -> None:
    from importlib import resources  # a new library only: a search opens an existing one

    sql = resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")
    for statement in _split_sql(sql):
        conn.execute(statement)


def _split_sql(script: str) -> list[str]:
    """Split a script of statements (no triggers) into single statements for ``execute``."""
    statements, current = [], []
    for line in script.splitlines():
        stripped = line.split("--", 1)[0].rstrip()
        if not stripped:
            continue
        current.append(stripped)
        if stripped.endswith(";") and sqlite3.complete_statement("\n".join(current)):
            statements.append("\n".join(current))
            current = []
    return statements


def _schema_v2(conn: sqlite3.Connection) -> None:
    """Folder libraries: where each book was ingested from, and the synced roots.

    ``source_root`` is the folder given to ``ingest DIR`` (NULL for a single-file ingest) and
    ``source_group`` the top-level folder under it ("" for files directly in the root), so
    search can filter by either. ``folder_roots`` remembers each root with its include and
    exclude globs, so a later ``sync`` finds new files with the same rules.
    """
    conn.execute("ALTER TABLE books ADD COLUMN source_root TEXT")
    conn.execute("ALTER TABLE books ADD COLUMN source_group TEXT NOT NULL DEFAULT ''")
    conn.execute("CREATE INDEX IF NOT EXISTS books_root ON books (source_root)")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS folder_roots (
               path     TEXT PRIMARY KEY,
               include  TEXT NOT NULL DEFAULT '[]',  -- JSON list of globs
               exclude  TEXT NOT NULL DEFAULT '[]',  -- JSON list of globs
               added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
           )""")


def _schema_v3(conn: sqlite3.Connection) -> None:
    """A book's id and slug can never name two books (see naming.py).

    All-digit slugs (``1.md`` → ``1``) read as ids, so they are renamed ``book-1`` (then
    ``book-1-2``… if taken), and a trigger refuses a new one. ``library_meta.last_book_id``
    starts the high-water mark that keeps a deleted book's id from being given again.
    """
    from grimoire_beholder.naming import unambiguous_slug

    taken = {r[0] for r in conn.execute("SELECT slug FROM books")}
    for book_id, slug in conn.execute(
            "SELECT id, slug FROM books WHERE slug NOT GLOB '*[^0-9]*' ORDER BY id").fetchall():
        base = new = unambiguous_slug(slug) if slug else f"book-{book_id}"
        n = 2
        while new in taken:
            new, n = f"{base}-{n}", n + 1
        conn.execute("UPDATE books SET slug = ? WHERE id = ?", (new, book_id))
        taken.add(new)
    for event in ("INSERT", "UPDATE OF slug"):
        conn.execute(
            f"CREATE TRIGGER IF NOT EXISTS books_slug_is_not_an_id_{event.split()[0].lower()} "
            f"BEFORE {event} ON books WHEN NEW.slug NOT GLOB '*[^0-9]*' BEGIN SELECT "
            "RAISE(ABORT, 'a book slug cannot be all digits: it would read as a book id'); END")
    conn.execute("INSERT OR REPLACE INTO library_meta (key, value) "
                 "SELECT 'last_book_id', coalesce(max(id), 0) FROM books")


def _schema_v4(conn: sqlite3.Connection) -> None:
    """The change log the persisted search index catches up from (``store.index_source``).

    Every write of an embedding or an FTS row appends the chunk id to ``search_log``, in the
    writer's own transaction, so the log can never disagree with the data: triggers cover
    the ``embeddings`` table (cascaded deletes included) and ``store.fts`` logs its own
    writes. ``AUTOINCREMENT`` keeps ``seq`` increasing even after old entries are pruned.
    ``library_id`` tells this library's index files from another library's.
    """
    conn.execute("CREATE TABLE IF NOT EXISTS search_log ("
                 "seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL)")
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        conn.execute(f"CREATE TRIGGER IF NOT EXISTS embeddings_log_{event.lower()} "
                     f"AFTER {event} ON embeddings BEGIN "
                     f"INSERT INTO search_log (chunk_id) VALUES ({row}.chunk_id); END")
    conn.execute("INSERT OR IGNORE INTO library_meta (key, value) "
                 "VALUES ('library_id', lower(hex(randomblob(16))))")


def _schema_v5(conn: sqlite3.Connection) -> None:
    """Section roles and the printed back-of-book index.

    ``sections.role`` says what part of the book a section is (``structure.roles.ROLES``:
    body, front_matter, contents, index, notes, bibliography, glossary) and
    ``sections.hints`` keeps the markup it was judged by (EPUB ``epub:type`` tokens and
    landmarks, space-separated), so roles can be judged again from stored data when the
    rules improve. ``index_entries`` holds a printed index read as data: one row per term
    and locator, with the printed pages and the physical pages they resolve to. Existing
    books get their roles and entries from ``Library`` on its next writable open (it
    compares ``library_meta.derived_version`` with the code's).
    """
    columns = {r[1] for r in conn.execute("PRAGMA table_info(sections)")}
    if "role" not in columns:  # idempotent: a library rewound by hand may have them already
        conn.execute("ALTER TABLE sections ADD COLUMN role TEXT NOT NULL DEFAULT 'body'")
    if "hints" not in columns:
        conn.execute("ALTER TABLE sections ADD COLUMN hints TEXT NOT NULL DEFAULT ''")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS index_entries (
               id         INTEGER PRIMARY KEY,
               book_id    INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
               term       TEXT NOT NULL,     -- as printed
               parent     TEXT,              -- the head term of a sub-entry
               norm       TEXT NOT NULL,     -- parent and term normalised, for matching
               printed    TEXT,              -- "45–47"; NULL for a see-only entry
               page_start INTEGER,           -- physical pages; NULL when unresolved
               page_end   INTEGER,
               see        TEXT NOT NULL DEFAULT '', -- "see"/"see also" targets, "; "-joined
               spread     REAL NOT NULL DEFAULT 0   -- share of the book's pages naming the term
           )""")
    conn.execute("CREATE INDEX IF NOT EXISTS index_entries_norm ON index_entries (norm)")
    conn.execute("CREATE INDEX IF NOT EXISTS index_entries_book ON index_entries (book_id)")


_OLD_TYPES = "CHECK (source_type IN ('pdf', 'epub', 'markdown', 'text'))"
_NEW_TYPES = "CHECK (source_type IN ('pdf', 'epub', 'markdown', 'text', 'html', 'docx'))"


def _schema_v6(conn: sqlite3.Connection) -> None:
    """HTML and Word books; books from a Calibre library or a Zotero data folder.

    ``books.source_type`` also allows 'html' and 'docx'. SQLite cannot alter a CHECK
    constraint, and rebuilding ``books`` would cascade-delete every chapter under the
    foreign keys, so the table's stored definition is edited in place the way SQLite's
    ALTER TABLE documentation describes for constraint changes that leave the stored rows
    valid (``writable_schema``, a bumped ``schema_version``, then an integrity check).
    ``source_libraries`` remembers each external library ingested (so ``sync`` follows
    it); ``book_sources`` ties a book to its item there (Calibre book id, Zotero item key),
    the link that opens it, its metadata as JSON and that metadata's hash (what a sync
    compares); ``book_labels`` holds its tags, collections and series for the filters.
    """
    sql = conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' "
                       "AND name = 'books'").fetchone()[0]
    if _NEW_TYPES not in sql:
        if _OLD_TYPES not in sql:
            raise StorageError("cannot upgrade the library: its books table is not the "
                               "one this version wrote")
        version = int(conn.execute("PRAGMA schema_version").fetchone()[0])
        conn.execute("PRAGMA writable_schema = ON")
        try:
            conn.execute("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' "
                         "AND name = 'books'", (sql.replace(_OLD_TYPES, _NEW_TYPES),))
            conn.execute(f"PRAGMA schema_version = {version + 1}")
        finally:
            conn.execute("PRAGMA writable_schema = OFF")
        if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise StorageError("cannot upgrade the library: integrity check failed")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS source_libraries (
               path     TEXT PRIMARY KEY,    -- the library folder, resolved
               kind     TEXT NOT NULL CHECK (kind IN ('calibre', 'zotero')),
               added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
           )""")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS book_sources (
               book_id  INTEGER PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
               library  TEXT NOT NULL REFERENCES source_libraries(path) ON DELETE CASCADE,
               item     TEXT NOT NULL,              -- Calibre book id, Zotero item key
               link     TEXT NOT NULL,              -- calibre://… or zotero://…
               metadata TEXT NOT NULL DEFAULT '{}', -- JSON, see sources/items.py
               metadata_hash TEXT NOT NULL DEFAULT '',
               UNIQUE (library, item)
           )""")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS book_labels (
               book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
               kind    TEXT NOT NULL CHECK (kind IN ('tag', 'collection', 'series')),
               value   TEXT NOT NULL,
               PRIMARY KEY (book_id, kind, value)
           )""")
    conn.execute("CREATE INDEX IF NOT EXISTS book_labels_value "
                 "ON book_labels (kind, value COLLATE NOCASE)")


def _schema_v8(conn: sqlite3.Connection) -> None:
    """``sections_role``: a covering index of each section's role, so that search reads
    its candidates' roles without reading their sections' text (ARCHITECTURE.md,
    "Search")."""
    conn.execute("CREATE INDEX IF NOT EXISTS sections_role ON sections (id, role)")


# Forward migrations, applied in order; never edit one that has shipped, append a new one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _schema_v1, _schema_v2, _schema_v3, _schema_v4, _schema_v5, _schema_v6,
    schema_v7,  # access tokens (store/token_rows.py)
    _schema_v8]
SCHEMA_VERSION = len(MIGRATIONS)


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
