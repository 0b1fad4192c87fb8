"""The MCP ``lookup_index`` tool: a term in the books' printed back-of-book indexes.

A printed index is the author's own map from terms to pages. This tool hands it to the model
as data: each entry with its printed pages, the physical pages they resolve to (as every
citation writes them), and the sections there with the indices ``get_section`` takes.
Its result shapes (the output schema), its text and the tool live here, like every family's.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from grimoire_beholder.mcp_server.serving import bounded_result, served, with_note

MAX_ENTRIES = 20  # entries per response (a prefix like "data" can match hundreds)
MAX_LOCATORS = 12  # pages per entry
MAX_SECTIONS = 4  # sections per page span


class IndexSection(BaseModel):
    chapter_index: int
    section_index: int
    breadcrumb: str = Field(description="Chapter › section, for get_section.")
    role: str = Field(description="body, front_matter, contents, index, notes, "
                                  "bibliography or glossary.")


class IndexPlace(BaseModel):
    printed: str | None = Field(description="The page(s) as the index prints them.")
    page_start: int | None = Field(description="Physical page in the file (null when the "
                                               "printed page could not be placed).")
    page_end: int | None
    location: str = Field(description="'p. 26 (printed 22)', as citations write it.")
    sections: list[IndexSection] = Field(description="The sections on those pages.")


class IndexEntryResult(BaseModel):
    book_id: int
    slug: str
    book: str
    term: str
    parent: str | None = Field(description="The head term of a sub-entry.")
    see: list[str] = Field(description="'see' / 'see also' references.")
    places: list[IndexPlace]


class LookupResult(BaseModel):
    term: str
    entries: list[IndexEntryResult]
    note: str | None = None


def _entry(data: dict[str, Any]) -> IndexEntryResult:
    """One entry, its places and their sections capped (strings are bounded as results)."""
    places = [IndexPlace(
        printed=loc["printed"], page_start=loc["page_start"], page_end=loc["page_end"],
        location=loc["location"],
        sections=[IndexSection(chapter_index=s["chapter_index"],
                               section_index=s["section_index"],
                               breadcrumb=s["breadcrumb"], role=s["role"])
                  for s in loc["sections"][:MAX_SECTIONS]])
        for loc in data["locators"][:MAX_LOCATORS]]
    return IndexEntryResult(
        book_id=data["book_id"], slug=data["slug"], book=data["book"], term=data["term"],
        parent=data["parent"] or None, see=data["see"][:MAX_LOCATORS], places=places)


def lookup_text(result: LookupResult) -> str:
    """One line per entry, one per place with the get_section indices of its sections."""
    lines = [f"{len(result.entries)} index entr{'y' if len(result.entries) == 1 else 'ies'} "
             f"for {result.term!r} ([c.s]: chapter_index.section_index for get_section):"]
    for e in result.entries:
        head = f"{e.parent} › {e.term}" if e.parent else e.term
        lines.append(f"- {head} — {e.book} (book_id={e.book_id})"
                     + (f"; see {'; '.join(e.see)}" if e.see else ""))
        for place in e.places:
            where = "; ".join(f"{s.breadcrumb} [{s.chapter_index}.{s.section_index}]"
                              for s in place.sections)
            lines.append(f"    {place.location}" + (f": {where}" if where else ""))
    return with_note(lines, result.note)


def lookup_index(
    ctx: Context,
    term: Annotated[str, Field(description="The term, as a book's index might print it "
                                           "(case, accents and plurals do not matter).")],
    book_id: Annotated[int | str | None, Field(
        description="Only this book: numeric id or slug. Leave out for every book.")] = None,
) -> Annotated[CallToolResult, LookupResult]:
    """Look a term up in the books' own printed back-of-book indexes (PDFs and other books
    that have one): where the author says the term is discussed — printed and physical
    pages — and the sections on those pages, with chapter_index and section_index for
    get_section. Use it for names of functions, people, places or concepts when search_book
    returns passages that only mention them; an empty result means no index names the term
    (search_book may still find it)."""
    found = served(ctx).run(lambda lib: [e.to_dict() for e in lib.lookup(term, book_id)])
    note = (f"Only the first {MAX_ENTRIES} of {len(found)} entries are listed; a longer "
            "term narrows it." if len(found) > MAX_ENTRIES else
            None if found else "No printed index names this term; try search_book.")
    result = LookupResult(term=term, entries=[_entry(e) for e in found[:MAX_ENTRIES]],
                          note=note)
    return bounded_result(lookup_text, result)
