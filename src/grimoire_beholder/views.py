"""The public, JSON-ready results of the Library API (what the CLI and MCP server render)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from grimoire_beholder.citation import Citation, Source, one_line
from grimoire_beholder.locate import redacted
from grimoire_beholder.store.records import BookRow, SectionRow
from grimoire_beholder.text import plural

if TYPE_CHECKING:
    from grimoire_beholder.config import Config


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
        "roles": dict(book.roles),
        "tags": list(book.tags), "collections": list(book.collections),
        "series": book.series, "link": book.link, "metadata": dict(book.metadata),
    }


# What a person would want listed first: books with pages (PDF, EPUB), then documents
# (Word, HTML), then Markdown and text notes.
_SHELF_RANK = {"pdf": 0, "epub": 0, "docx": 1, "html": 1}


def shelf_order(book: BookRow) -> int:
    """The sort key that puts real books before notes; a stable sort keeps the library's
    own order (by slug) within each kind."""
    return _SHELF_RANK.get(book.source_type, 2)


@dataclass(frozen=True)
class IngestedFolder:
    """A folder given to ``ingest DIR``, seen as one entry: its books, real books first."""

    root: str  # absolute, as stored
    books: tuple[BookRow, ...]

    @property
    def name(self) -> str:
        """Its last path component (``markdown-dev``), or the path for a drive root."""
        return re.split(r"[\\/]", self.root.rstrip("/\\"))[-1] or self.root

    def groups(self) -> list[tuple[str, int]]:
        """Its top-level subfolders with their file counts, largest first ("" = files
        directly in it are not a group)."""
        counts: dict[str, int] = {}
        for b in self.books:
            if b.source_group:
                counts[b.source_group] = counts.get(b.source_group, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def shelves(books: list[BookRow]) -> tuple[list[BookRow], list[IngestedFolder]]:
    """The books ingested one by one (real books before notes), and each ingested folder
    as one :class:`IngestedFolder` (by path): what an assistant is shown first, so a folder
    of a hundred notes is one entry rather than a hundred."""
    singles = sorted((b for b in books if not b.source_root), key=shelf_order)
    roots: dict[str, list[BookRow]] = {}
    for b in books:
        if b.source_root:
            roots.setdefault(b.source_root, []).append(b)
    return singles, [IngestedFolder(root, tuple(sorted(members, key=shelf_order)))
                     for root, members in sorted(roots.items())]


def find_folder(folders: list[IngestedFolder], ref: str) -> IngestedFolder | None:
    """The ingested folder ``ref`` names: its path as stored (a trailing separator or
    letter case aside) or, when only one folder has it, its last name; else None."""
    key = ref.strip().rstrip("/\\")
    exact = [f for f in folders if f.root.rstrip("/\\") == key]
    if exact:
        return exact[0]
    by_name = [f for f in folders if key.casefold() in (f.name.casefold(),
                                                        f.root.rstrip("/\\").casefold())]
    return by_name[0] if len(by_name) == 1 else None


def _row_fields(row: SectionRow) -> dict[str, Any]:
    """The store's section fields of ``row`` (also of a view built on it), by name."""
    return {f.name: getattr(row, f.name) for f in fields(SectionRow)}


def book_source(book: BookRow) -> Source:
    """What citations of ``book``'s passages need to know about it."""
    return Source.of(book.name, book.source_type, book.source_path, book.source_root,
                     book.page_labels)


@dataclass(kw_only=True)
class OutlineSection(SectionRow):
    """A section in an outline: its row (``text`` left empty) and its citation."""

    citation: Citation


@dataclass
class OutlineChapter:
    chapter_index: int
    title: str
    page_start: int | None
    page_end: int | None
    citation: Citation
    sections: list[OutlineSection] = field(default_factory=list)


@dataclass
class Outline:
    book_id: int
    slug: str
    name: str
    chapters: list[OutlineChapter]

    @classmethod
    def from_rows(cls, book: BookRow, chapters: list[tuple[int, str, int | None, int | None,
                                                           list[SectionRow]]]) -> Outline:
        """The outline from the store's chapters and sections (``store/book_rows.outline``)."""
        source = book_source(book)
        return cls(book.id, book.slug, book.name, [OutlineChapter(
            index, title, page_start, page_end, source.cite(title, page_start, page_end),
            [OutlineSection(**_row_fields(s), citation=source.cite_span(s.breadcrumb, s))
             for s in sections]) for index, title, page_start, page_end, sections in chapters])


