"""From a ParsedBook to the store's records: sections shaped, chunks cut, hashes taken."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grimoire_beholder.config import Config
from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.models.protocols import Embedder, FitsWindow
from grimoire_beholder.naming import unambiguous_slug
from grimoire_beholder.parse.document import ParsedBook, ParsedChapter, ParsedSection, ParseOptions
from grimoire_beholder.store.records import NewBook, NewChapter, NewChunk, NewIndexEntry, NewSection
from grimoire_beholder.structure.book_index import page_texts, pages_of, resolve_entries
from grimoire_beholder.structure.chunks import chunk_section
from grimoire_beholder.structure.modes import chunk_mode_for, is_reference_text
from grimoire_beholder.structure.piece_limit import PieceLimit
from grimoire_beholder.structure.roles import BODY, INDEX, section_role, whole_book
from grimoire_beholder.structure.sections import breadcrumb, shape_chapter
from grimoire_beholder.structure.tokens import approx_tokens

CONTEXT_PIECES = 0
"""Pieces of each embedding window kept for a chunk's situating context: a chunk holds at
most the window less these, so that it (and the head of its context) is embedded as one
window (``EmbeddedEmbedder.fit_context``). Chosen on the dev sets (README, "Performance")."""

REFERENCE_CONTEXT_PIECES = 48
"""The same for reference text (``structure.modes.is_reference_text``: Markdown under its
own headings): its chunks leave this many pieces of the window to their context, so they
are shorter than a book's and their heading path and summary always reach the model.
Chosen on one split of the dev sets and checked on the other (README, "Performance")."""


def limit_for(parsed: ParsedBook, limit: PieceLimit | None) -> PieceLimit | None:
    """The piece limit of ``parsed``'s chunks: ``limit`` (:func:`piece_limit`, a book's) as
    it is, or cut by the reference budget for reference text; None stays None."""
    if limit is None or not is_reference_text(parsed):
        return limit
    return PieceLimit(limit.count,
                      max(1, limit.most + CONTEXT_PIECES - REFERENCE_CONTEXT_PIECES))


def piece_limit(embedder: Embedder) -> PieceLimit | None:
    """How chunks for ``embedder`` are bounded in its own pieces; None for a model whose
    tokenizer is unknown (Ollama), whose chunks are sized in approximate tokens only."""
    if not isinstance(embedder, FitsWindow):
        return None
    return PieceLimit(embedder.count_pieces, embedder.window_pieces - CONTEXT_PIECES)


@dataclass(frozen=True)
class FileInfo:
    """What identifies a source file's content and version."""

    path: str
    sha256: str
    size: int
    mtime: float


def parse_options(config: Config) -> ParseOptions:
    """The parser switches from the config: the parsers never see Config itself."""
    return ParseOptions(pdf_tables=config.pdf_tables, ocr=config.ocr,
                        ocr_language=config.ocr_language)


def file_info(path: Path) -> FileInfo:
    """Hash a file in 1 MiB blocks (books can be hundreds of MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    st = path.stat()
    return FileInfo(path=str(path.resolve()), sha256=digest.hexdigest(), size=st.st_size,
                    mtime=st.st_mtime)


def file_version(path: Path | str, info: FileInfo | None = None
                 ) -> tuple[str, int, float, str] | None:
    """A file as a sync found it (``FileOutcome.version``): ``info``'s path, size, mtime and
    hash when the file was read, else its stat with no hash; None when not even that."""
    if info is not None:
        return info.path, info.size, info.mtime, info.sha256
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return str(path), st.st_size, st.st_mtime, ""


def slugify(text: str, *, max_length: int = 60) -> str:
    """A URL- and shell-friendly identifier: ascii, lower case, words joined by hyphens;
    never all digits (``12`` → ``book-12``), which would read as a book id (naming.py)."""
    text = re.sub(r"(\w)['’](\w)", r"\1\2", text)  # keeper's → keepers, not keeper-s
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0] or slug[:max_length]
    return unambiguous_slug(slug) if slug else slug


def book_slug(display_name: str, path: Path, source_hash: str) -> str:
    """Slug from the display name; else the filename; else a stable hash (e.g. CJK titles).
    Never digits alone (``slugify``): ``2`` is book id 2, and only that (naming.py)."""
    return slugify(display_name) or slugify(path.stem) or f"book-{source_hash[:8]}"


def chunk_hash(crumb: str, text: str) -> str:
    """Identity of a chunk's content in its place: its text and its section breadcrumb."""
    return hashlib.sha256(f"{crumb}\n\x1f{text}".encode()).hexdigest()


