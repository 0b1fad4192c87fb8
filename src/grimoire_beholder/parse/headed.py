"""A document read as headings and paragraphs → chapters and sections (HTML, Word).

Formats without a table of contents (a saved web page, a ``.docx``) say their structure
with heading levels only. :func:`assemble` turns the stream of :class:`Piece` s a parser
read — each a heading with its level or a paragraph-like block — into a :class:`ParsedBook`:

* a lone top-level heading (one ``h1``, one Word "Title") over deeper ones is the
  document's title, not a chapter (a web page or a report names itself once);
* the highest remaining level makes chapters, every deeper heading a section of its
  chapter, with ``path`` the headings from just below the chapter down;
* text before the first chapter heading is a chapter named after the document.

These formats have no pages, so blocks get synthetic ones as EPUBs do (one per
``document.CHARS_PER_PAGE`` characters in reading order), cited as locations (``loc. 3``).
"""

from __future__ import annotations

from dataclasses import dataclass

from grimoire_beholder.parse.document import (
    ParsedBook,
    ParsedChapter,
    ParsedSection,
    SyntheticPages,
)


@dataclass(frozen=True)
class Piece:
    """A heading (``level`` 1–9, 0 for the document's own title) or a block (level None)."""

    text: str
    level: int | None = None


def _title_level(pieces: list[Piece]) -> int | None:
    """The heading level that only names the document: level 0, else a lone top level
    with deeper headings below it."""
    levels = [p.level for p in pieces if p.level is not None]
    if 0 in levels:
        return 0
    if not levels:
        return None
    top = min(levels)
    if levels.count(top) == 1 and len(set(levels)) > 1:
        return top
    return None


def _heading_title(pieces: list[Piece], title_level: int | None) -> str | None:
    """The heading that names the document: the title level's, else a lone top-level
    heading (one ``h1`` over paragraphs only, kept as a chapter too), else None — never a
    paragraph (a page without headings was named after its first sentence)."""
    levels = [p.level for p in pieces if p.level is not None]
    if title_level is None and levels and levels.count(min(levels)) == 1:
        title_level = min(levels)
    if title_level is None:
        return None
    return next(p.text for p in pieces if p.level == title_level)


class _Builder:
    """Chapters and sections as they are found, with synthetic pages."""

    def __init__(self, book: ParsedBook) -> None:
        self.book = book
        self.pages = SyntheticPages(gap=2)  # the blank line between two blocks
        self.chapter: ParsedChapter | None = None
        self.section: ParsedSection | None = None
        self.stack: list[tuple[int, str]] = []  # (level, title) of the open sub-headings

    def new_chapter(self, title: str) -> None:
        self.chapter = ParsedChapter(title=title, anchor_page=self.pages.page)
        self.section = ParsedSection(title="", anchor_page=self.pages.page)
        self.chapter.sections.append(self.section)
        self.book.chapters.append(self.chapter)
        self.stack = []

    def new_section(self, level: int, title: str) -> None:
        if self.chapter is None:
            self.new_chapter(self.book.title)
        assert self.chapter is not None
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        self.section = ParsedSection(title=title, path=[t for _, t in self.stack],
                                     anchor_page=self.pages.page)
        self.chapter.sections.append(self.section)

    def add(self, text: str) -> None:
        if self.section is None:
            self.new_chapter(self.book.title)
        assert self.section is not None
        self.section.blocks.append(self.pages.block(text))


def assemble(pieces: list[Piece], *, title: str | None, author: str | None,
             source_type: str, source_path: str, fallback_title: str) -> ParsedBook:
    """The book these pieces make (see the module docstring). ``title`` (from the file's
    metadata) wins over a title heading, which wins over ``fallback_title``."""
    title_level = _title_level(pieces)
    heading_title = _heading_title(pieces, title_level)
    book = ParsedBook(title=(title or heading_title or fallback_title).strip(),
                      author=author, source_type=source_type, source_path=source_path)
    levels = [p.level for p in pieces if p.level is not None and p.level != title_level]
    chapter_level = min(levels) if levels else None
    b = _Builder(book)
    for piece in pieces:
        if piece.level is None:
            b.add(piece.text)
        elif piece.level == title_level:
            continue
        elif piece.level == chapter_level:
            b.new_chapter(piece.text)
        else:
            b.new_section(piece.level, piece.text)
    for chapter in book.chapters:  # an empty lead-in (heading straight after heading) goes
        chapter.sections = [s for s in chapter.sections if s.blocks or s.title] or [
            ParsedSection(title="", anchor_page=chapter.anchor_page)]
    book.page_count = b.pages.count
    return book
