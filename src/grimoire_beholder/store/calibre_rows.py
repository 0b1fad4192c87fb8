"""The queries that read a Calibre library's ``metadata.db`` (a private copy of it, see
``foreign_copy.py``): books with their authors, tags, series, publisher, languages,
identifiers and formats, as plain values for ``sources/calibre.py``. Calibre's own schema;
nothing here is ever written."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from grimoire_beholder.errors import InputFileError


def _pairs(conn: sqlite3.Connection, sql: str) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for book, value in conn.execute(sql):
        if value is not None:
            out[int(book)].append(str(value))
    return out


def _author(stored: str) -> str:
    """An author's name as Calibre shows it: it stores a comma in a name as ``|`` (the
    comma separates authors in its fields), so "King, Jr." is "King| Jr." in the table."""
    return stored.replace("|", ",")


def read_books(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every book of the library, by id, as the fields of ``sources.calibre.CalibreBook``;
    InputFileError when this is no Calibre database."""
    try:
        rows = conn.execute("SELECT id, title, pubdate, series_index, path, uuid FROM books "
                            "ORDER BY id").fetchall()
        authors = _pairs(conn, "SELECT l.book, a.name FROM books_authors_link l "
                               "JOIN authors a ON a.id = l.author ORDER BY l.id")
        tags = _pairs(conn, "SELECT l.book, t.name FROM books_tags_link l "
                            "JOIN tags t ON t.id = l.tag ORDER BY t.name")
        series = _pairs(conn, "SELECT l.book, s.name FROM books_series_link l "
                              "JOIN series s ON s.id = l.series")
        publishers = _pairs(conn, "SELECT l.book, p.name FROM books_publishers_link l "
                                  "JOIN publishers p ON p.id = l.publisher")
        languages = _pairs(conn, "SELECT l.book, g.lang_code FROM books_languages_link l "
                                 "JOIN languages g ON g.id = l.lang_code "
                                 "ORDER BY l.item_order")
        identifiers: dict[int, dict[str, str]] = defaultdict(dict)
        for book, kind, value in conn.execute("SELECT book, type, val FROM identifiers"):
            identifiers[int(book)][str(kind).lower()] = str(value)
        formats: dict[int, dict[str, str]] = defaultdict(dict)
        for book, kind, name in conn.execute("SELECT book, format, name FROM data"):
            formats[int(book)][str(kind).upper()] = str(name)
    except sqlite3.DatabaseError as exc:
        raise InputFileError(f"not a Calibre library database ({exc})") from exc
    return [dict(
        id=int(r[0]), title=str(r[1] or "Unknown"), pubdate=r[2], series_index=float(r[3]),
        path=str(r[4] or ""), uuid=r[5], authors=[_author(a) for a in authors.get(int(r[0]), [])],
        tags=tags.get(int(r[0]), []), series=_first(series.get(int(r[0]))),
        publisher=_first(publishers.get(int(r[0]))),
        languages=languages.get(int(r[0]), []), identifiers=identifiers.get(int(r[0]), {}),
        formats=formats.get(int(r[0]), {})) for r in rows]


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None
