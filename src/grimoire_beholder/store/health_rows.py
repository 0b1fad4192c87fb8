"""Saved per-book health summaries, kept in ``library_meta`` keyed by the file's hash."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from grimoire_beholder.store.meta_rows import MetaStore, meta_delete, meta_prefixed, meta_put

HEALTH_KEY = "health:"  # library_meta key prefix of a saved health summary, + source hash


def save_health(conn: sqlite3.Connection | MetaStore, source_hash: str,
                summary: dict[str, object], live_hashes: Iterable[str]) -> None:
    """Keep a book's health summary (keyed by its file's hash); drop those of files gone.

    Call inside a transaction.
    """
    meta_put(conn, HEALTH_KEY + source_hash, json.dumps(summary, ensure_ascii=False))
    keep = {HEALTH_KEY + h for h in live_hashes}
    meta_delete(conn, [key for key in meta_prefixed(conn, HEALTH_KEY) if key not in keep])


def saved_health(conn: sqlite3.Connection | MetaStore) -> dict[str, dict[str, object]]:
    """Saved health summaries by source hash."""
    out: dict[str, dict[str, object]] = {}
    for key, value in meta_prefixed(conn, HEALTH_KEY).items():
        try:
            out[key[len(HEALTH_KEY):]] = json.loads(value)
        except ValueError:
            continue
    return out
