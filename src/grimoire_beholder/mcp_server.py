"""The read-only MCP server: five tools over the Library API, served on stdio.

Why it looks the way it does:

* Read-only for real: the Library is opened with SQLite's ``mode=ro`` and no tool ingests,
  deletes or reindexes; every tool is annotated read-only, idempotent and closed-world.
* Warm: the Library is opened once in the lifespan and a first search loads the embedding
  model and the vector matrix there, not on the first question. Sync tools run on worker
  threads, so calls are serialised on one lock around the shared connection.
* Model-facing: typed results (pydantic models → output schemas) plus a readable text block;
  every response is bounded well under an assistant's ~25k-token tool-output cap; every
  GrimoireError becomes a ToolError whose message says what exists.
* This module never touches SQL or the store: it only calls the Library.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from .errors import GrimoireError
from .library import Library
from .mcp_models import (
    BookEntry,
    BookList,
    BookOutline,
    BookStatus,
    LibraryStatus,
    OutlineChapterEntry,
    OutlineSectionEntry,
    SearchHitEntry,
    SearchResult,
    SectionPart,
)
from .views import book_dict

log = logging.getLogger("grimoire_beholder.mcp")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

SERVER_NAME = "grimoire-beholder"
MAX_TOP_K = 20  # more hits than this would blow the response budget without helping a model
PART_CHARS = 20_000  # one get_section part: ~5k tokens, twice over (text + structured)
SEARCH_TEXT_BUDGET = 24_000  # all excerpts of one search together
HIT_TEXT_MAX = 2_000  # one excerpt, when few hits share the budget
HIT_CONTEXT_MAX = 400
MAX_BOOKS = 150  # list_books / book_status entries per response
OUTLINE_MAX_SECTIONS = 200  # sections listed per get_book_outline response
WARM_QUERY = "warm up"

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

BookId = Annotated[int | str, Field(
    description="The book: its numeric id (e.g. 3) or its slug string (e.g. \"art-of-war\"), "
                "as returned by list_books or search_book.")]


# ------------------------------------------------------------------------ result models
def clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (with a "…")."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _hard_split(piece: str, limit: int) -> list[str]:
    """A paragraph longer than a part, split at line, sentence or word ends when possible."""
    out = []
    while len(piece) > limit:
        window = piece[:limit]
        cut = max(window.rfind("\n"), window.rfind(". ") + 1, window.rfind(" "))
        cut = cut if cut > limit // 2 else limit
        out.append(piece[:cut])
        piece = piece[cut:]
    return [*out, piece]


def split_parts(text: str, limit: int = PART_CHARS) -> list[str]:
    """Deterministic parts of at most ``limit`` characters, on paragraph boundaries.

    Joining the parts with blank lines gives the text back (when no paragraph had to be cut),
    so a model that fetches every part reads the section exactly.
    """
    parts: list[str] = []
    current: str | None = None
    for paragraph in text.split("\n\n"):
        for piece in _hard_split(paragraph, limit) if len(paragraph) > limit else [paragraph]:
            if current is not None and len(current) + 2 + len(piece) <= limit:
                current = f"{current}\n\n{piece}"
            else:
                if current is not None:
                    parts.append(current)
                current = piece
    parts.append(current or "")
    return parts


def _where(page_start: int | None, page_end: int | None, page_label: str | None,
           line_start: int | None, line_end: int | None) -> str:
    """``p. 12``, ``pp. 12–14``, ``p. xii`` or ``lines 10–18``: the locator of a citation."""
    if page_label or page_start is not None:
        return f"p. {page_label}" if page_label else _span("p.", "pp.", page_start, page_end)
    return "" if line_start is None else _span("line", "lines", line_start, line_end)


def _span(one: str, many: str, start: int | None, end: int | None) -> str:
    return f"{one} {start}" if end in (None, start) else f"{many} {start}–{end}"


def _citation(hit: dict[str, Any]) -> str:
    where = _where(hit.get("page_start"), hit.get("page_end"), hit.get("page_label"),
                   hit.get("line_start"), hit.get("line_end"))
    chapter, section = hit["chapter"], hit["section"]
    if section.startswith(f"{chapter} › "):  # the section is already a breadcrumb
        chapter = ""
    return " · ".join(x for x in (hit["book"], chapter, section, where) if x)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items())


def _result(text: str, model: BaseModel) -> CallToolResult:
    """Readable text for the model plus the typed result for clients that read structure."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))


