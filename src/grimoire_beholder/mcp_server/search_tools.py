"""The MCP ``search_book`` tool: its result shapes (the output schema), its text, the tool."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from grimoire_beholder.mcp_server.serving import (
    ROLE,
    Located,
    bounded_result,
    one_line,
    quoted,
    served,
)
from grimoire_beholder.text import clip, plural

MAX_TOP_K = 20  # more hits than this would blow the response budget without helping a model
SEARCH_TEXT_BUDGET = 24_000  # all excerpts of one search together
HIT_TEXT_MAX = 2_000  # one excerpt, when few hits share the budget
HIT_CONTEXT_MAX = 400


class SearchHitEntry(Located):
    rank: int
    score: float
    link: str | None = Field(default=None, description="Opens the book in Calibre or Zotero "
                             "(calibre://…, zotero://…), for books from those libraries.")
    author: str | None
    source_type: str
    text: str = Field(description="The matching excerpt (clipped; get_section has it all).")
    context: str | None = Field(description="Where the excerpt sits in the book, if known.")
    role: str = Field(default="body", description=ROLE)


class SearchResult(BaseModel):
    query: str
    mode: str = Field(description="hybrid, vector or keyword.")
    top_k: int
    results: list[SearchHitEntry]
    confidence: float | None = Field(
        default=None, description="0–1: how likely the answer is among these results.")
    low_confidence: bool = Field(
        default=False, description="True when the library probably does not cover the "
                                   "question: say so rather than answer from these results.")
    note: str | None = None


def _hit_entries(hits: list[dict[str, Any]]) -> list[SearchHitEntry]:
    """The hits with their excerpts clipped to share ``SEARCH_TEXT_BUDGET``."""
    per_hit = min(HIT_TEXT_MAX, SEARCH_TEXT_BUDGET // max(len(hits), 1))
    return [SearchHitEntry.model_validate({
        **h, "text": clip(h.get("text") or "", per_hit),
        "context": clip(h["context"], HIT_CONTEXT_MAX) if h.get("context") else None,
    }) for h in hits]


def search_text(result: SearchResult) -> str:
    """The notes that qualify the hits (low confidence first), then each hit's citation,
    the get_section call that reads all of it, and the excerpt."""
    lines = [result.note] if result.note else []
    lines.append(f"{plural(len(result.results), 'result')} for {result.query!r} "
                 f"({result.mode} search):")
    for e in result.results:
        lines += ["", f"{e.rank}. {one_line(e.citation)}"
                  + (f" · {one_line(e.link)}" if e.link else ""),
                  f"   [get_section(book_id={e.book_id}, chapter_index={e.chapter_index}, "
                  f"section_index={e.section_index})]", quoted(e.text)]
    if not result.results:
        lines.append("No match. Try other words, or list_books to see what is here.")
    return "\n".join(lines)


# Characters of a chapter title given as until_chapter, as a question has (MAX_QUERY_CHARS): a
# title of 3.5 MB took 6 s to look for under the lock every tool call shares.
TITLE_MAX = 2_000


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
    until_chapter: Annotated[int | Annotated[str, Field(max_length=TITLE_MAX)] | None, Field(
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
    if clamped != limit and top_k is not None:  # not the config's top_k, which it never gave
        notes.append(f"top_k {limit} is out of range; used {clamped} (allowed 1–{MAX_TOP_K}).")
    if found.low_confidence and entries:
        notes.insert(0, "Low confidence: the library probably does not cover this question; "
                        "these are best guesses.")
    result = SearchResult(query=found.query, mode=found.mode, top_k=clamped, results=entries,
                          confidence=found.confidence, low_confidence=found.low_confidence,
                          note=" ".join(notes) or None)
    return bounded_result(search_text, result)
