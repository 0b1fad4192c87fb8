"""The MCP tools for reading a book as a person would: ``get_book_outline`` (its map) and
``get_section`` (a section's full text, in parts) — their result shapes (the output
schemas), their text, the tools themselves."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from grimoire_beholder.mcp_server.serving import (
    LOCATION,
    ROLE,
    SUMMARY_CHARS,
    BookId,
    Located,
    bounded_result,
    served,
    with_note,
)
from grimoire_beholder.text import clip, plural
from grimoire_beholder.views import Outline, OutlineChapter

OUTLINE_MAX_SECTIONS = 200  # sections listed per get_book_outline response


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


class SectionPart(Located):
    breadcrumb: str
    approx_tokens: int
    summary: str | None
    part: int = Field(description="This part, 1-based.")
    total_parts: int
    text: str
    note: str | None = None


def outline_text(result: BookOutline) -> str:
    """Chapters and sections with the indices get_section takes and their locations."""
    lines = [f"{result.name} (book_id={result.book_id}, slug={result.slug})"]
    for ch in result.chapters:
        lines.append(f"[{ch.chapter_index}] {ch.title}"
                     + (f" · {ch.location}" if ch.location else "")
                     + f" — {plural(ch.section_count, 'section')}")
        for s in ch.sections or []:
            lines.append(f"    [{ch.chapter_index}.{s.section_index}] {s.title or '(lead-in)'}"
                         + (f" · {s.location}" if s.location else "")
                         + f" · ~{s.approx_tokens} tokens"
                         + (f" · {s.role}" if s.role != "body" else ""))
    return with_note(lines, result.note)


def section_text(result: SectionPart) -> str:
    """The citation (and which part this is), the summary, the text."""
    head = result.citation + (f" (part {result.part} of {result.total_parts})"
                              if result.total_parts > 1 else "")
    lines = [head]
    if result.summary:
        lines.append(f"Summary: {clip(result.summary, SUMMARY_CHARS)}")
    lines += ["", result.text]
    return "\n".join(lines + (["", result.note] if result.note else []))


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
    result = served(ctx).run(lambda lib: _bounded_outline(lib.outline(book_id), chapter_index))
    return bounded_result(outline_text, result)


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
    sec, text, total = served(ctx).run(
        lambda lib: lib.section_part(book_id, chapter_index, section_index, number))
    note = (f"Part {number} of {total}: call get_section(book_id={sec.book_id}, "
            f"chapter_index={chapter_index}, section_index={section_index}, "
            f"part={number + 1}) for the next part." if number < total else None)
    result = SectionPart.model_validate({
        **sec.to_dict(), "part": number, "total_parts": total, "text": text, "note": note})
    return bounded_result(section_text, result)
