"""Access tokens of a library, for the MCP server over HTTP (``serve-mcp --http``).

A token is ``gbt_<key id>_<secret>``: the key id (12 hex digits, public) finds its row, the
secret (32 random bytes, URL-safe base64) is what proves it. The library stores only the
secret's SHA-256 — a random 256-bit secret needs no slow hash — and compares digests in
constant time (``hmac.compare_digest``). The whole token is shown once, when it is made.

Tokens live in the library they were made in (``store/token_rows.py``; in a PostgreSQL
library its ``access_tokens`` table, the same rows), so a token opens that library and no
other, and revoking it (deleting its row) takes effect at the next request of any server
serving it. A token is read-only unless made with upkeep rights —
the same three ``serve-mcp`` takes: sync, add (from given folders), remove.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass

from grimoire_beholder.config import Config
from grimoire_beholder.errors import (
    ConfigError,
    GrimoireError,
    NotFoundError,
    ReadOnlyLibraryError,
    StorageError,
)
from grimoire_beholder.library import Library
from grimoire_beholder.locate import file_identity
from grimoire_beholder.store import token_rows
from grimoire_beholder.store.db import connect
from grimoire_beholder.store.transactions import transaction

PREFIX = "gbt_"
_KEY_RE = re.compile(r"[0-9a-f]{12}")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TOUCH_EVERY_S = 60.0  # how often a token's "last used" is written, at most
TOUCH_WAIT_MS = 100  # how long recording a use may wait for the write lock


@dataclass(frozen=True)
class TokenRights:
    """The upkeep a token may do; all off (read-only) by default. ``add`` holds the real
    paths of the folders books may be added from."""

    sync: bool = False
    add: tuple[str, ...] = ()
    remove: bool = False

    @property
    def any(self) -> bool:
        return self.sync or bool(self.add) or self.remove

    def words(self) -> str:
        """The rights in words, for ``token list``: ``read-only`` or e.g. ``sync, add (D)``."""
        parts = (["sync"] if self.sync else []) + (
            [f"add ({', '.join(self.add)})"] if self.add else []) + (
            ["remove"] if self.remove else [])
        return ", ".join(parts) or "read-only"

    def to_json(self) -> str:
        return json.dumps({"sync": self.sync, "add": list(self.add), "remove": self.remove})

    @classmethod
    def from_json(cls, text: str) -> TokenRights:
        """The stored rights; anything unreadable grants nothing (read-only)."""
        try:
            data = json.loads(text)
            return cls(sync=data.get("sync") is True, remove=data.get("remove") is True,
                       add=tuple(str(f) for f in data.get("add") or () if str(f).strip()))
        except (ValueError, TypeError, AttributeError):
            return cls()


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown about a token: never its secret."""

    name: str
    rights: TokenRights
    created_at: str
    last_used_at: str | None

    @classmethod
    def of(cls, row: token_rows.TokenRow) -> TokenInfo:
        return cls(row.name, TokenRights.from_json(row.rights), row.created_at,
                   row.last_used_at)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _split(presented: str) -> tuple[str, str] | None:
    """``(key id, secret)`` of a well-formed token, else None."""
    if not presented.startswith(PREFIX):
        return None
    key_id, sep, secret = presented[len(PREFIX):].partition("_")
    if not sep or not _KEY_RE.fullmatch(key_id) or not 20 <= len(secret) <= 200:
        return None
    return key_id, secret


def check_name(name: str) -> str:
    """A token's name as given; ConfigError unless it is 1-64 letters, digits, ``.-_``."""
    if not _NAME_RE.fullmatch(name):
        raise ConfigError(f"token name {name[:80]!r} may hold only letters, digits, '.', '-' "
                          "and '_' (at most 64, starting with a letter or digit)")
    return name


def create_token(library: Library, name: str,
                 rights: TokenRights = TokenRights()) -> tuple[TokenInfo, str]:
    """Make a token ``name`` in ``library``: its row, and the token itself (shown once;
    only its digest is kept). ConfigError for a bad name, StorageError when it is taken."""
    check_name(name)
    if library.read_only:
        raise ReadOnlyLibraryError("cannot make a token: the library is read-only here")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    with transaction(library.store):
        row = token_rows.add(library.store, name, key_id, _digest(secret), rights.to_json())
    return TokenInfo.of(row), f"{PREFIX}{key_id}_{secret}"


