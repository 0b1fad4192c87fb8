"""Reads for the reading-position filter: a book's chapter titles, the chunks up to a chapter."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Protocol

from grimoire_beholder.store.db import ids_param


class PositionStore(Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def chunk_ids_until(self, book_ids: Iterable[int], last_chapter: int) -> list[int]: ...
    def chapter_titles(self, book_id: int) -> list[str]: ...


def chunk_ids_until(conn: sqlite3.Connection | PositionStore, book_ids: Iterable[int],
                    last_chapter: int) -> list[int]:
    """Ids of the chunks of these books in chapters ``0..last_chapter``."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chunk_ids_until(book_ids, last_chapter)
    return [int(r[0]) for r in conn.execute(
        "SELECT id FROM chunks WHERE book_id IN (SELECT value FROM json_each(?)) "
        "AND chapter_index <= ? ORDER BY id", (ids_param(book_ids), last_chapter))]


def chapter_titles(conn: sqlite3.Connection | PositionStore, book_id: int) -> list[str]:
    """Chapter titles of a book by chapter index."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.chapter_titles(book_id)
    return [str(r[0]) for r in conn.execute(
        "SELECT title FROM chapters WHERE book_id = ? ORDER BY chapter_index", (book_id,))]
