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
        "source_root": book.source_root, "group": book.source_group,
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


SYNC_ACTIONS: tuple[str, ...] = ("added", "changed", "removed", "moved", "unchanged",
                                 "resumed", "failed")


@dataclass
class FileOutcome:
    """What a folder ingest or sync did (or, in a dry run, would do) with one file.

    ``embedded`` counts chunks that met the embedder, ``reused`` chunks whose context and
    vector were carried over unchanged; in a dry run both are what would happen.
    """

    action: str  # one of SYNC_ACTIONS
    path: str  # relative to its root when known, else absolute
    slug: str | None = None
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    old_path: str | None = None  # for "moved"
    error: str | None = None  # for "failed"

    def describe(self) -> str:
        """One line, e.g. ``changed   notes/a.md (12 chunks: 2 embedded, 10 reused)``."""
        line = f"{self.action:<9} {self.path}"
        if self.action == "moved" and self.old_path:
            line += f" (from {self.old_path})"
        elif self.action == "failed":
            line += f": {self.error}"
        elif self.action in ("added", "changed", "resumed"):
            line += f" ({self.chunks} chunks: {self.embedded} embedded"
            line += f", {self.reused} reused)" if self.reused else ")"
        return line


@dataclass
class SyncReport:
    """The outcome of ``ingest DIR`` or ``sync``: one entry per file that was looked at."""

    dry_run: bool = False
    files: list[FileOutcome] = field(default_factory=list)
    summaries: int = 0
    contexts: int = 0
    embedded: int = 0
    reused: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(SYNC_ACTIONS, 0)
        for f in self.files:
            out[f.action] += 1
        return out

    @property
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.action == "failed"]

    @property
    def changed_anything(self) -> bool:
        return any(f.action not in ("unchanged", "failed") for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "counts": self.counts(),
                "chunks_embedded": self.embedded, "chunks_reused": self.reused,
                "summaries": self.summaries, "contexts": self.contexts,
                "seconds": round(self.seconds, 3), "warnings": list(self.warnings),
                "files": [asdict(f) for f in self.files]}
