"""Keyed notes in ``library_meta`` that several modules keep under a key prefix (files left
out of a folder's sync, Calibre/Zotero items left out, saved health summaries): put, delete,
and read all of one prefix, on SQLite or a server engine."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Protocol


class MetaStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def meta_put(self, key: str, value: str) -> None: ...
    def meta_delete(self, keys: Collection[str]) -> None: ...
    def meta_prefixed(self, prefix: str) -> dict[str, str]: ...


def meta_put(conn: sqlite3.Connection | MetaStore, key: str, value: str) -> None:
    """Set ``key`` to ``value`` (replacing it). Call inside a transaction."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.meta_put(key, value)
    conn.execute("INSERT OR REPLACE INTO library_meta (key, value) VALUES (?, ?)", (key, value))


def meta_delete(conn: sqlite3.Connection | MetaStore, keys: Collection[str]) -> None:
    """Remove these keys (those present). Call inside a transaction."""
    if not keys:
        return
    if not isinstance(conn, sqlite3.Connection):
        return conn.meta_delete(keys)
    conn.executemany("DELETE FROM library_meta WHERE key = ?", [(k,) for k in keys])


def meta_prefixed(conn: sqlite3.Connection | MetaStore, prefix: str) -> dict[str, str]:
    """Every key starting with ``prefix`` (compared as text, never as a pattern) and its
    value."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.meta_prefixed(prefix)
    return {str(r[0]): str(r[1]) for r in conn.execute(
        "SELECT key, value FROM library_meta WHERE substr(key, 1, ?) = ?",
        (len(prefix), prefix))}
