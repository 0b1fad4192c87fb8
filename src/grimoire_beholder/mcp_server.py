"""The read-only MCP server: eight tools over the Library API, served on stdio.

Why it looks the way it does:

* Read-only for real: the Library is opened with SQLite's ``mode=ro`` and no tool here
  ingests, deletes or reindexes; every tool is annotated read-only, idempotent and
  closed-world. Write tools exist only when the user allows them (``mcp_upkeep.py``).
* Warm: the Library is opened once in the lifespan and warmed up there (embedding model,
  vector matrix) without counting as a search, not on the first question. Sync tools run on
  worker threads, so calls are serialised on one lock around the shared connection.
* Model-facing: typed results (pydantic models → output schemas) plus a readable text block
  (``mcp_render.py``); every response is bounded well under an assistant's ~25k-token
  tool-output cap, every string field included; every GrimoireError becomes a ToolError
  whose message says what exists.
* Strict arguments: an unknown argument is an error, not silently dropped, and nothing is
  coerced (``true`` is not book 1), so a call either means what it says or is refused.
* Thin: the tools are plain functions that take the Library from the lifespan context,
  shape and bound its results, and never touch SQL, the store or a citation's wording.
"""

from __future__ import annotations

import base64
import inspect
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar, cast

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from . import mcp_lookup, mcp_render
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
    PageImageInfo,
    QuoteCheckResult,
    SearchHitEntry,
    SearchResult,
    SectionPart,
)
from .mcp_render import tool_result
from .mcp_upkeep import Upkeep
from .mcp_upkeep import enabled_tools as upkeep_tools
from .text import clip
from .views import Outline, OutlineChapter, book_dict

log = logging.getLogger("grimoire_beholder.mcp")
T = TypeVar("T")

SERVER_NAME = "grimoire-beholder"
MAX_TOP_K = 20  # more hits than this would blow the response budget without helping a model
SEARCH_TEXT_BUDGET = 24_000  # all excerpts of one search together
HIT_TEXT_MAX = 2_000  # one excerpt, when few hits share the budget
HIT_CONTEXT_MAX = 400
MAX_BOOKS = 150  # list_books / book_status entries per response
OUTLINE_MAX_SECTIONS = 200  # sections listed per get_book_outline response
FIELD_MAX = 300  # any other string (titles, names, the echoed question): a 1 MB heading
# or question must not make a 1 MB response

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

BookId = Annotated[int | str, Field(
    description="The book: its numeric id (e.g. 3) or its slug string (e.g. \"art-of-war\"), "
                "as returned by list_books or search_book. A number is always an id.")]


# ------------------------------------------------------------------------ bounding results
def _chapter_entry(ch: OutlineChapter, with_sections: bool) -> OutlineChapterEntry:
    return OutlineChapterEntry(
        chapter_index=ch.chapter_index, title=ch.title, page_start=ch.page_start,
        location=ch.citation.location, section_count=len(ch.sections),
        sections=[OutlineSectionEntry(
            section_index=s.section_index, title=s.title, page_start=s.page_start,
            line_start=s.line_start, location=s.citation.location,
            approx_tokens=s.approx_tokens, role=s.role)
            for s in ch.sections[:OUTLINE_MAX_SECTIONS]]
        if with_sections else None)


def _bounded_outline(outline: Outline, chapter_index: int | None) -> BookOutline:
    """Whole chapters while ``OUTLINE_MAX_SECTIONS`` lasts; one asked-for chapter, capped."""
    chapters = outline.chapters
    if chapter_index is not None:
        if not 0 <= chapter_index < len(chapters):
            raise ToolError(f"book '{outline.slug}' has chapters "
                            f"0–{len(chapters) - 1}, not {chapter_index}")
        chapters = [chapters[chapter_index]]
    budget, entries = OUTLINE_MAX_SECTIONS, []
    for ch in chapters:
        fits = len(ch.sections) <= budget or chapter_index is not None
        budget = budget - len(ch.sections) if fits else 0
        entries.append(_chapter_entry(ch, fits))
    omitted = [c.chapter_index for c in entries if c.sections is None]
    note = (f"Sections of chapters {omitted[0]}–{omitted[-1]} are left out to keep this "
            "short; call get_book_outline with chapter_index for them." if omitted else
            f"Only the first {OUTLINE_MAX_SECTIONS} sections are listed; get_section "
            f"accepts 0–{len(chapters[0].sections) - 1}." if budget < 0 else None)
    return BookOutline(book_id=outline.book_id, slug=outline.slug, name=outline.name,
                       chapters=entries, note=note)