def _span(values: list[int | None], pick: Callable[[list[int]], int]) -> int | None:
    present = [v for v in values if v is not None]
    return pick(present) if present else None


def _section_record(chapter: ParsedChapter, section: ParsedSection, config: Config,
                    mode: str, limit: PieceLimit | None) -> NewSection:
    chapter_title = chapter.title
    crumb = breadcrumb(chapter_title, section)
    hints = section.hints | chapter.hints
    if mode == "window":
        drafts = chunk_section(section, config.window_size, config.window_overlap,
                               paragraphs=False, limit=limit)
    else:
        drafts = chunk_section(section, config.chunk_size, config.chunk_overlap, limit=limit)
    blocks = section.blocks
    pages = [b.page for b in blocks] + [b.last_page for b in blocks]
    return NewSection(
        title=section.title,
        breadcrumb=crumb,
        text=section.text,
        approx_tokens=approx_tokens(section.text),
        page_start=_span([b.page for b in blocks], min) or section.anchor_page,
        page_end=_span(pages, max) or section.anchor_page,
        line_start=_span([b.line_start for b in blocks], min),
        line_end=_span([b.line_end for b in blocks], max),
        chunks=[
            NewChunk(
                text=d.text, char_start=d.char_start, char_end=d.char_end,
                approx_tokens=d.approx_tokens, content_hash=chunk_hash(crumb, d.text),
                page_start=d.page_start, page_end=d.page_end,
                line_start=d.line_start, line_end=d.line_end,
            )
            for d in drafts
        ],
        role=section_role(chapter_title, section.title, section.text, hints),
        hints=hints,
    )


def build_book(parsed: ParsedBook, *, slug: str, name: str, info: FileInfo,
               config: Config, limit: PieceLimit | None = None, root: str | None = None,
               group: str = "") -> NewBook:
    """Shape sections, cut chunks and hash them; nothing is written here.

    The chunker (per-section or prose windows) is chosen per file from ``chunk_mode``, see
    ``structure.modes``; ``limit`` bounds a book's chunks in the embedding model's pieces
    (:func:`piece_limit`), reference text gets a smaller budget (:func:`limit_for`).
    ``root``/``group`` record where a folder ingest found the file.
    """
    mode = chunk_mode_for(parsed, config.chunk_mode)
    limit = limit_for(parsed, limit)
    chapters: list[NewChapter] = []
    for chapter in parsed.chapters:
        sections = [_section_record(chapter, s, config, mode, limit)
                    for s in shape_chapter(chapter, config.section_split_tokens)]
        chapters.append(NewChapter(
            title=chapter.title,
            page_start=_span([s.page_start for s in sections], min) or chapter.anchor_page,
            page_end=_span([s.page_end for s in sections], max) or chapter.anchor_page,
            sections=sections,
        ))
    _settle_roles(chapters)
    return NewBook(
        slug=slug, name=name, author=parsed.author, source_type=parsed.source_type,
        source_path=info.path, source_hash=info.sha256, source_size=info.size,
        source_mtime=info.mtime, page_count=parsed.page_count, line_count=parsed.line_count,
        page_labels=dict(parsed.page_labels), chapters=chapters, source_root=root,
        source_group=group, index_entries=_index_entries(parsed, chapters),
    )