@dataclass(kw_only=True)
class SectionText(SectionRow):
    """A section's full text and summary, with its book and citation.

    ``chapter_title`` and ``title`` are ``chapter`` and ``section`` on the wire, as in a hit.
    """

    slug: str
    book: str
    citation: Citation

    @classmethod
    def from_row(cls, book: BookRow, row: SectionRow) -> SectionText:
        return cls(**_row_fields(row), slug=book.slug, book=book.name,
                   citation=book_source(book).cite_span(row.breadcrumb, row))

    def to_dict(self) -> dict[str, Any]:
        out = _row_fields(self)
        out.update(chapter=out.pop("chapter_title"), section=out.pop("title"), slug=self.slug,
                   book=self.book, **self.citation.to_dict())
        return out


@dataclass(kw_only=True)
class StageCounts:
    """What the model stages did: summaries and contexts written, chunks embedded (and how
    many of them were windowed because they outran the embedder), and the time it took.
    One ingest, a folder run and the stage runner all count with these fields."""

    summaries: int = 0
    contexts: int = 0
    embedded: int = 0
    windowed: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0


@dataclass(kw_only=True)
class IngestReport(StageCounts):
    """What one ingest did."""

    slug: str
    name: str
    book_id: int
    source_path: str
    created: bool  # False when the same bytes were already there (resumed or up to date)
    replaced: bool
    chapters: int
    sections: int
    chunks: int
    warnings: list[str] = field(default_factory=list)
    # When not created: the path the book's file moved here from (the book now follows it),
    # or the book's own file when the file named is a copy of it (the book keeps its file).
    moved_from: str | None = None
    copy_of: str | None = None

    @property
    def chunks_per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["chunks_per_second"] = round(self.chunks_per_second, 2)
        return out


# "updated": a Calibre or Zotero book whose metadata alone was edited (nothing re-embedded).
SYNC_ACTIONS: tuple[str, ...] = ("added", "changed", "removed", "moved", "unchanged",
                                 "resumed", "skipped", "failed", "updated")


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
    # A failed or skipped file's (path, size, mtime, sha256 or "") as the sync found it, when
    # known: ``sync --watch`` names a problem again only once its file changed. Not in JSON.
    version: tuple[str, int, float, str] | None = field(default=None, compare=False,
                                                        repr=False)

    def describe(self) -> str:
        """One line, e.g. ``changed   notes/a.md (12 chunks: 2 embedded, 10 reused)``."""
        line = f"{self.action:<9} {one_line(self.path)}"
        if self.action == "moved" and self.old_path:
            line += f" (from {one_line(self.old_path)})"
        elif self.action in ("failed", "skipped") or (self.action == "removed"
                                                       and self.error):
            line += f": {self.error}"
        elif self.action in ("added", "changed", "resumed"):
            line += f" ({plural(self.chunks, 'chunk')}: {self.embedded} embedded"
            line += f", {self.reused} reused)" if self.reused else ")"
        return line


@dataclass(kw_only=True)
class SyncReport(StageCounts):
    """The outcome of ``ingest DIR`` or ``sync``: one entry per file that was looked at."""

    dry_run: bool = False
    files: list[FileOutcome] = field(default_factory=list)
    reused: int = 0
    warnings: list[str] = field(default_factory=list)
    # ``sync --watch``: the failed and skipped files an earlier report named, unchanged
    # since, which this one need not name again (its counts still include them). Not in JSON.
    told_before: list[FileOutcome] = field(default_factory=list)
    # ``sync --watch``: the warnings (those of ``told_before``'s skipped files among them) an
    # earlier report named, still standing, which this one need not repeat. Not in JSON.
    warned_before: list[str] = field(default_factory=list)

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
                "files": [{k: v for k, v in asdict(f).items() if k != "version"}
                          for f in self.files]}


def sync_summary(report: dict[str, Any]) -> str:
    """One line for a sync report (``to_dict`` shape), in the CLI and the MCP tools:
    ``added 2 · changed 1 · … — 3 chunks embedded, 40 reused (1.2s)``; each file looked at
    is counted once.
    """
    counts = report["counts"]
    shown = [f"{name} {counts[name]}" for name in
             ("added", "changed", "removed", "moved", "unchanged")]
    shown += [f"{name} {counts[name]}" for name in ("updated", "resumed", "skipped", "failed")
              if counts[name]]
    verb = "would embed" if report["dry_run"] else "embedded"
    return (("dry run: " if report["dry_run"] else "") + " · ".join(shown)
            + f" — {plural(report['chunks_embedded'], 'chunk')} {verb}, "
            + f"{report['chunks_reused']} reused"
            + f" ({report['seconds']:.1f}s)")