def _hit_entries(hits: list[dict[str, Any]]) -> list[SearchHitEntry]:
    """The hits with their excerpts clipped to share ``SEARCH_TEXT_BUDGET``."""
    per_hit = min(HIT_TEXT_MAX, SEARCH_TEXT_BUDGET // max(len(hits), 1))
    return [SearchHitEntry.model_validate({
        **h, "text": clip(h.get("text") or "", per_hit),
        "context": clip(h["context"], HIT_CONTEXT_MAX) if h.get("context") else None,
    }) for h in hits]


M = TypeVar("M", bound=BaseModel)
# Fields bounded where they are made (None), or with a budget of their own.
_FIELD_LIMITS: dict[str, int | None] = {"text": None, "context": None, "note": None,
                                        "summary": mcp_render.SUMMARY_CHARS}


def _clip_fields(value: Any, key: str = "") -> Any:
    """Every string in a dumped result clipped to its limit (FIELD_MAX unless listed)."""
    if isinstance(value, str):
        limit = _FIELD_LIMITS.get(key, FIELD_MAX)
        return value if limit is None else clip(value, limit)
    if isinstance(value, list):
        return [_clip_fields(v, key) for v in value]
    if isinstance(value, dict):
        return {k: _clip_fields(v, k) for k, v in value.items()}
    return value


def _result(render: Callable[[M], str], model: M) -> CallToolResult:
    """The tool result (text and structure) of ``model`` with every string field bounded."""
    bounded = type(model).model_validate(_clip_fields(model.model_dump(mode="json")))
    return tool_result(render(bounded), bounded)


# ------------------------------------------------------------------------ server state
@dataclass
class ServerState:
    """What the lifespan opens once and every tool call shares."""

    library: Library
    upkeep: Upkeep | None = None  # the write tools the user allowed (mcp_upkeep.py)
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
        state.library.warm_up()
    except GrimoireError as exc:
        log.warning("search is not ready yet: %s", exc)


def open_library(config_path: str | os.PathLike[str] | None = None,
                 library: str | os.PathLike[str] | None = None) -> Library:
    """The Library as the server sees it: read-only (SQLite ``mode=ro``), never created."""
    return Library.open(config_path, library=library, read_only=True)


def _state(ctx: Context) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state


# ------------------------------------------------------------------------ the tools
def list_books(ctx: Context) -> Annotated[CallToolResult, BookList]:
    """List every book in the library: id, slug, name, author, source type (pdf, epub,
    markdown, text), page count (PDF) or line count (Markdown/text), chapters, sections,
    and the group (top-level folder) of books ingested from a folder.

    Use it to find a book_id (the numeric id or the slug both work) for get_book_outline,
    get_section, or to restrict search_book to one book or group."""
    books = _state(ctx).run(lambda lib: lib.list_books())
    entries = [BookEntry.model_validate(book_dict(b)) for b in books]
    note = ("The library is empty: books are added with `grimoire-beholder ingest FILE`."
            if not entries else f"Only the first {MAX_BOOKS} of {len(entries)} books are "
            "listed; search_book searches all of them." if len(entries) > MAX_BOOKS else None)
    result = BookList(count=len(entries), books=entries[:MAX_BOOKS], note=note)
    return _result(mcp_render.books_text, result)


def get_book_outline(ctx: Context, book_id: BookId, chapter_index: Annotated[
        int | None, Field(description="Only this chapter (0-based). Leave out for the "
                                      "whole book.")] = None,
) -> Annotated[CallToolResult, BookOutline]:
    """The map of one book: chapters and their sections with 0-based chapter_index and
    section_index, titles, location (pages, EPUB positions or file lines) and approximate
    size in tokens. No text.

    Use it to browse a book, then read a section with get_section(book_id, chapter_index,
    section_index). Very long outlines list sections for the first chapters only; pass
    chapter_index to get the sections of one chapter."""
    result = _state(ctx).run(lambda lib: _bounded_outline(lib.outline(book_id), chapter_index))
    return _result(mcp_render.outline_text, result)


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
    until_chapter: Annotated[int | str | None, Field(
        description="Reading position: only up to and including this chapter of book_id "
                    "(its chapter_index from get_book_outline, or its title), so nothing "
                    "past where the reader is gets quoted. Needs book_id.")] = None,
    role: Annotated[str | None, Field(description="Only sections of this role: body, front_"
                    "matter, contents, index, notes, bibliography or glossary.")] = None,
) -> Annotated[CallToolResult, SearchResult]:
    """Search the books by meaning and keywords (hybrid retrieval) and return the best
    matching excerpts, each with a citation (book · chapter › section · pages, or
    file:lines for Markdown/text) and the book_id, chapter_index and section_index to read
    the whole section with get_section. Use this first to answer a question from the
    library; quote the citation as given. Excerpts are clipped: fetch the section for the
    full text. For someone partway through a book, pass until_chapter: no spoilers."""
    if not question or not question.strip():
        raise ToolError("question is empty: pass what to look for, e.g. "
                        "search_book(question=\"how do I compost kitchen scraps\")")
    state = _state(ctx)
    limit = state.library.config.top_k if top_k is None else top_k
    clamped = min(max(limit, 1), MAX_TOP_K)
    found = state.run(lambda lib: lib.search(
        question.strip(), top_k=clamped, book=book_id, author=author,
        source_type=source_type, group=group, path_prefix=path_prefix,
        until_chapter=until_chapter, role=role))
    entries = _hit_entries([hit.to_dict() for hit in found.hits])
    notes = [found.note] if found.note else []
    if clamped != limit:
        notes.append(f"top_k {limit} is out of range; used {clamped} (allowed 1–{MAX_TOP_K}).")
    if found.low_confidence and entries:
        notes.insert(0, "Low confidence: the library probably does not cover this question; "
                        "these are best guesses.")
    result = SearchResult(query=found.query, mode=found.mode, top_k=clamped, results=entries,
                          confidence=found.confidence, low_confidence=found.low_confidence,
                          note=" ".join(notes) or None)
    return _result(mcp_render.search_text, result)


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
    number = 1 if part is None else part
    sec, text, total = _state(ctx).run(
        lambda lib: lib.section_part(book_id, chapter_index, section_index, number))
    note = (f"Part {number} of {total}: call get_section(book_id={sec.book_id}, "
            f"chapter_index={chapter_index}, section_index={section_index}, "
            f"part={number + 1}) for the next part." if number < total else None)
    result = SectionPart.model_validate({
        **sec.to_dict(), "part": number, "total_parts": total, "text": text, "note": note})
    return _result(mcp_render.section_text, result)


