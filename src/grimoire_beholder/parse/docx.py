"""Word ``.docx`` → ParsedBook: headings make chapters and sections, tables row records.

Read with python-docx, in body order (paragraphs and tables, ``iter_inner_content``).
A paragraph whose style is, or is based on, "Heading N" is a heading of level N; the
"Title" style names the document (``parse/headed.py`` builds the chapters). A table
becomes one block per row, ``Header: value; Header: value`` as PDF tables do
(``parse/pdf_tables.py``), its first row naming the fields; a cell merged across columns
counts once. Title and author come from the file's core properties when set.

Hostile input: a ``.docx`` is a zip, refused before python-docx opens it when its entry
count, declared sizes or compression ratios betray a zip bomb
(``parse/epub_package.refuse_zip_bomb``; python-docx reads every part, so the declared
total is capped at what the EPUB reader may read in all); its XML is parsed by
python-docx without entity expansion; any failure of the zip or XML stack is a one-line
InputFileError.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.parse.document import ParsedBook
from grimoire_beholder.parse.epub_html import collapse
from grimoire_beholder.parse.epub_package import (
    MAX_TOTAL_BYTES,
    READ_ERRORS,
    refuse_zip_bomb,
)
from grimoire_beholder.parse.headed import Piece, assemble
from grimoire_beholder.parse.source import read_source

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _level(paragraph: Any) -> int | None:
    """0 for the Title style, N for "Heading N" (or a style based on it), else None."""
    style = paragraph.style
    for _ in range(8):  # a style's base chain, bounded (a loop in a hostile file)
        if style is None:
            return None
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_STYLE.fullmatch(name)
        if match:
            return int(match.group(1))
        style = style.base_style
    return None


def _clean(text: str) -> str:
    return collapse(_CONTROL.sub(" ", text))


def _row_cells(row: Any) -> list[str]:
    """A row's cell texts, a merged cell once (python-docx repeats one cell object per grid
    column it spans)."""
    seen: list[Any] = []
    texts: list[str] = []
    for cell in row.cells:
        if any(cell is s for s in seen):
            continue
        seen.append(cell)
        texts.append(_clean(cell.text))
    return texts


def _table_pieces(table: Any) -> list[Piece]:
    """One record block per row: ``Header: value; …`` under the first row's names."""
    rows = [_row_cells(r) for r in table.rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    if not body or sum(1 for h in header if h) < 2:
        return [Piece(" | ".join(c for c in r if c)) for r in rows]
    pieces = []
    for row in body:
        parts = [f"{name}: {value}" if name else value
                 for name, value in zip(header, row, strict=False) if value]
        parts += [v for v in row[len(header):] if v]
        if parts:
            pieces.append(Piece("; ".join(parts)))
    return pieces


def _pieces(document: Any) -> list[Piece]:
    from docx.table import Table

    pieces: list[Piece] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            pieces += _table_pieces(item)
            continue
        text = _clean(item.text)
        if text:
            pieces.append(Piece(text, _level(item)))
    return pieces


def parse_docx(path: Path) -> ParsedBook:
    """Parse a Word document into chapters and sections; InputFileError for a file that is
    not a readable ``.docx`` (or a zip bomb), NoTextError when it holds no text."""
    path = Path(path)
    data = read_source(path)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            refuse_zip_bomb(str(path), archive.infolist(), declared_limit=MAX_TOTAL_BYTES)
    except InputFileError:
        raise
    except READ_ERRORS as exc:
        raise InputFileError(f"{path}: not a Word document (not a readable zip)") from exc
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    failures: tuple[type[BaseException], ...] = (
        *READ_ERRORS, PackageNotFoundError, KeyError, AttributeError, RecursionError)
    try:
        document = docx.Document(io.BytesIO(data))
        pieces = _pieces(document)
        props = document.core_properties
        title, author = (props.title or "").strip(), (props.author or "").strip()
    except failures as exc:
        raise InputFileError(f"{path}: not a readable Word document "
                             f"({type(exc).__name__}: {exc})") from exc
    if not any(p.level is None for p in pieces):
        raise NoTextError(f"{path}: no text in the document")
    return assemble(pieces, title=title or None, author=author or None, source_type="docx",
                    source_path=str(path), fallback_title=path.stem)
