"""Token savings: how much text a search hands out versus the books it came from.

The comparison an assistant user cares about: without the library, answering from a book
means pasting the book (or large parts of it) into the context; with it, the assistant reads
a few passages. Per search we count the characters served (each hit's text and context) and
the full size of the distinct books those hits came from, and add both to running totals in
``book.stats.db`` beside the library (see ``store/stat_queries.py`` for why a separate file).
Tokens are estimated as characters / 4, the usual figure for English prose.

Recording is best effort and never raises: the MCP server and the assistant hooks call it
on every search, and a read-only folder must not turn a good search into an error.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from grimoire_beholder.search.hits import SearchResults
from grimoire_beholder.store import hit_queries, stat_queries

if TYPE_CHECKING:
    from grimoire_beholder.views import Savings

log = logging.getLogger(__name__)
CHARS_PER_TOKEN = 4


class SavingsRecorder:
    """Adds each search to the totals; caches book sizes until the library changes."""

    def __init__(self, conn: sqlite3.Connection, database_path: Path) -> None:
        self._conn = conn
        self._path = stat_queries.stats_path(database_path)
        self._sizes: dict[int, int] = {}
        self._token: tuple[int, int] | None = None
        self._disabled = False

    def measure(self, results: SearchResults) -> tuple[int, int]:
        """(characters served, characters of the distinct books they came from)."""
        served = sum(len(h.text) + len(h.context or "") for h in results.hits)
        books = {h.book_id for h in results.hits}
        token = hit_queries.change_token(self._conn)
        if token != self._token:
            self._sizes, self._token = {}, token
        missing = books - self._sizes.keys()
        if missing:
            self._sizes.update(stat_queries.book_chars(self._conn, missing))
        return served, sum(self._sizes.get(b, 0) for b in books)

    def record(self, results: SearchResults) -> None:
        """Count one search; any failure is logged once and recording stops for this run."""
        if self._disabled or not results.hits:
            return
        try:
            served, books = self.measure(results)
            stat_queries.record(self._path, served, books)
        except (sqlite3.Error, OSError) as exc:
            self._disabled = True
            log.warning("not recording search statistics in %s: %s", self._path, exc)


def summary(database_path: Path) -> Savings:
    """Cumulative savings for ``stats`` and the MCP ``book_status`` tool."""
    from grimoire_beholder.views import Savings

    path = stat_queries.stats_path(database_path)
    try:
        totals = stat_queries.totals(path)
    except sqlite3.Error as exc:
        log.warning("cannot read search statistics in %s: %s", path, exc)
        totals = stat_queries.totals(Path("/nonexistent"))
    served, books = totals["chars_served"], totals["chars_books"]
    return Savings(
        **totals, stats_file=str(path), chars_saved=max(0, books - served),
        tokens_served_est=served // CHARS_PER_TOKEN,
        tokens_saved_est=max(0, books - served) // CHARS_PER_TOKEN,
        saving_ratio=round(1.0 - served / books, 4) if books else None)
