"""Looking a term up in the books' printed indexes: ``Library.lookup``.

A printed index is the author's own map from terms to pages; this answers "where does the
book discuss X" the way a reader would, by its index, and says which sections those pages
are in so the caller can read them (``Library.section``). The term is matched after
``normalize_term`` (case, accents, punctuation and a plural "s" ignored): exact matches
first, otherwise every entry starting with it (so "matrices" also finds the sub-entries
"matrices, multiplication of"). An entry that only says "see X" brings X's entries along.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from grimoire_beholder.citation import Citation
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.store import index_entries
from grimoire_beholder.store.index_entries import IndexRow, PageSection
from grimoire_beholder.text import normalize_term

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store

MAX_ENTRIES = 50


@dataclass
class IndexLocator:
    """One place an entry points at: printed pages, physical pages, the sections there."""

    printed: str | None
    page_start: int | None
    page_end: int | None
    sections: list[dict[str, Any]] = field(default_factory=list)

    @property
    def location(self) -> str:
        """``p. 26 (printed 22)`` as citations write it; ``printed p. 22`` when the
        printed page could not be placed in the file (no labels, no confirmed offset)."""
        if self.page_start is None:
            return f"printed p. {self.printed}"
        return Citation("", "", "page", self.page_start, self.page_end, self.printed).location


@dataclass
class IndexTerm:
    """One entry of one book's printed index, with everywhere it points."""

    book_id: int
    slug: str
    book: str
    term: str
    parent: str | None
    see: list[str]
    locators: list[IndexLocator] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for locator, shown in zip(self.locators, data["locators"], strict=True):
            shown["location"] = locator.location
        return data


def _section_dict(section: PageSection) -> dict[str, Any]:
    return {"chapter_index": section.chapter_index, "section_index": section.section_index,
            "chapter": section.chapter, "section": section.title,
            "breadcrumb": section.breadcrumb, "page_start": section.page_start,
            "page_end": section.page_end, "role": section.role}


def _matching_rows(conn: Store, norm: str,
                   book_ids: Collection[int] | None) -> list[IndexRow]:
    rows = index_entries.exact(conn, [norm], book_ids)
    if not rows:
        rows = index_entries.starting_with(conn, norm, MAX_ENTRIES * 4, book_ids)
    referred = {normalize_term(target) for row in rows if row.printed is None
                for target in row.see.split(";") if target.strip()}
    known = {row.norm for row in rows}
    if referred - known:
        rows += index_entries.exact(conn, referred - known, book_ids)
    return rows


def lookup(conn: Store, term: str, book_ids: Collection[int] | None = None
           ) -> list[IndexTerm]:
    """The printed-index entries for ``term`` in the allowed books (None: all books)."""
    norm = normalize_term(term if isinstance(term, str) else "")
    if not norm:
        raise GrimoireError("lookup needs a term with at least one letter or digit")
    entries: dict[tuple[int, str, str | None], IndexTerm] = {}
    rows = _matching_rows(conn, norm, book_ids)
    for row in rows:
        key = (row.book_id, row.term, row.parent)
        if key not in entries:
            if len(entries) >= MAX_ENTRIES:
                continue
            entries[key] = IndexTerm(row.book_id, row.slug, row.book, row.term, row.parent,
                                     [s.strip() for s in row.see.split(";") if s.strip()])
        if row.printed is not None:
            entries[key].locators.append(IndexLocator(row.printed, row.page_start,
                                                      row.page_end))
    for book_id in {e.book_id for e in entries.values()}:
        spans = [(loc.page_start, loc.page_end) for e in entries.values()
                 if e.book_id == book_id for loc in e.locators
                 if loc.page_start is not None and loc.page_end is not None]
        found = index_entries.sections_on_pages(conn, book_id, spans)
        for entry in (e for e in entries.values() if e.book_id == book_id):
            for loc in entry.locators:
                if loc.page_start is not None and loc.page_end is not None:
                    loc.sections = [_section_dict(s)
                                    for s in found.get((loc.page_start, loc.page_end), [])]
    return list(entries.values())
