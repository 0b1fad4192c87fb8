"""The read-only MCP server: eight tools over the Library API, served on stdio.

Why it looks the way it does:

* Read-only for real: the Library is opened with SQLite's ``mode=ro`` and no tool here
  ingests, deletes or reindexes; every tool is annotated read-only, idempotent and
  closed-world. Write tools exist only when the user allows them (``mcp_server/upkeep_tools.py``).
* Warm: the Library is opened once in the lifespan and warmed up there (embedding model,
  vector matrix) without counting as a search, not on the first question. Sync tools run on
  worker threads, so calls are serialised on one lock around the shared connection.
* Model-facing: typed results (pydantic models → output schemas) plus a readable text block
  (``tool_text.py``); every response is bounded well under an assistant's ~25k-token
  tool-output cap, every string field included; every GrimoireError becomes a ToolError
  whose message says what exists.
* Strict arguments: an unknown argument is an error, not silently dropped, and nothing is
  coerced (``true`` is not book 1), so a call either means what it says or is refused.
* Thin: the tools (the search and status ones here, the reading ones in ``reading_tools.py``,
  the opt-in write ones in ``mcp_server/upkeep_tools.py``) are plain functions that take the Library
  from the lifespan context (``mcp_server/serving.py``), shape and bound its results, and never
  touch SQL, the store or a citation's wording.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Annotated, Any, cast

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server import lookup_tools, tool_text
from grimoire_beholder.mcp_server.allowed import Upkeep
from grimoire_beholder.mcp_server.reading_tools import (
    get_book_outline,
    get_page_image,
    get_section,
    verify_quote,
)
from grimoire_beholder.mcp_server.serving import READ_ONLY, ServerState, bounded_result, served
from grimoire_beholder.mcp_server.tool_models import (
    BookEntry,
    BookList,
    BookStatus,
    LibraryStatus,
    SearchHitEntry,
    SearchResult,
)
from grimoire_beholder.mcp_server.upkeep_tools import enabled_tools as upkeep_tools
from grimoire_beholder.text import clip
from grimoire_beholder.views import book_dict

log = logging.getLogger("grimoire_beholder.mcp")

SERVER_NAME = "grimoire-beholder"
MAX_TOP_K = 20  # more hits than this would blow the response budget without helping a model
SEARCH_TEXT_BUDGET = 24_000  # all excerpts of one search together
HIT_TEXT_MAX = 2_000  # one excerpt, when few hits share the budget
HIT_CONTEXT_MAX = 400
MAX_BOOKS = 150  # list_books / book_status entries per response


def _hit_entries(hits: list[dict[str, Any]]) -> list[SearchHitEntry]:
    """The hits with their excerpts clipped to share ``SEARCH_TEXT_BUDGET``."""
    per_hit = min(HIT_TEXT_MAX, SEARCH_TEXT_BUDGET // max(len(hits), 1))
    return [SearchHitEntry.model_validate({
        **h, "text": clip(h.get("text") or "", per_hit),
        "context": clip(h["context"], HIT_CONTEXT_MAX) if h.get("context") else None,
    }) for h in hits]


# ------------------------------------------------------------------------ server state
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


# ------------------------------------------------------------------------ the tools
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
    return bounded_result(tool_text.books_text, result)


def search_book(
    ctx: Context,
    question: Annotated[str, Field(description="What to look for, in plain words.")],
    book_id: Annotated[int | str | None, Field(
        description="Only this book: numeric id or slug. Leave out to search all.")] = None,
    top_k: Annotated[int | None, Field(
        description=f"How many excerpts (1–{MAX_TOP_K}; default from the config).")] = None,
    author: Annotated[str | None, Field(description="Only books by this author.")] = None,
    source_type: Annotated[str | None, Field(
        description="Only pdf, epub, markdown, text, html or docx books.")] = None,
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
    tag: Annotated[str | None, Field(description="Only books with this tag in their Calibre "
                   "or Zotero library (list_books shows tags).")] = None,
    collection: Annotated[str | None, Field(
        description="Only items of this Zotero collection.")] = None,
    series: Annotated[str | None, Field(description="Only books of this Calibre series.")]
    = None,
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
    state = served(ctx)
    limit = state.library.config.top_k if top_k is None else top_k
    clamped = min(max(limit, 1), MAX_TOP_K)
    found = state.run(lambda lib: lib.search(
        question.strip(), top_k=clamped, book=book_id, author=author,
        source_type=source_type, group=group, path_prefix=path_prefix,
        until_chapter=until_chapter, role=role, tag=tag, collection=collection,
        series=series))
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
    return bounded_result(tool_text.search_text, result)


def book_status(ctx: Context) -> Annotated[CallToolResult, LibraryStatus]:
    """Per book: chapters, sections (and how many are summarized), and chunks by stage
    (pending → contextualized → embedded). A book is searchable by meaning once its
    chunks are embedded; 'complete' is false while an ingest is unfinished. Also names
    the embedding model and retrieval mode in use, and each book's last health check
    (how much of it retrieval finds, pages without text, parse problems)."""
    state = served(ctx)
    info = state.run(lambda lib: {**lib.status(), "savings": lib.savings()})
    books = [BookStatus.model_validate(b) for b in info["books"]]
    note = (f"Only the first {MAX_BOOKS} of {len(books)} books are shown."
            if len(books) > MAX_BOOKS else None)
    result = LibraryStatus.model_validate({
        **info, "retrieval_mode": state.library.config.retrieval_mode,
        "books": books[:MAX_BOOKS], "note": note})
    return bounded_result(tool_text.status_text, result)


TOOLS: tuple[tuple[Callable[..., Any], str], ...] = (
    (list_books, "List books"),
    (get_book_outline, "Book outline"),
    (search_book, "Search the library"),
    (get_section, "Read a section"),
    (book_status, "Library status"),
    (verify_quote, "Check a quotation"),
    (get_page_image, "Show a PDF page"),
    lookup_tools.TOOL,
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

    ``upkeep`` adds the write tools the user allowed (``upkeep_tools.py``); without it the
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
                     version=version("grimoire-beholder-mcp"), log_level="WARNING",
                     tools=[_strict_tool(*spec) for spec in tools])


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
    from grimoire_beholder.mcp_server import stdio_wire

    server = create_server(lambda: library, upkeep)
    # The SDK's own stdio reader drops lines it cannot validate (stdio_wire answers them);
    # the low-level server is reached as the SDK's examples do, to run it on that transport.
    anyio.run(stdio_wire.serve, server._lowlevel_server)