def book_status(ctx: Context) -> Annotated[CallToolResult, LibraryStatus]:
    """Per book: chapters, sections (and how many are summarized), and chunks by stage
    (pending → contextualized → embedded). A book is searchable by meaning once its
    chunks are embedded; 'complete' is false while an ingest is unfinished. Also names
    the embedding model and retrieval mode in use, and each book's last health check
    (how much of it retrieval finds, pages without text, parse problems)."""
    state = _state(ctx)
    info = state.run(lambda lib: {**lib.status(), "savings": lib.savings()})
    books = [BookStatus.model_validate(b) for b in info["books"]]
    note = (f"Only the first {MAX_BOOKS} of {len(books)} books are shown."
            if len(books) > MAX_BOOKS else None)
    result = LibraryStatus.model_validate({
        **info, "retrieval_mode": state.library.config.retrieval_mode,
        "books": books[:MAX_BOOKS], "note": note})
    return _result(mcp_render.status_text, result)


def verify_quote(
    ctx: Context,
    quote: Annotated[str, Field(description="The quotation to check, as you have it.")],
    book_id: Annotated[int | str | None, Field(
        description="Only this book: numeric id or slug. Leave out to check all.")] = None,
) -> Annotated[CallToolResult, QuoteCheckResult]:
    """Check a quotation before using it: is it really in the library, where exactly
    (citation, chapter_index/section_index for get_section, character offsets), and what
    do the book's own words say? Re-typed quotations are found — line breaks, hyphenation,
    curly or straight quotes and dashes, ligatures, case and an ellipsis for left-out words
    do not matter; other differences are listed. When it is not there the result says so
    plainly and gives the closest passage: do not present such a quotation as the book's."""
    checked = _state(ctx).run(lambda lib: lib.verify_quote(quote, book=book_id))
    result = QuoteCheckResult.model_validate(checked.to_dict())
    return _result(mcp_render.quote_text, result)