@dataclass(frozen=True)
class BookState:
    """One book in ``status``: its counts, whether every stage is done, its last health run."""

    id: int
    slug: str
    name: str
    chapters: int
    sections: int
    sections_summarized: int
    chunks: int
    status: dict[str, int]  # chunks by stage: pending, contextualized, embedded
    complete: bool
    health: dict[str, Any] | None  # the last `health` summary of this file, if any


@dataclass(frozen=True)
class EmbeddingStamp:
    """The embedding model (backend:model) and dimension every stored vector has."""

    identity: str
    dimension: int

    @property
    def shown(self) -> str:
        """``embedded · all-MiniLM-L6-v2``, as ``status`` names a configured model."""
        return model_shown(self.identity)


def model_shown(identity: str) -> str:
    """An embedder's identity (``backend:model``) as ``backend · model``."""
    backend, _, model = identity.partition(":")
    return f"{backend} · {model}" if model else backend


def model_mismatch(stamp: EmbeddingStamp | None, configured: str,
                   config_file: str | None) -> str | None:
    """What a person must do when the configured embedder (``configured``, its identity)
    is not the one the library's vectors were made with — searches and ingests
    refuse —, in words: None when it is, or nothing is embedded yet."""
    if stamp is None or stamp.identity == configured:
        return None
    backend, _, model = stamp.identity.partition(":")
    where = f"in {config_file}" if config_file else "in the library's config.toml"
    return (f'searches and ingests refuse until embedding_backend = "{backend}" '
            f'and embedding_model = "{model}" are set back {where}; to change models, ingest '
            "the books into a new library (another db_path)")


@dataclass(frozen=True)
class LibraryStatus:
    """What ``status`` shows: the configured models, the model the library's vectors were
    made with (``embedding_stamp``) and, when the two differ, what to do about it
    (``embedding_mismatch``), the database and why it was chosen, the chunks by stage, and
    every book."""

    database: str
    config_file: str | None
    chosen_by: str
    embedding_backend: str
    embedding_model: str
    llm_backend: str
    llm_model: str | None
    embedding_stamp: EmbeddingStamp | None
    embedding_configured: str  # the configured embedder's identity (backend:model)
    embedding_mismatch: str | None
    chunks: dict[str, int]
    books: list[BookState]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Savings:
    """Cumulative characters searches served against the full size of the books they came
    from (``stats``, MCP ``book_status``)."""

    searches: int
    chars_served: int
    chars_books: int
    first_at: str | None
    last_at: str | None
    stats_file: str
    chars_saved: int
    tokens_served_est: int
    tokens_saved_est: int
    saving_ratio: float | None  # None before the first search

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status_view(config: Config, stamp: tuple[str, int] | None, configured: str,
                chunks: dict[str, int], books: list[BookRow],
                summaries: dict[int, tuple[int, int]], health: dict[str, Any]
                ) -> LibraryStatus:
    """The library's :class:`LibraryStatus` from the store's counts; ``configured`` is the
    configured embedder's identity, to hold against the library's ``stamp``."""
    rows = []
    for b in books:
        done, total = summaries.get(b.id, (0, 0))
        rows.append(BookState(
            id=b.id, slug=b.slug, name=b.name, chapters=b.chapters, sections=b.sections,
            sections_summarized=done, chunks=b.chunks, status=dict(b.status),
            complete=b.chunks == b.status.get("embedded", 0) and done == total,
            health=health.get(b.source_hash)))
    return LibraryStatus(
        database=redacted(config.database_url) if config.database_url else str(
            config.database_path), config_file=config.source,
        chosen_by=config.origin, embedding_backend=config.embedding_backend,
        embedding_model=config.embedding_model_name, llm_backend=config.llm_backend,
        llm_model=config.llm_model if config.llm_backend != "none" else None,
        embedding_stamp=EmbeddingStamp(*stamp) if stamp else None,
        embedding_configured=configured,
        embedding_mismatch=model_mismatch(EmbeddingStamp(*stamp) if stamp else None,
                                          configured, config.source),
        chunks=chunks, books=rows)
