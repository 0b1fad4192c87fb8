"""Helpers the parser tests share (test_parse_epub_*.py, test_parse_pdf_*.py): walking a
``ParsedBook`` (every block, all its text, the section that holds a phrase), writing the
pages of generated PDFs, and the filler prose of generated EPUBs."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from grimoire_beholder.parse.document import Block, ParsedBook, ParsedSection

LOREM = (
    "Wizards keep their grimoires in cold towers where candles never quite reach the "
    "corners and the ink slowly forgets which spells it once described."
)


def all_blocks(book: ParsedBook) -> list[Block]:
    return [b for ch in book.chapters for s in ch.sections for b in s.blocks]


def all_text(book: ParsedBook) -> str:
    return "\n".join(b.text for b in all_blocks(book))


def where(book: ParsedBook, phrase: str) -> tuple[str, ParsedSection]:
    """(chapter title, section) of the one section whose text contains ``phrase``."""
    hits = [(ch.title, s) for ch in book.chapters for s in ch.sections if phrase in s.text]
    assert len(hits) == 1, f"{phrase!r} found in {len(hits)} sections"
    return hits[0]


def write(page: pymupdf.Page, y: float, text: str, size: float = 11) -> None:
    """Write ``text`` (lines separated by newlines) with its first baseline at ``y``."""
    page.insert_text((72, y), text, fontsize=size)


def save(doc: pymupdf.Document, path: Path) -> Path:
    doc.save(path)
    doc.close()
    return path
