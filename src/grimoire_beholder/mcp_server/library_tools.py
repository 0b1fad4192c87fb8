"""The MCP tools that show what the library holds: ``list_books`` and ``book_status`` — their
result shapes (the output schemas), their text, the tools themselves."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field, field_validator

from grimoire_beholder.citation import extent
from grimoire_beholder.mcp_server.serving import bounded_result, one_line, served, with_note
from grimoire_beholder.text import plural
from grimoire_beholder.views import book_dict

MAX_BOOKS = 150  # list_books / book_status entries per response
MAX_LABELS = 30  # tags or collections per book


class BookEntry(BaseModel):
    id: int = Field(description="Numeric book id (accepted wherever book_id is asked for).")
    slug: str = Field(description="Stable short name (also accepted as book_id).")
    name: str
    author: str | None
    source_type: str = Field(description="pdf, epub, markdown or text.")
    page_count: int | None = Field(
        description="Pages (PDF), synthetic ~1,024-character pages (EPUB), else null.")
    line_count: int | None = Field(description="Lines (Markdown/text), else null.")
    group: str = Field(default="", description="Top-level folder within an ingested folder "
                       "(search_book's group filter); empty for files ingested one by one.")
    chapters: int
    sections: int
    approx_tokens: int
    tags: list[str] = Field(default_factory=list, description="Tags in its Calibre or Zotero "
                            "library (search_book's tag filter); at most 30 shown.")
    collections: list[str] = Field(default_factory=list, description="Its Zotero collections "
                                   "(search_book's collection filter).")
    series: str | None = Field(default=None, description="Its Calibre series "
                               "(search_book's series filter).")
    link: str | None = Field(default=None, description="Opens it in Calibre or Zotero.")

    @field_validator("tags", "collections")
    @classmethod
    def _bounded(cls, values: list[str]) -> list[str]:
        return values[:MAX_LABELS]


class BookList(BaseModel):
    count: int = Field(description="Books in the library.")
    books: list[BookEntry]
    note: str | None = None


class BookStatus(BaseModel):
    id: int
    slug: str
    name: str
    chapters: int
    sections: int
    sections_summarized: int
    chunks: int
    status: dict[str, int] = Field(description="Chunks by stage: pending, contextualized, "
                                               "embedded (searchable by meaning).")
    complete: bool
    health: dict[str, Any] | None = Field(
        default=None, description="The last `grimoire-beholder health` check of this book: "
        "reachability (share of sections retrieval finds from their own text), pages "
        "without text, problems found; null if never checked.")


class LibraryStatus(BaseModel):
    embedding_backend: str
    embedding_model: str
    llm_backend: str
    retrieval_mode: str
    chunks: dict[str, int]
    books: list[BookStatus]
    savings: dict[str, Any] | None = Field(
        default=None, description="Characters served by searches vs the full size of the "
                                  "books they came from (the context this library saved).")
    note: str | None = None


def books_text(result: BookList) -> str:
    """One line per book: ids, name, author, size, and the group search_book filters on."""
    lines = [f"{plural(result.count, 'book')}:"]
    for b in result.books:
        size = extent(b.source_type, b.page_count, b.line_count)
        lines.append(f"- id={b.id} slug={b.slug}: {one_line(b.name)}"
                     + (f" — {one_line(b.author)}" if b.author else "")
                     + f" [{b.source_type}, {size}, {plural(b.chapters, 'chapter')}, "
                     + plural(b.sections, "section")
                     + (f", group={one_line(b.group)}" if b.group else "") + "]"
                     + one_line(_labels(b.series, b.collections, b.tags, b.link)))
    return with_note(lines, result.note)


def _labels(series: str | None, collections: list[str], tags: list[str],
            link: str | None) -> str:
    """`` series=… collections=… tags=… link=…`` for a Calibre or Zotero book, else ""."""
    parts = [f"series={series}"] if series else []
    if collections:
        parts.append("collections=" + "; ".join(collections))
    if tags:
        parts.append("tags=" + ", ".join(tags))
    if link:
        parts.append(f"open: {link}")
    return (" " + " ".join(parts)) if parts else ""


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items())


def status_text(result: LibraryStatus) -> str:
    """Models and retrieval mode, characters saved so far, then one line per book."""
    lines = [f"embeddings: {result.embedding_backend} · {result.embedding_model}; "
             f"retrieval: {result.retrieval_mode}; chunks: {_counts(result.chunks)}"]
    savings = result.savings or {}
    if savings.get("searches"):
        lines.append(f"searches so far served {savings.get('chars_served', 0):,} characters "
                     f"from books totalling {savings.get('chars_books', 0):,}")
    lines += [f"- {b.slug} (id={b.id}): {plural(b.chapters, 'chapter')}, "
              f"{plural(b.sections, 'section')} ({b.sections_summarized} summarized), "
              f"{plural(b.chunks, 'chunk')} ({_counts(b.status)})"
              f" — " + ("complete" if b.complete else "incomplete") + _health(b)
              for b in result.books]
    return with_note(lines, result.note)


def _health(book: BookStatus) -> str:
    """`; health: 94% reachable; scanned pages …` from the last health check, if any."""
    h = book.health
    if not h:
        return "; health: not checked (run `grimoire-beholder health`)"
    reach = h.get("reachability")
    parts = [f"{reach:.0%} of sections reachable" if reach is not None else "not probed"]
    if h.get("pages_without_text"):
        parts.append(f"pages without text: {h['pages_without_text']}")
    parts += list(h.get("problems") or [])[:3]
    return f"; health ({str(h.get('checked_at', ''))[:10]}): " + "; ".join(parts)


def list_books(ctx: Context) -> Annotated[CallToolResult, BookList]:
    """List every book in the library: id, slug, name, author, source type (pdf, epub,
    markdown, text, html, docx), page count (PDF) or line count (Markdown/text), chapters,
    sections, the group (top-level folder) of books ingested from a folder, and the tags,
    collections, series and link of books from a Calibre or Zotero library.

    Use it to find a book_id (the numeric id or the slug both work) for get_book_outline,
    get_section, or to restrict search_book to one book or group."""
    books = served(ctx).run(lambda lib: lib.list_books())
    entries = [BookEntry.model_validate(book_dict(b)) for b in books]
    note = ("The library is empty: books are added with `grimoire-beholder ingest FILE`."
            if not entries else f"Only the first {MAX_BOOKS} of {len(entries)} books are "
            "listed; search_book searches all of them." if len(entries) > MAX_BOOKS else None)
    result = BookList(count=len(entries), books=entries[:MAX_BOOKS], note=note)
    return bounded_result(books_text, result)


def book_status(ctx: Context) -> Annotated[CallToolResult, LibraryStatus]:
    """Per book: chapters, sections (and how many are summarized), and chunks by stage
    (pending → contextualized → embedded). A book is searchable by meaning once its
    chunks are embedded; 'complete' is false while an ingest is unfinished. Also names
    the embedding model and retrieval mode in use, and each book's last health check
    (how much of it retrieval finds, pages without text, parse problems)."""
    state = served(ctx)
    info = state.run(lambda lib: {**lib.status().to_dict(), "savings": lib.savings().to_dict()})
    books = [BookStatus.model_validate(b) for b in info["books"]]
    note = (f"Only the first {MAX_BOOKS} of {len(books)} books are shown."
            if len(books) > MAX_BOOKS else None)
    result = LibraryStatus.model_validate({
        **info, "retrieval_mode": state.library.config.retrieval_mode,
        "books": books[:MAX_BOOKS], "note": note})
    return bounded_result(status_text, result)