# ------------------------------------------------------------------------ server state
@dataclass
class ServerState:
    """What the lifespan opens once and every tool call shares."""

    library: Library
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, fn: Callable[[Library], T]) -> T:
        """Call the Library under the lock, turning its user-facing errors into ToolErrors."""
        with self.lock:
            try:
                return fn(self.library)
            except GrimoireError as exc:
                raise ToolError(str(exc)) from exc


def _warm(state: ServerState) -> None:
    """Load the embedding model and vector matrix now, so the first question is fast.

    A failure here (Ollama down, empty library) is not fatal: the same error reaches the
    model as a tool error on the first search, where it can be acted on.
    """
    try:
        state.library.search(WARM_QUERY, top_k=1)
    except GrimoireError as exc:
        log.warning("search is not ready yet: %s", exc)


def open_library(config_path: str | os.PathLike[str] | None = None) -> Library:
    """The Library as the server sees it: read-only (SQLite ``mode=ro``), never created."""
    return Library.open(config_path, read_only=True)


def _state(ctx: Context) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state


# ------------------------------------------------------------------------ the server
INSTRUCTIONS = """\
A local, read-only library of books and documents. Typical flow: search_book(question) →
read the cited excerpts → get_section(book_id, chapter_index, section_index) for the full
section. To browse instead: list_books() → get_book_outline(book_id) → get_section(...).
Cite answers with the returned book · chapter · section · page (or line) citation.
Nothing here can add or change books: that is done from the grimoire-beholder CLI."""


