"""The SQLite library's schema, step by step: ``MIGRATIONS`` and ``SCHEMA_VERSION``.

Migrations are keyed by ``PRAGMA user_version``: version N means the first N entries of
``MIGRATIONS`` have been applied. ``db.connect`` applies the missing ones, each in one
transaction together with the ``user_version`` bump, so a crash mid-migration leaves the
previous version intact. A migration takes a connection inside that transaction and only
changes the schema (and the rows it must rewrite); it never commits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from grimoire_beholder.errors import StorageError
from grimoire_beholder.store.token_rows import schema_v7


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
