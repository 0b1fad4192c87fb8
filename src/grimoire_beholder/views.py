"""The public, JSON-ready results of the Library API (what the CLI and MCP server render)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .store.records import BookRow, SectionRow


def book_dict(book: BookRow) -> dict[str, Any]:
    """A book as scripts see it (``list --json``, MCP ``list_books``)."""
    return {
        "id": book.id, "slug": book.slug, "name": book.name, "author": book.author,
        "source_type": book.source_type, "source_path": book.source_path,
        "page_count": book.page_count, "line_count": book.line_count,
        "chapters": book.chapters, "sections": book.sections, "chunks": book.chunks,
        "status": dict(book.status), "approx_tokens": book.approx_tokens,
        "added_at": book.added_at, "updated_at": book.updated_at,
    }


@dataclass
class OutlineSection:
    section_index: int
    title: str
    breadcrumb: str
    page_start: int | None
    page_end: int | None
    line_start: int | None
    line_end: int | None
    approx_tokens: int
    chunks: int


@dataclass
class OutlineChapter:
    chapter_index: int
    title: str
    page_start: int | None
    page_end: int | None
    sections: list[OutlineSection] = field(default_factory=list)


@dataclass
class Outline:
    book_id: int
    slug: str
    name: str
    chapters: list[OutlineChapter]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SectionText:
    book_id: int
    slug: str
    book: str
    chapter_index: int
    chapter: str
    section_index: int
    section: str
    breadcrumb: str
    page_start: int | None
    page_end: int | None
    page_label: str | None
    line_start: int | None
    line_end: int | None
    approx_tokens: int
    summary: str | None
    text: str

    @classmethod
    def from_row(cls, book: BookRow, row: SectionRow) -> SectionText:
        labels = book.page_labels
        label = None
        if labels and row.page_start is not None:
            first = labels.get(row.page_start)
            last = labels.get(row.page_end) if row.page_end is not None else None
            label = first if not last or last == first else f"{first}–{last}"
        return cls(
            book_id=book.id, slug=book.slug, book=book.name, chapter_index=row.chapter_index,
            chapter=row.chapter_title, section_index=row.section_index, section=row.title,
            breadcrumb=row.breadcrumb, page_start=row.page_start, page_end=row.page_end,
            page_label=label, line_start=row.line_start, line_end=row.line_end,
            approx_tokens=row.approx_tokens, summary=row.summary, text=row.text,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class IngestReport:
    """What one ingest did."""

    slug: str
    name: str
    book_id: int
    source_path: str
    created: bool  # False when the same file was already there (resumed or up to date)
    replaced: bool
    chapters: int
    sections: int
    chunks: int
    summaries: int = 0
    contexts: int = 0
    embedded: int = 0
    windowed: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def chunks_per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["chunks_per_second"] = round(self.chunks_per_second, 2)
        return out
