"""A Calibre library (the folder holding ``metadata.db``) as a source of books.

One :class:`SourceItem` per Calibre book: its best readable format (``items.DEFAULT_FORMATS``
or the configured order; MOBI, AZW3 and other formats no parser reads are listed so the
report can name them), Calibre's title, authors, tags, series and index, publisher,
publication date, languages and identifiers (ISBN …). The link opens the book in Calibre:
``calibre://show-book/<library>/<id>``, the library named by its folder in Calibre's hex form
(``_hex_-`` and the UTF-8 bytes of the name, which needs no URL escaping).
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.sources.items import CALIBRE_DB, SourceItem, SourceLibrary, choose_format
from grimoire_beholder.store.calibre_rows import CalibreBook, read_books
from grimoire_beholder.store.foreign_copy import foreign_database

UNDEFINED_DATE = "0101-01-01"  # Calibre's "no date"


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


def read_calibre(folder: Path, order: tuple[str, ...]) -> SourceLibrary:
    """Every book of the Calibre library at ``folder`` (resolved), read from a copy of its
    database; its book files are not opened here."""
    with foreign_database(folder / CALIBRE_DB, "Calibre library database") as conn:
        books = read_books(conn)
    return SourceLibrary("calibre", folder, [_item(folder, b, order) for b in books])
