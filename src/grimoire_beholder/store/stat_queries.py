"""Token-savings counters: a tiny SQLite file *beside* the library, plus book sizes.

Why a separate file: the MCP server opens the library with SQLite's read-only mode, so it
cannot write a counter there — and the library file should change only when its books do.
``book.db`` gets ``book.stats.db`` next to it, created on first use by whichever process
searches (CLI, MCP server, hooks). Writing it is best effort: a read-only folder, a locked
or corrupt file only means the search is not counted; it never fails the search.

One row of running totals (not a per-search log) keeps the file a few KB forever.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from grimoire_beholder.store.db import ids_param

_SCHEMA = """CREATE TABLE IF NOT EXISTS search_totals (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    searches      INTEGER NOT NULL DEFAULT 0,
    chars_served  INTEGER NOT NULL DEFAULT 0,  -- passage characters handed out
    chars_books   INTEGER NOT NULL DEFAULT 0,  -- full size of the books those came from
    first_at      TEXT,
    last_at       TEXT
)"""


def stats_path(database_path: Path) -> Path:
    """``book.db`` → ``book.stats.db``, in the same folder."""
    return database_path.with_name(database_path.stem + ".stats.db")


def book_chars(conn: sqlite3.Connection, book_ids: Iterable[int]) -> dict[int, int]:
    """Characters of each book's section texts (the whole book as parsed), by book id."""
    rows = conn.execute(
        "SELECT book_id, sum(length(text)) FROM sections "
        "WHERE book_id IN (SELECT value FROM json_each(?)) GROUP BY book_id",
        (ids_param(book_ids),)).fetchall()
    return {int(r[0]): int(r[1] or 0) for r in rows}


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=0.5)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")  # counters: losing the last few is acceptable
    conn.execute(_SCHEMA)
    return conn


def record(path: Path, chars_served: int, chars_books: int) -> None:
    """Add one search to the totals (raises sqlite3.Error/OSError; callers swallow them)."""
    conn = _open(path)
    try:
        conn.execute(
            "INSERT INTO search_totals (id, searches, chars_served, chars_books, first_at, "
            "last_at) VALUES (1, 1, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), "
            "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) ON CONFLICT (id) DO UPDATE SET "
            "searches = searches + 1, chars_served = chars_served + excluded.chars_served, "
            "chars_books = chars_books + excluded.chars_books, last_at = excluded.last_at",
            (int(chars_served), int(chars_books)))
    finally:
        conn.close()


def totals(path: Path) -> dict[str, Any]:
    """The running totals; zeros when the file does not exist yet (never creates it)."""
    empty: dict[str, Any] = {"searches": 0, "chars_served": 0, "chars_books": 0,
                             "first_at": None, "last_at": None}
    if not path.is_file():
        return empty
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.5)
    try:
        row = conn.execute("SELECT searches, chars_served, chars_books, first_at, last_at "
                           "FROM search_totals WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # created but the table is not there yet
        return empty
    finally:
        conn.close()
    if row is None:
        return empty
    return dict(zip(empty, row, strict=True))
