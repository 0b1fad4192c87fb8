"""Plain records passed into and out of the store, so callers never see SQL rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

R = TypeVar("R")


def filled(cls: type[R], values: dict[str, Any]) -> R:
    """A frozen dataclass ``cls`` holding ``values``, which must name every field exactly
    once: the object its generated ``__init__`` makes (equal, hashed and shown the same),
    without that ``__init__``'s ``object.__setattr__`` call per field. For the records a
    search makes per hit (``HitRow`` and ``SearchHit``: some 25 fields each)."""
    made = object.__new__(cls)
    made.__dict__.update(values)
    return made


@dataclass(frozen=True, kw_only=True)
class SectionPlace:
    """The book and section a piece of text sits in: what every hit and passage names."""

    book_id: int
    slug: str
    book: str
    author: str | None
    source_type: str
    source_path: str
    chapter_index: int
    chapter: str
    section_index: int
    section: str  # the breadcrumb


@dataclass(kw_only=True)
class SourceSpan:
    """Where text lies in its file: physical pages (PDF, EPUB locations) or lines (Markdown,
    text); None where the format has no such unit."""

    page_start: int | None = None
    page_end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass
class NewChunk(SourceSpan):
    text: str
    char_start: int
    char_end: int
    approx_tokens: int
    content_hash: str


@dataclass
class NewSection(SourceSpan):
    title: str
    breadcrumb: str
    text: str
    approx_tokens: int
    chunks: list[NewChunk] = field(default_factory=list)
    role: str = "body"  # structure.roles.ROLES
    hints: frozenset[str] = frozenset()  # markup the role was judged by (epub:type …)


@dataclass(frozen=True)
class NewIndexEntry:
    """One term and locator of a printed back-of-book index (see parse/backindex.py)."""

    term: str
    norm: str
    parent: str | None = None
    printed: str | None = None  # "45–47"
    page_start: int | None = None  # physical pages, when the printed ones could be resolved
    page_end: int | None = None
    see: str = ""
    spread: float = 0.0  # share of the book's pages that mention the term


@dataclass
class NewChapter:
    title: str
    page_start: int | None = None
    page_end: int | None = None
    sections: list[NewSection] = field(default_factory=list)


@dataclass(kw_only=True)
class BookSource:
    """A book's name and the file it came from, as ingested: what a sync compares."""

    slug: str
    name: str
    author: str | None
    source_type: str
    source_path: str
    source_hash: str
    source_size: int
    source_mtime: float
    page_count: int | None = None
    line_count: int | None = None
    page_labels: dict[int, str] = field(default_factory=dict)
    source_root: str | None = None  # the folder given to `ingest DIR`, else None
    source_group: str = ""  # top-level folder under source_root ("" directly in it)


@dataclass(kw_only=True)
class NewBook(BookSource):
    chapters: list[NewChapter] = field(default_factory=list)
    index_entries: list[NewIndexEntry] = field(default_factory=list)


@dataclass(kw_only=True)
class BookRow(BookSource):
    """A book as listed: identity, provenance and counts."""

    id: int
    added_at: str
    updated_at: str
    chapters: int = 0
    sections: int = 0
    chunks: int = 0
    status: dict[str, int] = field(default_factory=dict)
    approx_tokens: int = 0
    roles: dict[str, int] = field(default_factory=dict)  # sections per role
    # from a Calibre or Zotero library (store/source_rows.py); empty for a plain file
    tags: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    series: str | None = None
    link: str | None = None  # opens the item in its application
    metadata: dict[str, object] = field(default_factory=dict)


@dataclass
class SectionRow:
    book_id: int
    chapter_index: int
    section_index: int
    chapter_title: str
    title: str
    breadcrumb: str
    text: str
    approx_tokens: int
    page_start: int | None
    page_end: int | None
    line_start: int | None
    line_end: int | None
    summary: str | None
    chunks: int = 0
    role: str = "body"


@dataclass
class ChunkWork:
    """A chunk waiting for a model stage, with what the stage needs to know."""

    id: int
    book_id: int
    section_id: int
    text: str
    context: str | None
    content_hash: str
    role: str = "body"
    """Its section's role (``body``, ``contents``, ``index``, …)."""
    source_type: str = ""
    """Its book's kind of file (``pdf``, ``epub``, ``markdown``, …)."""


@dataclass(frozen=True)
class Integrity:
    """Consistency figures: SQLite's integrity check, FTS rows, embedded chunks, vectors
    (the last three agree in a consistent library)."""

    integrity_check: str
    fts_rows: int
    embedded_chunks: int
    vectors: int


class ChunkSpan(NamedTuple):
    """Where one chunk sits: its section and its span of the section's text and source (a
    named tuple: a search makes one for each candidate it reads and each chunk near a
    passage)."""

    chunk_id: int
    book_id: int
    chapter_index: int
    section_index: int
    char_start: int
    char_end: int
    page_start: int | None
    page_end: int | None
    line_start: int | None
    line_end: int | None


class CandidateFacts(NamedTuple):
    """What search reads of one fused candidate: its section's role, its text (both for
    ranking), its span (passages) and its index in the section (spotting neighbours)."""

    role: str
    text: str
    span: ChunkSpan
    chunk_index: int
