"""The MCP tools for reading a book as a person would: its outline, a section's full text,
a quotation checked against it, a PDF page as an image.

Read-only like the search tools beside them in ``mcp_server.py`` (which lists them all);
bounded the same way (``mcp_server/serving.py``).
"""

from __future__ import annotations

import base64
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import Field

from grimoire_beholder.mcp_server import tool_text
from grimoire_beholder.mcp_server.serving import BookId, bounded_result, served
from grimoire_beholder.mcp_server.tool_models import (
    BookOutline,
    OutlineChapterEntry,
    OutlineSectionEntry,
    PageImageInfo,
    QuoteCheckResult,
    SectionPart,
)
from grimoire_beholder.views import Outline, OutlineChapter

OUTLINE_MAX_SECTIONS = 200  # sections listed per get_book_outline response


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
    return bounded_result(tool_text.outline_text, result)


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
    return bounded_result(tool_text.section_text, result)


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
    checked = served(ctx).run(lambda lib: lib.verify_quote(quote, book=book_id))
    result = QuoteCheckResult.model_validate(checked.to_dict())
    return bounded_result(tool_text.quote_text, result)


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
    image = served(ctx).run(lambda lib: lib.page_image(book_id, page, highlight))
    info = PageImageInfo.model_validate(image.to_dict())
    return CallToolResult(
        content=[TextContent(type="text", text=tool_text.page_text(info)),
                 ImageContent(type="image", data=base64.b64encode(image.png).decode("ascii"),
                              mime_type="image/png")],
        structured_content=info.model_dump(mode="json"))
