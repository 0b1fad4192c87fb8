"""Saved per-book health summaries, kept in ``library_meta`` keyed by the file's hash."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

HEALTH_KEY = "health:"  # library_meta key prefix of a saved health summary, + source hash


def save_health(conn: sqlite3.Connection, source_hash: str, summary: dict[str, object],
                live_hashes: Iterable[str]) -> None:
    """Keep a book's health summary (keyed by its file's hash); drop those of files gone.

    Call inside a transaction.
    """
    conn.execute("INSERT OR REPLACE INTO library_meta (key, value) VALUES (?, ?)",
                 (HEALTH_KEY + source_hash, json.dumps(summary, ensure_ascii=False)))
    keep = json.dumps([HEALTH_KEY + h for h in live_hashes])
    conn.execute("DELETE FROM library_meta WHERE key LIKE 'health:%' "
                 "AND key NOT IN (SELECT value FROM json_each(?))", (keep,))


def saved_health(conn: sqlite3.Connection) -> dict[str, dict[str, object]]:
    """Saved health summaries by source hash."""
    out: dict[str, dict[str, object]] = {}
    for key, value in conn.execute(
            "SELECT key, value FROM library_meta WHERE key LIKE 'health:%'"):
        try:
            out[str(key)[len(HEALTH_KEY):]] = json.loads(value)
        except ValueError:
            continue
    return out
