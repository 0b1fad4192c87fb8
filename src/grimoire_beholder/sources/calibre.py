"""A Calibre library (the folder holding ``metadata.db``) as a source of books.

One :class:`SourceItem` per Calibre book (its rows read by ``store/calibre_rows.py`` from a
private copy of ``metadata.db``): its best readable format (``items.DEFAULT_FORMATS``
or the configured order; MOBI, AZW3 and other formats no parser reads are listed so the
report can name them), Calibre's title, authors, tags, series and index, publisher,
publication date, languages and identifiers (ISBN …). The link opens the book in Calibre:
``calibre://show-book/<library>/<id>``, the library named by its folder in Calibre's hex form
(``_hex_-`` and the UTF-8 bytes of the name, which needs no URL escaping).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grimoire_beholder.sources.items import SourceItem, SourceLibrary, choose_format

UNDEFINED_DATE = "0101-01-01"  # Calibre's "no date"


@dataclass
class CalibreBook:
    """One row of Calibre's ``books`` with what its link tables say about it (read by
    ``store/calibre_rows.py``)."""

    id: int
    title: str
    pubdate: str | None
    series_index: float
    path: str  # the book's folder, relative to the library
    uuid: str | None
    authors: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    series: str | None = None
    publisher: str | None = None
    languages: list[str] = field(default_factory=list)
    identifiers: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)  # "EPUB" → file name, no suffix


def library_name(folder: Path) -> str:
    """The library as calibre:// URLs name it, hex-encoded."""
    return "_hex_-" + folder.name.encode("utf-8").hex().upper()


def _item(folder: Path, book: CalibreBook, order: tuple[str, ...]) -> SourceItem:
    files = {fmt.lower(): folder / book.path / f"{name}.{fmt.lower()}"
             for fmt, name in book.formats.items()}
    date = (book.pubdate or "")[:10]
    metadata = {
        "publisher": book.publisher,
        "date": None if not date or date.startswith(UNDEFINED_DATE) else date,
        "language": ", ".join(book.languages) or None,
        "isbn": book.identifiers.get("isbn"),
        "identifiers": dict(sorted(book.identifiers.items())),
        "item_type": "book",
        "calibre_id": book.id,
    }
    return SourceItem(
        key=str(book.id), title=book.title, authors=list(book.authors),
        link=f"calibre://show-book/{library_name(folder)}/{book.id}",
        file=choose_format(files, order), formats=sorted(book.formats), tags=list(book.tags),
        series=book.series, series_index=book.series_index if book.series else None,
        metadata=metadata)


def calibre_library(folder: Path, rows: Iterable[Mapping[str, Any]],
                    order: tuple[str, ...]) -> SourceLibrary:
    """The Calibre library at ``folder`` (resolved) from its database's rows; its book
    files are not opened here."""
    books = [CalibreBook(**row) for row in rows]
    return SourceLibrary("calibre", folder, [_item(folder, b, order) for b in books])
