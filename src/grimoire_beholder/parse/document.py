"""The format-independent result of parsing: ParsedBook → ParsedChapter → ParsedSection → Block.

Every parser (pdf, epub, markdown, text) yields this same structure, so everything after
parsing (sectioning, chunking, storing) never looks at the file format again.

Locations: a :class:`Block` carries where its text came from. PDFs set ``page`` to the
1-based physical page. EPUBs set ``page`` to a synthetic page ordinal (one per ~1,024
characters of text in reading order, strictly increasing) that stands in for pages.
Markdown and text set ``line_start``/``line_end`` (1-based, inclusive) and leave ``page``
None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Block:
    """One paragraph-like run of text (paragraph, list item, table row, code block)."""

    text: str
    page: int | None = None
    page_end: int | None = None  # set when one paragraph runs across a page break
    line_start: int | None = None
    line_end: int | None = None

    @property
    def last_page(self) -> int | None:
        return self.page_end if self.page_end is not None else self.page


@dataclass
class ParsedSection:
    """A section: a title, its breadcrumb below the chapter, and its text blocks.

    ``path`` is the list of headings from just below the chapter down to this section
    (``["Setup", "Windows"]``); empty for the untitled lead-in of a chapter (the text
    between the chapter heading and its first sub-heading), whose ``title`` is "".
    """

    title: str
    path: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    anchor_page: int | None = None  # page the heading sits on, even when the section is empty
    # Markup saying what the section is (EPUB epub:type tokens and landmarks, e.g.
    # "endnotes"); read by structure.roles, empty when the format has none.
    hints: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


@dataclass
class ParsedChapter:
    title: str
    sections: list[ParsedSection] = field(default_factory=list)
    anchor_page: int | None = None
    hints: frozenset[str] = frozenset()  # as ParsedSection.hints, for the chapter's start


@dataclass(frozen=True)
class ParseOptions:
    """Parser switches that come from the configuration.

    A plain value object so the parsers stay free of config/store/models imports; the ingest
    layer builds it from :class:`~grimoire_beholder.config.Config`. Formats ignore the
    switches that do not concern them.
    """

    pdf_tables: bool = True  # PDF tables drawn with lines become one record block per row
    ocr: str = "auto"  # "auto": OCR PDF pages without a text layer if Tesseract is there
    ocr_language: str = "eng"  # Tesseract language(s), e.g. "eng" or "eng+deu"


@dataclass
class ParsedBook:
    title: str
    author: str | None
    source_type: str  # "pdf" | "epub" | "markdown" | "text"
    source_path: str
    chapters: list[ParsedChapter] = field(default_factory=list)
    page_count: int | None = None  # physical pages (PDF) or synthetic pages (EPUB)
    page_labels: dict[int, str] = field(default_factory=dict)  # physical page → printed label
    line_count: int | None = None
    warnings: list[str] = field(default_factory=list)  # said on stderr, never fatal


CHARS_PER_PAGE = 1024
MAX_NAME_CHARS = 500  # of a title or author: a name, not a text
# Every run of white space, line breaks of every kind included (\u2028, \x85, \v, …).
_SPACES = re.compile(r"\s+")


def one_line_name(text: str) -> str:
    """A title or author as one line of bounded length: a PDF outline entry, an EPUB's
    metadata or a file name may hold line breaks (which would let it pass for structure
    wherever names are listed line by line) or be a whole text long."""
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS - 1].rstrip() + "…"


def tidy_names(book: ParsedBook) -> ParsedBook:
    """``book`` with its title, author, chapter and section titles made :func:`one_line_name`
    (every parser's result passes through here)."""
    book.title = one_line_name(book.title)
    book.author = one_line_name(book.author) if book.author is not None else None
    for chapter in book.chapters:
        chapter.title = one_line_name(chapter.title)
        for section in chapter.sections:
            section.title = one_line_name(section.title)
            section.path = [one_line_name(part) for part in section.path]
    return book


class SyntheticPages:
    """Synthetic pages for a format without printed ones: one per ``CHARS_PER_PAGE``
    characters of text in reading order. ``gap`` characters stand between two blocks (the
    blank line a headed text file has there; EPUB text counts none)."""

    def __init__(self, gap: int = 0) -> None:
        self.chars = 0
        self.gap = gap

    @property
    def page(self) -> int:
        """The page the next block starts on."""
        return self.chars // CHARS_PER_PAGE + 1

    def block(self, text: str) -> Block:
        """``text`` as the next block, with the page it starts on and the one it ends on
        (``page_end`` None when the same)."""
        start = self.page
        self.chars += len(text) + self.gap
        end = (self.chars - self.gap - 1) // CHARS_PER_PAGE + 1
        return Block(text=text, page=start, page_end=end if end > start else None)

    @property
    def count(self) -> int:
        """Pages the blocks so far fill (at least one)."""
        return max(self.chars - self.gap - 1, 0) // CHARS_PER_PAGE + 1
