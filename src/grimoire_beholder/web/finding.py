"""The finding views: search with filters, the quotation check, the printed-index look-up.

A hit (and a found quotation) links to its section at the part that holds it, with the
passage marked (``at``) and the query's words marked (``q``), and, for a PDF, to its page
with the passage highlighted. The citations shown are the core's, as ``query`` prints them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.text import split_parts
from grimoire_beholder.web.links import whole_number
from grimoire_beholder.web.templating import Reader

FILTERS = ("book", "author", "type", "role", "tag", "collection", "series")
MAX_HITS = 50
_PROBE_CHARS = 120  # of a passage's start, enough to find it in its section's text


@dataclass(frozen=True)
class Place:
    """Where a passage sits in its section as the page shows it: the part, and the
    characters of that part (None when the passage could not be found verbatim)."""

    part: int
    at: tuple[int, int] | None


def place_in(section_text: str, passage: str) -> Place:
    """The part of ``section_text`` holding ``passage``, and where in that part."""
    parts = split_parts(section_text)
    probe = passage.strip()[:_PROBE_CHARS]
    for number, text in enumerate(parts, start=1):
        start = text.find(probe) if probe else -1
        if start >= 0:
            return Place(number, (start, min(len(text), start + len(passage.strip()))))
    return Place(1, None)


class Placer:
    """:func:`place_in` for many passages, reading each section once (under the lock)."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        self.texts: dict[tuple[int, int, int], str] = {}

    def place(self, book_id: int, chapter: int, section: int, passage: str) -> Place:
        key = (book_id, chapter, section)
        if key not in self.texts:
            self.texts[key] = self.lib.section(book_id, chapter, section).text
        return place_in(self.texts[key], passage)


def _filters(request: Request) -> dict[str, str]:
    return {k: request.query_params.get(k, "").strip() for k in FILTERS}


def _choices(lib: Library) -> dict[str, Any]:
    """What the filter menus offer: the books, authors, types and roles of this library,
    and the labels its Calibre or Zotero books carry (tags, collections, series)."""
    books = lib.list_books()
    roles = sorted({r for b in books for r in b.roles}, key=lambda r: (r != "body", r))
    return {"books": books, "authors": sorted({b.author for b in books if b.author}),
            "roles": roles, "types": sorted({b.source_type for b in books}),
            "tag": sorted({t for b in books for t in b.tags}),
            "collection": sorted({c for b in books for c in b.collections}),
            "series": sorted({b.series for b in books if b.series})}


def search_view(reader: Reader, request: Request) -> Response:
    """``/search?q=…``: hits with citation, marked excerpt, role and links; the confidence
    note when the library probably does not cover the question; the filters' menus."""
    q = request.query_params.get("q", "").strip()
    filters = _filters(request)
    k = whole_number(request.query_params.get("k"))
    top_k = min(k, MAX_HITS) if k else None  # else config's top_k

    started = time.perf_counter()

    def read(lib: Library) -> dict[str, Any]:
        out: dict[str, Any] = {"choices": _choices(lib), "results": None, "places": [],
                               "ms": 0.0}
        if q:
            begun = time.perf_counter()
            results = lib.search(q, top_k=top_k, book=filters["book"] or None,
                                 author=filters["author"] or None,
                                 source_type=filters["type"] or None,
                                 role=filters["role"] or None, tag=filters["tag"] or None,
                                 collection=filters["collection"] or None,
                                 series=filters["series"] or None)
            out["ms"] = (time.perf_counter() - begun) * 1000
            placer = Placer(lib)
            out["places"] = [placer.place(h.book_id, h.chapter_index, h.section_index, h.text)
                             for h in results.hits]
            out["results"] = results
        return out

    try:
        found = reader.run(read)
    except GrimoireError as exc:
        return reader.error(request, exc)
    title = f"Search: {q}" if q else "Search"
    response = reader.page(request, "search.html", title=title, q=q, filters=filters,
                           k=top_k, **found)
    total = (time.perf_counter() - started) * 1000  # the search, then what the page adds
    response.headers["server-timing"] = f"search;dur={found['ms']:.1f}, page;dur={total:.1f}"
    return response


def quote_view(reader: Reader, request: Request) -> Response:
    """``/quote?text=…&book=``: is the quotation in the library, where, how it differs."""
    text = request.query_params.get("text", "").strip()
    book = request.query_params.get("book", "").strip()

    def read(lib: Library) -> dict[str, Any]:
        out: dict[str, Any] = {"books": lib.list_books(), "check": None, "place": None}
        if text:
            check = lib.verify_quote(text, book or None)
            out["check"] = check
            if check.passage is not None:
                p = check.passage
                out["place"] = Placer(lib).place(p.book_id, p.chapter_index, p.section_index,
                                                 p.text)
        return out

    try:
        found = reader.run(read)
    except GrimoireError as exc:
        return reader.error(request, exc)
    return reader.page(request, "quote.html", title="Check a quotation", text=text, book=book,
                       **found)


def lookup_view(reader: Reader, request: Request) -> Response:
    """``/lookup?term=…&book=``: the term's entries in the books' printed indexes, with
    their pages and the sections on them."""
    term = request.query_params.get("term", "").strip()
    book = request.query_params.get("book", "").strip()

    def read(lib: Library) -> dict[str, Any]:
        books = lib.list_books()
        entries = lib.lookup(term, book or None) if term else None
        return {"books": books, "entries": entries,
                "types": {b.id: b.source_type for b in books}}

    try:
        found = reader.run(read)
    except GrimoireError as exc:
        return reader.error(request, exc)
    return reader.page(request, "lookup.html", title="Printed index", term=term, book=book,
                       **found)
