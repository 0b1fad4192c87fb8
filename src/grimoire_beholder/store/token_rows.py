"""The library's access tokens for the MCP server over HTTP: one row per token name.

A row holds the token's public key id, the SHA-256 of its secret (never the secret), the
upkeep rights it was created with (JSON) and when it was created and last used. Making and
checking secrets is ``grimoire_beholder.access``'s; this module only stores rows.

A library in PostgreSQL keeps the same table (``store/postgres/pg_tokens.py``, schema v2
there); each function here hands its work to such an engine (:class:`TokenStore`), so the
decisions in ``access`` are one code on both engines and only the SQL differs.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Protocol

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


class TokenStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions;
    each method is the function of the same name without ``token_``."""

    def token_add(self, name: str, key_id: str, secret_sha256: str, rights: str
                  ) -> TokenRow | None: ...
    def token_named(self, name: str) -> TokenRow | None: ...
    def token_by_key(self, key_id: str) -> TokenRow | None: ...
    def token_every(self) -> list[TokenRow]: ...
    def token_remove(self, name: str) -> bool: ...
    def token_touch(self, key_id: str) -> None: ...
    def token_quick_writes(self, timeout_ms: int) -> None: ...
    def close(self) -> None: ...


Tokens = sqlite3.Connection | TokenStore


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


COLUMNS = "name, key_id, secret_sha256, rights, created_at, last_used_at"


def as_row(values: tuple[object, ...]) -> TokenRow:
    """A row of ``COLUMNS`` as a TokenRow."""
    name, key_id, digest, rights, created, used = values
    return TokenRow(str(name), str(key_id), str(digest), str(rights), str(created),
                    None if used is None else str(used))


def add(conn: Tokens, name: str, key_id: str, secret_sha256: str, rights: str) -> TokenRow:
    """Store a new token; StorageError when ``name`` is taken (the caller says so)."""
    if not isinstance(conn, sqlite3.Connection):
        made = conn.token_add(name, key_id, secret_sha256, rights)
        if made is None:
            raise StorageError(f"a token named {name!r} already exists")
        return made
    try:
        conn.execute("INSERT INTO access_tokens (name, key_id, secret_sha256, rights) "
                     "VALUES (?, ?, ?, ?)", (name, key_id, secret_sha256, rights))
    except sqlite3.IntegrityError as exc:
        raise StorageError(f"a token named {name!r} already exists") from exc
    found = named(conn, name)
    assert found is not None
    return found


def named(conn: Tokens, name: str) -> TokenRow | None:
    if not isinstance(conn, sqlite3.Connection):
        return conn.token_named(name)
    row = conn.execute(f"SELECT {COLUMNS} FROM access_tokens WHERE name = ?",
                       (name,)).fetchone()
    return None if row is None else as_row(tuple(row))


def by_key(conn: Tokens, key_id: str) -> TokenRow | None:
    if not isinstance(conn, sqlite3.Connection):
        return conn.token_by_key(key_id)
    row = conn.execute(f"SELECT {COLUMNS} FROM access_tokens WHERE key_id = ?",
                       (key_id,)).fetchone()
    return None if row is None else as_row(tuple(row))


def every(conn: Tokens) -> list[TokenRow]:
    """Every token, by name."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.token_every()
    return [as_row(tuple(r)) for r in conn.execute(
        f"SELECT {COLUMNS} FROM access_tokens ORDER BY name")]


def remove(conn: Tokens, name: str) -> bool:
    """Delete the token ``name``; whether there was one."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.token_remove(name)
    return conn.execute("DELETE FROM access_tokens WHERE name = ?", (name,)).rowcount > 0


def touch(conn: Tokens, key_id: str) -> None:
    """Record that the token was used now (one short write; the caller may skip it when the
    library is busy)."""
    if not isinstance(conn, sqlite3.Connection):
        conn.token_touch(key_id)
        return
    conn.execute("UPDATE access_tokens SET last_used_at = strftime('%Y-%m-%dT%H:%M:%SZ', "
                 "'now') WHERE key_id = ?", (key_id,))


def quick_writes(conn: Tokens, timeout_ms: int) -> None:
    """Wait at most ``timeout_ms`` for the write lock on this connection (a server recording
    a token's use must not stall a request behind an ingest)."""
    if not isinstance(conn, sqlite3.Connection):
        conn.token_quick_writes(timeout_ms)
        return
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
