"""The MCP tools that show the book's own words: ``verify_quote`` (a quotation checked
against the library) and ``get_page_image`` (a PDF page with the passage marked) — their
result shapes (the output schemas), their text, the tools themselves."""

from __future__ import annotations

import base64
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ImageContent
from pydantic import BaseModel, BeforeValidator, Field

from grimoire_beholder.mcp_server.serving import (
    BookId,
    Located,
    bounded_result,
    served,
    with_note,
)
from grimoire_beholder.text import MAX_QUOTE_CHARS


class QuotePassage(Located):
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


def quote_text(result: QuoteCheckResult) -> str:
    """The verdict, where (or the closest passage), the book's words, what differs."""
    verdict = {"exact": "Found", "close": "Found, with differences",
               "not_found": "NOT FOUND"}.get(result.verdict, result.verdict)
    lines = [f"{verdict} (similarity {result.similarity:.2f})."]
    if result.note:
        lines.append(result.note)
    p = result.passage
    if p is not None:
        lines += [("At: " if result.found else "Closest passage: ") + p.citation,
                  f"   [get_section(book_id={p.book_id}, chapter_index={p.chapter_index}, "
                  f"section_index={p.section_index}); characters {p.char_start}–{p.char_end}]",
                  f"The book: “{p.text}”"]
    lines += [f"- {d}" for d in result.differences]
    return "\n".join(lines)


def page_text(result: PageImageInfo) -> str:
    """What the image shows: which page, and whether the highlight was found."""
    label = f" (printed {result.page_label})" if result.page_label else ""
    line = f"Page {result.page}{label} of {result.page_count} of {result.slug}"
    if result.highlight_found:  # not found: the note says so
        line += "; the passage is highlighted"
    return with_note([line + "."], result.note)


def _stripped(value: object) -> object:
    """A quotation without the whitespace around it, as the library counts and checks it:
    the length bound applies after this, so a block quotation pasted with its line breaks
    around it is not refused for them."""
    return value.strip() if isinstance(value, str) else value


def verify_quote(
    ctx: Context,
    quote: Annotated[str, Field(
        max_length=MAX_QUOTE_CHARS,
        description=f"The quotation to check, as you have it (a block quotation at most: "
                    f"{MAX_QUOTE_CHARS} characters, whitespace around it not counted)."),
        BeforeValidator(_stripped)],  # last, so it runs first: the stripped length counts
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
    return bounded_result(quote_text, result)


# Characters of a highlight: more than a page holds. Searching the page for a longer one
# cost ~1 s a megabyte under the lock every tool call shares (4 MB, HTTP's largest body, held
# every other client ~4 s).
HIGHLIGHT_MAX = 10_000


def get_page_image(
    ctx: Context, book_id: BookId,
    page: Annotated[int | str, Field(
        description="Physical page number, 1-based (page_start of a search_book hit or of a "
                    "verify_quote passage), or a printed page label such as 'xii'.")],
    highlight: Annotated[str | None, Field(
        max_length=HIGHLIGHT_MAX,
        description="Text to highlight on the page: a hit's text or a quotation.")] = None,
) -> Annotated[CallToolResult, PageImageInfo]:
    """The page of a PDF book as a PNG image, with the cited passage highlighted, so the
    person sees exactly what is cited. PDF books only: EPUB, Markdown and text books have no
    page images (read them with get_section). The image is sized for a chat window."""
    image = served(ctx).run(lambda lib: lib.page_image(book_id, page, highlight))
    png = base64.b64encode(image.png).decode("ascii")
    return bounded_result(page_text, PageImageInfo.model_validate(image.to_dict()),
                          [ImageContent(type="image", data=png, mime_type="image/png")])