def list_tokens(library: Library) -> list[TokenInfo]:
    """Every token of the library, by name (an older library that has none: empty)."""
    try:
        return [TokenInfo.of(r) for r in token_rows.every(library.store)]
    except sqlite3.OperationalError:  # no such table: a SQLite library from before tokens
        return []


def revoke_token(library: Library, name: str) -> TokenInfo:
    """Delete the token ``name``: every request bearing it is refused from now on.
    NotFoundError, naming the tokens there are, when there is none by that name."""
    try:
        found = token_rows.named(library.store, name)
    except sqlite3.OperationalError:  # no such table: a SQLite library from before tokens
        found = None
    if found is None:
        names = ", ".join(t.name for t in list_tokens(library)) or "none"
        raise NotFoundError(f"no token named {name[:80]!r} (tokens: {names})")
    with transaction(library.store):
        token_rows.remove(library.store, name)
    return TokenInfo.of(found)


def _open_tokens(config: Config, *, write: bool) -> token_rows.Tokens:
    """A connection of the token checker's own to the library ``config`` names: the SQLite
    file, or the PostgreSQL database (an engine that reconnects after a server restart)."""
    if config.database_url is not None:
        from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

        return PostgresEngine.open(config.database_url, read_only=not write, create=False)
    return connect(config.database_path, read_only=not write)


class LibraryUnavailable(StorageError):
    """The library's database did not answer while a token was checked (a PostgreSQL server
    restarting or unreachable): the request is refused for now, not for its token."""


class TokenChecker:
    """Checks presented tokens against a library's rows, on connections of its own (the
    server's searches keep theirs): a read-only one for checking, and a writable one, made
    on first need, that records each token's last use at most every ``TOUCH_EVERY_S``."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._file = None if config.database_url else file_identity(config.database_path)
        self._reader = _open_tokens(config, write=False)
        self._writer: token_rows.Tokens | None = None
        self._can_write = True
        self._touched: dict[str, float] = {}
        # Checking never waits behind a write: a use being recorded may wait for the
        # library's write lock, and checks run on the server's event loop.
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()

    def check(self, presented: str) -> tuple[TokenInfo, str] | None:
        """The token's info and key id when ``presented`` is a live token of this library.
        LibraryUnavailable when a server library's database does not answer (a SQLite file
        that cannot be read: None, as before)."""
        parts = _split(presented)
        if parts is None:
            return None
        key_id, secret = parts
        with self._read_lock:
            try:
                if not self._same_file():
                    return None
                row = token_rows.by_key(self._reader, key_id)
            except StorageError as exc:
                if self.config.database_url is not None:
                    raise LibraryUnavailable(str(exc)) from exc
                return None
            except (sqlite3.Error, GrimoireError):
                return None
        if row is None or not hmac.compare_digest(_digest(secret), row.secret_sha256):
            return None
        return TokenInfo.of(row), key_id

    def _same_file(self) -> bool:
        """Whether the checker reads the library file at the library's path, reopening it
        there when that file was replaced: a connection goes on reading a file deleted
        under it, so a library deleted and built again took the old library's tokens and
        refused its own. False when no file is there. Under ``_read_lock``."""
        if self.config.database_url is not None:
            return True
        now = file_identity(self.config.database_path)
        if now is None:
            return False
        if now != self._file:
            reader = _open_tokens(self.config, write=False)
            self._reader.close()
            self._reader, self._file = reader, now
            with self._write_lock:  # its writer, if made, writes the old file
                if self._writer is not None:
                    self._writer.close()
                    self._writer = None
        return True

    def due(self, key_id: str, now: float) -> bool:
        """Whether the use of ``key_id`` at ``now`` should be written (and mark it so)."""
        with self._read_lock:
            if not self._can_write or now - self._touched.get(key_id, -1e18) < TOUCH_EVERY_S:
                return False
            self._touched[key_id] = now
            return True

    def record_use(self, key_id: str) -> None:
        """Write the token's last use; skipped (never raised) when the library is busy or
        cannot be written here."""
        with self._write_lock:
            try:
                if self._writer is None:
                    self._writer = _open_tokens(self.config, write=True)
                    token_rows.quick_writes(self._writer, TOUCH_WAIT_MS)
                token_rows.touch(self._writer, key_id)
            except Exception as exc:  # a use not recorded never fails a request
                text = str(exc).lower()
                if "read" in text or "permission denied" in text:  # never writable: stop
                    self._can_write = False

    def close(self) -> None:
        with self._read_lock, self._write_lock:
            self._reader.close()
            if self._writer is not None:
                self._writer.close()
