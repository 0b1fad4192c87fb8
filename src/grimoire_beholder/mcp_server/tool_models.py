"""Typed results of the MCP tools: pydantic models that become each tool's output schema.

Kept apart from ``mcp_server.py`` so the server module reads as the eight tools and their
wiring; these are plain data shapes with field descriptions a model can read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator


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


MAX_LABELS = 30


class BookList(BaseModel):
    count: int = Field(description="Books in the library.")
    books: list[BookEntry]
    note: str | None = None


LOCATION = Field(description="Where it is, written as every tool writes it: "
                            "'pp. 19–20 (printed 15–16)' (PDF), 'loc. 18–19' (EPUB: "
                            "positions, not printed pages), 'notes/a.md:12-20' (Markdown/text).")


ROLE = ("What part of the book: body, front_matter, contents, index, notes, bibliography or "
        "glossary (search_book's role filter).")


class OutlineSectionEntry(BaseModel):
    section_index: int
    title: str
    page_start: int | None
    line_start: int | None
    location: str = LOCATION
    approx_tokens: int = Field(description="Size of the section's full text.")
    role: str = Field(default="body", description=ROLE)


class OutlineChapterEntry(BaseModel):
    chapter_index: int
    title: str
    page_start: int | None
    location: str = LOCATION
    section_count: int
    sections: list[OutlineSectionEntry] | None = Field(
        description="Null when left out to bound the response: ask for this chapter_index.")


class BookOutline(BaseModel):
    book_id: int
    slug: str
    name: str
    chapters: list[OutlineChapterEntry]
    note: str | None = None


class _Located(BaseModel):
    """Where a passage is: the book, and the indices get_section takes."""

    book_id: int
    slug: str
    book: str
    chapter_index: int = Field(description="0-based; pass to get_section.")
    chapter: str
    section_index: int = Field(description="0-based within the chapter; pass to get_section.")
    section: str
    page_start: int | None
    page_end: int | None
    page_label: str | None = Field(description="The PDF's printed page label(s), if any.")
    line_start: int | None = Field(description="For Markdown/text books, 1-based.")
    line_end: int | None
    citation: str = Field(description="Book · chapter › section · location (Markdown/text: "
                                      "file:lines · chapter › section), for quoting as is.")
    location: str = LOCATION


class SearchHitEntry(_Located):
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


class SectionPart(_Located):
    breadcrumb: str
    approx_tokens: int
    summary: str | None
    part: int = Field(description="This part, 1-based.")
    total_parts: int
    text: str
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



class QuotePassage(_Located):
    text: str = Field(description="The passage as the book has it.")
    char_start: int = Field(description="Offset of the passage in the section's text.")
    char_end: int


class QuoteCheckResult(BaseModel):
    quote: str
    found: bool = Field(description="True when the quotation is in the library (typography "
                                    "aside; an ellipsis may stand for left-out words).")
    verdict: str = Field(description="exact (same words), close (found, with small "
                                     "differences) or not_found.")
    similarity: float = Field(description="0–1 agreement of the words with the book's text.")
    passage: QuotePassage | None = Field(description="Where it is — or, when not found, the "
                                                     "closest passage.")
    differences: list[str] = Field(description="How the quotation differs from the book.")
    note: str | None = None


class PageImageInfo(BaseModel):
    book_id: int
    slug: str
    page: int = Field(description="Physical page, 1-based.")
    page_count: int
    page_label: str | None = Field(description="The page's printed label, if any.")
    width: int
    height: int
    highlight_found: bool | None = Field(description="Whether the text to highlight was "
                                                     "found on this page (null: none asked).")
    note: str | None = None