def _settle_roles(chapters: list[NewChapter]) -> None:
    """Roles judged section by section, then for the book as a whole (roles.whole_book)."""
    sections = [s for c in chapters for s in c.sections]
    for section, role in zip(sections, whole_book([s.role for s in sections]), strict=True):
        section.role = role


def _index_entries(parsed: ParsedBook, chapters: list[NewChapter]) -> list[NewIndexEntry]:
    """The printed back-of-book index of the book, if it has one (structure/book_index.py)."""
    texts = [s.text for c in chapters for s in c.sections if s.role == INDEX]
    if not texts:
        return []
    pages = page_texts((b.page, b.text) for c in parsed.chapters for s in c.sections
                       for b in s.blocks)
    back = [(s.page_start, s.page_end) for c in chapters for s in c.sections if s.role != BODY]
    return [NewIndexEntry(**vars(e)) for e in resolve_entries(
        texts, parsed.page_labels, pages, paged=parsed.source_type == "pdf",
        back_pages=pages_of(back))]


@dataclass(frozen=True)
class PreparedBook:
    """A book parsed, shaped, chunked and hashed, ready for one transaction."""

    book: NewBook
    warnings: list[str]

    @property
    def chunk_hashes(self) -> list[str]:
        return [c.content_hash for ch in self.book.chapters for s in ch.sections
                for c in s.chunks]


Naming = Callable[[str], tuple[str, str]]
"""From the name a file suggests (its title, else its file name) to (slug, display name);
may raise, e.g. when the slug belongs to another book."""


def prepare_book(path: Path, info: FileInfo, config: Config, *, label: str,
                 progress: Progress, naming: Naming, limit: PieceLimit | None,
                 root: str | None = None,
                 group: str = "", amend: Callable[[ParsedBook], None] | None = None
                 ) -> PreparedBook:
    """Parse → warnings → name → build → refuse a book without text; nothing is written.

    The one way in for a file: ``ingest FILE``, a folder ingest or sync, and sync's dry run
    all come through here, so they agree on what a file becomes and on which files fail.
    ``label`` names the file in warnings (sent to ``progress`` as they come) and errors.
    ``amend`` adds to the parsed book before it is shaped (a Zotero item's annotations).
    ``limit`` is :func:`piece_limit` of the library's embedder (chunks must be cut alike by
    every caller, or sync's preview and the real run would disagree on the chunks).
    """
    from grimoire_beholder.parse import parse_file

    parsed = parse_file(path, parse_options(config))
    if amend is not None:
        amend(parsed)
    for warning in parsed.warnings:
        progress.message(f"warning: {label}: {warning}")
    slug, name = naming((parsed.title or path.stem).strip() or path.stem)
    book = build_book(parsed, slug=slug, name=name, info=info, config=config, limit=limit,
                      root=root, group=group)
    if not any(s.chunks for ch in book.chapters for s in ch.sections):
        raise NoTextError(f"{label}: no text to index")
    return PreparedBook(book, list(parsed.warnings))


def failure_reason(exc: Exception, display: str, path: Path | None) -> str:
    """Why a file failed, without the file's name: the outcome line already leads with it
    (an InputFileError's message starts with the path it was given)."""
    text = str(exc) or type(exc).__name__
    if not isinstance(exc, InputFileError):
        return f"{type(exc).__name__}: {text}"
    for name in (display, str(path)):
        if text.startswith(f"{name}: "):
            return text[len(name) + 2:]
    return text


def free_slug(base: str, group: str, taken: set[str]) -> str:
    """``base``, else ``group-base``, else ``base-2``, ``base-3``…: folders repeat names."""
    if base not in taken:
        return base
    grouped = slugify(f"{group} {base}") if group else ""
    if grouped and grouped not in taken:
        return grouped
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"
