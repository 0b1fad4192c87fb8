"""The library's access tokens for the MCP server over HTTP: one row per token name.

A row holds the token's public key id, the SHA-256 of its secret (never the secret), the
upkeep rights it was created with (JSON) and when it was created and last used. Making and
checking secrets is ``grimoire_beholder.access``'s; this module only stores rows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from grimoire_beholder.errors import StorageError


@dataclass(frozen=True)
class TokenRow:
    """One stored token, as the table holds it."""

    name: str
    key_id: str
    secret_sha256: str
    rights: str  # JSON
    created_at: str
    last_used_at: str | None


def schema_v7(conn: sqlite3.Connection) -> None:
    """Access tokens (``grimoire-beholder token create``) for ``serve-mcp --http``."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS access_tokens (
               name          TEXT PRIMARY KEY,
               key_id        TEXT NOT NULL UNIQUE,     -- the token's public part
               secret_sha256 TEXT NOT NULL,            -- hex SHA-256 of its secret part
               rights        TEXT NOT NULL DEFAULT '{}',  -- JSON: the upkeep it may do
               created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
               last_used_at  TEXT
           )""")


_COLUMNS = "name, key_id, secret_sha256, rights, created_at, last_used_at"


def _row(values: tuple[object, ...]) -> TokenRow:
    name, key_id, digest, rights, created, used = values
    return TokenRow(str(name), str(key_id), str(digest), str(rights), str(created),
                    None if used is None else str(used))


def add(conn: sqlite3.Connection, name: str, key_id: str, secret_sha256: str,
        rights: str) -> TokenRow:
    """Store a new token; StorageError when ``name`` is taken (the caller says so)."""
    try:
        conn.execute("INSERT INTO access_tokens (name, key_id, secret_sha256, rights) "
                     "VALUES (?, ?, ?, ?)", (name, key_id, secret_sha256, rights))
    except sqlite3.IntegrityError as exc:
        raise StorageError(f"a token named {name!r} already exists") from exc
    found = named(conn, name)
    assert found is not None
    return found


def named(conn: sqlite3.Connection, name: str) -> TokenRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM access_tokens WHERE name = ?",
                       (name,)).fetchone()
    return None if row is None else _row(tuple(row))


def by_key(conn: sqlite3.Connection, key_id: str) -> TokenRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM access_tokens WHERE key_id = ?",
                       (key_id,)).fetchone()
    return None if row is None else _row(tuple(row))


def every(conn: sqlite3.Connection) -> list[TokenRow]:
    """Every token, by name."""
    return [_row(tuple(r)) for r in conn.execute(
        f"SELECT {_COLUMNS} FROM access_tokens ORDER BY name")]


def remove(conn: sqlite3.Connection, name: str) -> bool:
    """Delete the token ``name``; whether there was one."""
    return conn.execute("DELETE FROM access_tokens WHERE name = ?", (name,)).rowcount > 0


def touch(conn: sqlite3.Connection, key_id: str) -> None:
    """Record that the token was used now (one short write; the caller may skip it when the
    library is busy)."""
    conn.execute("UPDATE access_tokens SET last_used_at = strftime('%Y-%m-%dT%H:%M:%SZ', "
                 "'now') WHERE key_id = ?", (key_id,))


def quick_writes(conn: sqlite3.Connection, timeout_ms: int) -> None:
    """Wait at most ``timeout_ms`` for the write lock on this connection (a server recording
    a token's use must not stall a request behind an ingest)."""
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