def get_page_image(
    ctx: Context, book_id: BookId,
    page: Annotated[int | str, Field(
        description="Physical page number, 1-based (page_start of a search_book hit or of a "
                    "verify_quote passage), or a printed page label such as 'xii'.")],
    highlight: Annotated[str | None, Field(
        description="Text to highlight on the page: a hit's text or a quotation.")] = None,
) -> Annotated[CallToolResult, PageImageInfo]:
    """The page of a PDF book as a PNG image, with the cited passage highlighted, so the
    person sees exactly what is cited. PDF books only: EPUB, Markdown and text books have no
    page images (read them with get_section). The image is sized for a chat window."""
    image = _state(ctx).run(lambda lib: lib.page_image(book_id, page, highlight))
    info = PageImageInfo.model_validate(image.to_dict())
    return CallToolResult(
        content=[TextContent(type="text", text=mcp_render.page_text(info)),
                 ImageContent(type="image", data=base64.b64encode(image.png).decode("ascii"),
                              mime_type="image/png")],
        structured_content=info.model_dump(mode="json"))


TOOLS: tuple[tuple[Callable[..., Any], str], ...] = (
    (list_books, "List books"),
    (get_book_outline, "Book outline"),
    (search_book, "Search the library"),
    (get_section, "Read a section"),
    (book_status, "Library status"),
    (verify_quote, "Check a quotation"),
    (get_page_image, "Show a PDF page"),
    mcp_lookup.TOOL,
)

# ------------------------------------------------------------------------ the server
INSTRUCTIONS = """\
A local, read-only library of books and documents. Typical flow: search_book(question) →
read the cited excerpts → get_section(book_id, chapter_index, section_index) for the full
section. To browse instead: list_books() → get_book_outline(book_id) → get_section(...).
Quote the citation each result gives (book · chapter › section · pages, or file:lines for
Markdown/text) as it is: EPUB books have positions ('loc.'), not printed pages.
Before quoting a passage word for word, verify_quote(quote) checks it against the book;
get_page_image(book_id, page, highlight) shows a PDF page with the passage marked.
Nothing here can add or change books: that is done from the grimoire-beholder CLI."""
READ_ONLY_LINE = INSTRUCTIONS.splitlines()[-1]  # replaced when upkeep tools are on


def create_server(open_lib: Callable[[], Library],
                  upkeep: Upkeep | None = None) -> MCPServer[Any]:
    """The MCP server; ``open_lib`` is called once per run, in the lifespan (tests inject).

    ``upkeep`` adds the write tools the user allowed (``mcp_upkeep.py``); without it the
    server has only the read-only tools.
    """

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[ServerState]:
        state = ServerState(open_lib(), upkeep)
        try:
            await anyio.to_thread.run_sync(_warm, state)
            yield state
        finally:
            state.library.close()

    instructions = INSTRUCTIONS
    if upkeep is not None and upkeep.any:
        instructions = INSTRUCTIONS.replace(READ_ONLY_LINE, upkeep.instructions())
    tools = [(fn, title, READ_ONLY) for fn, title in TOOLS]
    tools += upkeep_tools(upkeep) if upkeep is not None else []
    return MCPServer(SERVER_NAME, instructions=instructions, lifespan=lifespan,
                     log_level="WARNING", tools=[_strict_tool(*spec) for spec in tools])


def _strict_tool(fn: Callable[..., Any], title: str, hints: ToolAnnotations) -> Tool:
    """The tool, its arguments validated strictly: the SDK's argument model ignores unknown
    arguments (a misspelt ``book_id`` would search every book) and coerces (``true`` → 1,
    ``"3"`` → 3); this subclass forbids both, and its schema says so. The docstring,
    dedented, is what the model reads."""
    tool = Tool.from_function(fn, title=title, annotations=hints,
                              description=inspect.cleandoc(fn.__doc__ or ""))
    loose = tool.fn_metadata.arg_model
    strict = cast(type[BaseModel], type(loose.__name__, (loose,), {
        "__module__": __name__, "model_config": ConfigDict(extra="forbid", strict=True)}))
    return tool.model_copy(update={
        "fn_metadata": tool.fn_metadata.model_copy(update={"arg_model": strict}),
        "parameters": strict.model_json_schema(by_alias=True)})


def serve(config_path: str | os.PathLike[str] | None = None,
          upkeep: Upkeep | None = None,
          library_dir: str | os.PathLike[str] | None = None) -> None:
    """Run on stdio. The library opens before the protocol starts, so a missing config or
    database fails loudly (GrimoireError → the CLI's stderr message and exit code)."""
    library = open_library(config_path, library_dir)
    log.info("serving %s (searches read-only%s)", library.config.database_path,
             ", upkeep tools on" if upkeep is not None and upkeep.any else "")
    create_server(lambda: library, upkeep).run("stdio")
