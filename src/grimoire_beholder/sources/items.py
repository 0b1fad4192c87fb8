"""What an external library hands to ingest: items, their file, metadata and annotations.

``sources/discover.py`` tells a Calibre library or a Zotero data folder from any other
folder and reads it into these.
The reader's annotations become a chapter of their own, appended to the book
(:func:`reader_chapter`), one section per annotation, so each is searched with the book
and cited as the reader's: ``Book · Your highlights and notes › Highlight, p. 4 · p. 4``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grimoire_beholder.parse.document import Block, ParsedChapter, ParsedSection

CALIBRE_DB = "metadata.db"
ZOTERO_DB = "zotero.sqlite"
KIND_NAMES = {"calibre": "Calibre library", "zotero": "Zotero data folder"}
READER_CHAPTER = "Your highlights and notes"
# Formats in the order a book's file is chosen, when it has several (config
# ``source_formats``); any other format is named in the report as unreadable.
DEFAULT_FORMATS: tuple[str, ...] = ("epub", "pdf", "docx", "html", "htm", "txt", "md")


@dataclass(frozen=True)
class Annotation:
    """A highlight, underline or note of the reader's (Zotero), with its page if known."""

    kind: str
    text: str
    comment: str = ""
    page: int | None = None  # 1-based physical page of a PDF
    page_label: str | None = None  # the page as the reader's viewer showed it

    def heading(self) -> str:
        """The annotation's own section title: ``Highlight, p. 4``."""
        return self.kind.capitalize() + (f", p. {self.page_label}" if self.page_label else "")

    def block_text(self) -> str:
        quoted = f"“{self.text.strip()}”" if self.text.strip() else ""
        return " — ".join(p for p in (quoted, self.comment.strip()) if p)


@dataclass
class SourceItem:
    """One book or paper of an external library."""

    key: str  # Calibre book id, Zotero item key
    title: str
    authors: list[str]
    link: str
    file: Path | None  # the readable format chosen, None when there is none
    formats: list[str] = field(default_factory=list)  # every format it has ("EPUB", …)
    tags: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    series: str | None = None
    series_index: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # publisher, date, isbn, doi …
    annotations: list[Annotation] = field(default_factory=list)

    @property
    def author(self) -> str | None:
        return " & ".join(self.authors) or None

    def described(self) -> dict[str, Any]:
        """Everything a person sees of the item, as stored in ``book_sources.metadata``."""
        out = {k: v for k, v in self.metadata.items() if v not in (None, "", [])}
        out.update(title=self.title, authors=list(self.authors), tags=list(self.tags),
                   collections=list(self.collections), formats=list(self.formats))
        if self.series:
            out.update(series=self.series, series_index=self.series_index)
        return out

    def metadata_hash(self) -> str:
        """Changes when what the person curated changes (not the file)."""
        text = json.dumps(self.described(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def annotations_hash(self) -> str:
        text = json.dumps([vars(a) for a in self.annotations], sort_keys=True,
                          ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class SourceLibrary:
    kind: str  # "calibre" | "zotero"
    path: Path  # the library folder, resolved
    items: list[SourceItem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def choose_format(files: dict[str, Path], order: tuple[str, ...]) -> Path | None:
    """The first format in ``order`` the item has (``files``: lower-case format → path)
    whose file is on disk — a format whose file was removed, or that Zotero has not
    downloaded, gives way to the next — else the first it has (its failure names it)."""
    had = [files[f] for f in order if f in files]
    return next((path for path in had if is_file(path)), had[0] if had else None)


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file that can be seen; False too when a folder on the
    way may not be searched (permission denied), which ``Path.is_file`` raises: the item's
    step, or the sync's warning about its library, then says why, not a traceback."""
    try:
        return path.is_file()
    except OSError:
        return False


def reader_chapter(item: SourceItem) -> ParsedChapter | None:
    """The reader's annotations as one chapter of the book, or None when there are none."""
    if not item.annotations:
        return None
    sections = [ParsedSection(title=a.heading(), path=[a.heading()],
                              blocks=[Block(text=a.block_text(), page=a.page)],
                              anchor_page=a.page)
                for a in item.annotations if a.text.strip() or a.comment.strip()]
    if not sections:
        return None
    first = next((s.anchor_page for s in sections if s.anchor_page is not None), None)
    return ParsedChapter(title=READER_CHAPTER, sections=sections, anchor_page=first)