def create_server(open_lib: Callable[[], Library]) -> MCPServer[Any]:
    """The MCP server; ``open_lib`` is called once per run, in the lifespan (tests inject)."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[ServerState]:
        state = ServerState(open_lib())
        try:
            await anyio.to_thread.run_sync(_warm, state)
            yield state
        finally:
            state.library.close()

    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS,
                                       lifespan=lifespan, log_level="WARNING")

    def tool(title: str) -> Callable[[F], F]:
        """Register a read-only tool; its docstring, dedented, is what the model reads."""
        def register(fn: F) -> F:
            server.add_tool(fn, title=title, annotations=READ_ONLY,
                            description=inspect.cleandoc(fn.__doc__ or ""))
            return fn
        return register

    @tool("List books")
    def list_books(ctx: Context) -> Annotated[CallToolResult, BookList]:
        """List every book in the library: id, slug, name, author, source type (pdf, epub,
        markdown, text), page count (PDF) or line count (Markdown/text), chapters, sections.

        Use it to find a book_id (the numeric id or the slug both work) for get_book_outline,
        get_section, or to restrict search_book to one book."""
        books = _state(ctx).run(lambda lib: lib.list_books())
        entries = [BookEntry.model_validate(book_dict(b)) for b in books]
        note = ("The library is empty: books are added with `grimoire-beholder ingest FILE`."
                if not entries else f"Only the first {MAX_BOOKS} of {len(entries)} books are "
                "listed; search_book searches all of them." if len(entries) > MAX_BOOKS else None)
        result = BookList(count=len(entries), books=entries[:MAX_BOOKS], note=note)
        lines = [f"{result.count} book(s):"] + [
            f"- id={b.id} slug={b.slug}: {b.name}" + (f" — {b.author}" if b.author else "")
            + f" [{b.source_type}, " + (f"{b.page_count} pages" if b.page_count is not None
                                        else f"{b.line_count or 0} lines")
            + f", {b.chapters} chapters, {b.sections} sections]" for b in result.books]
        return _result("\n".join(lines + ([note] if note else [])), result)

    @tool("Book outline")
    def get_book_outline(ctx: Context, book_id: BookId, chapter_index: Annotated[
            int | None, Field(description="Only this chapter (0-based). Leave out for the "
                                          "whole book.")] = None,
    ) -> Annotated[CallToolResult, BookOutline]:
        """The map of one book: chapters and their sections with 0-based chapter_index and
        section_index, titles, first page (or line) and approximate size in tokens. No text.

        Use it to browse a book, then read a section with get_section(book_id, chapter_index,
        section_index). Very long outlines list sections for the first chapters only; pass
        chapter_index to get the sections of one chapter."""

        def run(lib: Library) -> BookOutline:
            outline = lib.outline(book_id)
            chapters = outline.chapters
            if chapter_index is not None:
                if not 0 <= chapter_index < len(chapters):
                    raise ToolError(f"book '{outline.slug}' has chapters "
                                    f"0–{len(chapters) - 1}, not {chapter_index}")
                chapters = [chapters[chapter_index]]
            budget, entries = OUTLINE_MAX_SECTIONS, []
            for ch in chapters:  # whole chapters while the budget lasts; one chapter: capped
                fits = len(ch.sections) <= budget or chapter_index is not None
                budget = budget - len(ch.sections) if fits else 0
                entries.append(OutlineChapterEntry(
                    chapter_index=ch.chapter_index, title=ch.title, page_start=ch.page_start,
                    section_count=len(ch.sections), sections=[OutlineSectionEntry.model_validate(
                        asdict(s)) for s in ch.sections[:OUTLINE_MAX_SECTIONS]] if fits else None))
            omitted = [c.chapter_index for c in entries if c.sections is None]
            note = (f"Sections of chapters {omitted[0]}–{omitted[-1]} are left out to keep this "
                    "short; call get_book_outline with chapter_index for them." if omitted else
                    f"Only the first {OUTLINE_MAX_SECTIONS} sections are listed; get_section "
                    f"accepts 0–{len(chapters[0].sections) - 1}." if budget < 0 else None)
            return BookOutline(book_id=outline.book_id, slug=outline.slug, name=outline.name,
                               chapters=entries, note=note)

        result = _state(ctx).run(run)
        lines = [f"{result.name} (book_id={result.book_id}, slug={result.slug})"]
        for ch in result.chapters:
            lines.append(f"[{ch.chapter_index}] {ch.title}"
                         + (f" (p. {ch.page_start})" if ch.page_start is not None else "")
                         + f" — {ch.section_count} section(s)")
            for s in ch.sections or []:
                where = _where(s.page_start, None, None, s.line_start, None)
                lines.append(f"    [{ch.chapter_index}.{s.section_index}] {s.title or '(lead-in)'}"
                             + (f" — {where}" if where else "") + f" · ~{s.approx_tokens} tokens")
        return _result("\n".join(lines + ([result.note] if result.note else [])), result)

    @tool("Search the library")
    def search_book(
        ctx: Context,
        question: Annotated[str, Field(description="What to look for, in plain words.")],
        book_id: Annotated[int | str | None, Field(
            description="Only this book: numeric id or slug. Leave out to search all.")] = None,
        top_k: Annotated[int | None, Field(
            description=f"How many excerpts (1–{MAX_TOP_K}; default from the config).")] = None,
        author: Annotated[str | None, Field(description="Only books by this author.")] = None,
        source_type: Annotated[str | None, Field(
            description="Only pdf, epub, markdown or text books.")] = None,
        group: Annotated[str | None, Field(
            description="Only books from this top-level folder of an ingested folder "
                        "(list_books shows each book's group).")] = None,
        path_prefix: Annotated[str | None, Field(
            description="Only books whose file path (absolute, or relative to the ingested "
                        "folder) starts with this, e.g. 'notes/ops/'.")] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the books by meaning and keywords (hybrid retrieval) and return the best
        matching excerpts, each with a citation (book · chapter · section · pages or lines)
        and the book_id, chapter_index and section_index to read the whole section with
        get_section. Use this first to answer a question from the library; quote the
        citation in the answer. Excerpts are clipped: fetch the section for full text."""
        if not question or not question.strip():
            raise ToolError("question is empty: pass what to look for, e.g. "
                            "search_book(question=\"how do I compost kitchen scraps\")")
        state = _state(ctx)
        limit = state.library.config.top_k if top_k is None else top_k
        clamped = min(max(limit, 1), MAX_TOP_K)
        data = state.run(lambda lib: lib.search(
            question.strip(), top_k=clamped, book=book_id, author=author,
            source_type=source_type, group=group, path_prefix=path_prefix).to_dict())
        hits = data.get("results", [])
        per_hit = min(HIT_TEXT_MAX, SEARCH_TEXT_BUDGET // max(len(hits), 1))
        entries = [SearchHitEntry.model_validate({
            **h, "citation": _citation(h), "text": clip(h.get("text") or "", per_hit),
            "context": clip(h["context"], HIT_CONTEXT_MAX) if h.get("context") else None,
        }) for h in hits]
        notes = [n for n in (data.get("note"),) if n]
        if clamped != limit:
            notes.append(f"top_k {limit} is out of range; used {clamped} (allowed 1–{MAX_TOP_K}).")
        low = bool(data.get("low_confidence"))
        if low and entries:
            notes.insert(0, "Low confidence: the library probably does not cover this question; "
                            "these are best guesses.")
        result = SearchResult(query=data.get("query", question), mode=data.get("mode", ""),
                              top_k=clamped, results=entries, confidence=data.get("confidence"),
                              low_confidence=low, note=" ".join(notes) or None)
        lines = [f"{len(entries)} result(s) for {result.query!r} ({result.mode} search):"]
        for e in entries:
            lines += ["", f"{e.rank}. {e.citation}",
                      f"   [get_section(book_id={e.book_id}, chapter_index={e.chapter_index}, "
                      f"section_index={e.section_index})]", e.text]
        if not entries:
            lines.append("No match. Try other words, or list_books to see what is here.")
        return _result("\n".join(lines + ([result.note] if result.note else [])), result)

    @tool("Read a section")
    def get_section(
        ctx: Context, book_id: BookId,
        chapter_index: Annotated[int, Field(description="0-based, from search_book or the "
                                                        "outline.")],
        section_index: Annotated[int, Field(description="0-based within the chapter.")],
        part: Annotated[int | None, Field(
            description="Which part of a long section (1-based; default 1).")] = None,
    ) -> Annotated[CallToolResult, SectionPart]:
        """The full text of one section (and its summary, if any), with its citation.

        Take book_id, chapter_index and section_index from a search_book hit or from
        get_book_outline. Sections longer than ~20,000 characters come in parts: the result
        says total_parts; call again with part=2, 3, … to read the rest."""
        sec = _state(ctx).run(lambda lib: lib.section(book_id, chapter_index, section_index))
        parts = split_parts(sec.text)
        number = 1 if part is None else part
        if not 1 <= number <= len(parts):
            raise ToolError(f"section {chapter_index}.{section_index} of '{sec.slug}' has "
                            f"parts 1–{len(parts)}, not {number}")
        note = (f"Part {number} of {len(parts)}: call get_section(book_id={sec.book_id}, "
                f"chapter_index={chapter_index}, section_index={section_index}, "
                f"part={number + 1}) for the next part." if number < len(parts) else None)
        result = SectionPart.model_validate({
            **sec.to_dict(), "part": number, "total_parts": len(parts),
            "text": parts[number - 1], "note": note})
        where = _where(sec.page_start, sec.page_end, sec.page_label, sec.line_start, sec.line_end)
        head = " · ".join(x for x in (sec.book, sec.chapter, sec.section, where) if x)
        lines = [head + (f" (part {number} of {len(parts)})" if len(parts) > 1 else "")]
        if sec.summary:
            lines.append(f"Summary: {clip(sec.summary, 1_000)}")
        lines += ["", result.text]
        return _result("\n".join(lines + (["", note] if note else [])), result)

    @tool("Library status")
    def book_status(ctx: Context) -> Annotated[CallToolResult, LibraryStatus]:
        """Per book: chapters, sections (and how many are summarized), and chunks by stage
        (pending → contextualized → embedded). A book is searchable by meaning once its
        chunks are embedded; 'complete' is false while an ingest is unfinished. Also names
        the embedding model and retrieval mode in use."""
        state = _state(ctx)
        info = state.run(lambda lib: {**lib.status(), "savings": lib.savings()})
        books = [BookStatus.model_validate(b) for b in info["books"]]
        note = (f"Only the first {MAX_BOOKS} of {len(books)} books are shown."
                if len(books) > MAX_BOOKS else None)
        result = LibraryStatus.model_validate({
            **info, "retrieval_mode": state.library.config.retrieval_mode,
            "books": books[:MAX_BOOKS], "note": note})
        lines = [f"embeddings: {result.embedding_backend} · {result.embedding_model}; "
                 f"retrieval: {result.retrieval_mode}; chunks: {_counts(result.chunks)}"] + ([
            f"searches so far served {result.savings.get('chars_served', 0):,} characters from "
            f"books totalling {result.savings.get('chars_books', 0):,}"]
            if result.savings and result.savings.get("searches") else []) + [
            f"- {b.slug} (id={b.id}): {b.chapters} chapters, {b.sections} sections "
            f"({b.sections_summarized} summarized), {b.chunks} chunks ({_counts(b.status)}) — "
            + ("complete" if b.complete else "incomplete") for b in result.books]
        return _result("\n".join(lines + ([note] if note else [])), result)

    return server


def serve(config_path: str | os.PathLike[str] | None = None) -> None:
    """Run on stdio. The library opens before the protocol starts, so a missing config or
    database fails loudly (GrimoireError → the CLI's stderr message and exit code)."""
    library = open_library(config_path)
    log.info("serving %s read-only", library.config.database_path)
    create_server(lambda: library).run("stdio")
