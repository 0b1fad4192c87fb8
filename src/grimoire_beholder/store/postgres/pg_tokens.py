"""A PostgreSQL library's access tokens: ``store/token_rows.py``'s contract (its
``TokenStore``) on the ``access_tokens`` table of schema v2 — the same columns, the same
values, so ``grimoire_beholder.access`` makes, lists, checks and revokes tokens the same way
on both engines."""

from __future__ import annotations

from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.token_rows import COLUMNS, TokenRow, as_row

_NOW = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"


class TokenRowsMixin(PgBase):
    def token_add(self, name: str, key_id: str, secret_sha256: str, rights: str
                  ) -> TokenRow | None:
        """The new row; None when the name (or, by a 1 in 2^48 chance, the key id) is taken."""
        found = self.rows(
            f"INSERT INTO access_tokens (name, key_id, secret_sha256, rights) "
            f"VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING {COLUMNS}",
            (name, key_id, secret_sha256, rights))
        return as_row(found[0]) if found else None

    def token_named(self, name: str) -> TokenRow | None:
        found = self.rows(f"SELECT {COLUMNS} FROM access_tokens WHERE name = %s", (name,))
        return as_row(found[0]) if found else None

    def token_by_key(self, key_id: str) -> TokenRow | None:
        found = self.rows(f"SELECT {COLUMNS} FROM access_tokens WHERE key_id = %s", (key_id,))
        return as_row(found[0]) if found else None

    def token_every(self) -> list[TokenRow]:
        return [as_row(r) for r in self.rows(
            f"SELECT {COLUMNS} FROM access_tokens ORDER BY name COLLATE \"C\"")]

    def token_remove(self, name: str) -> bool:
        return self.run("DELETE FROM access_tokens WHERE name = %s", (name,)) > 0

    def token_touch(self, key_id: str) -> None:
        self.run(f"UPDATE access_tokens SET last_used_at = {_NOW} WHERE key_id = %s",
                 (key_id,))

    def token_quick_writes(self, timeout_ms: int) -> None:
        """A row another transaction holds is waited for at most ``timeout_ms``."""
        self.run("SELECT set_config('lock_timeout', %s, false)", (f"{int(timeout_ms)}ms",))
