"""The reading views: the books, a book's outline, a section's text in parts, a PDF page.

Each route reads through :class:`templating.Reader` (the ``Library`` facade and its result
types, never the store) and renders one template; a library error (no such book, section,
page; a book with no pages) becomes a page with its one line and a 404/400 status. The
finding views (search, quotation check, printed index) are in ``finding.py``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.web.links import parse_span, whole_number
from grimoire_beholder.web.templating import Reader


def _int_param(request: Request, name: str, default: int) -> int:
    value = whole_number(request.query_params.get(name))
    return default if value is None else value


def books_view(reader: Reader, request: Request) -> Response:
    """``/``: every book with its author, type, size, roles and last health check."""

    def read(lib: Library) -> dict[str, Any]:
        books = lib.list_books()
        health = {b.id: b.health for b in lib.status().books}
        return {"books": books, "health": health}

    return reader.page(request, "books.html", title="Books", **reader.run(read))


def outline_view(reader: Reader, request: Request) -> Response:
    """``/book/SLUG``: the chapters and sections, each linked to its text (and page)."""
    slug = request.path_params["slug"]
    try:
        book, outline = reader.run(lambda lib: (lib.book(slug), lib.outline(slug)))
    except GrimoireError as exc:
        return reader.error(request, exc)
    return reader.page(request, "outline.html", title=book.name, book=book, outline=outline)


def _neighbours(outline: Any, chapter: int, section: int) -> tuple[Any, Any]:
    """The sections before and after (chapter, section) in reading order, or None."""
    order = [(ch.chapter_index, s) for ch in outline.chapters for s in ch.sections]
    at = next((i for i, (c, s) in enumerate(order)
               if c == chapter and s.section_index == section), None)
    if at is None:
        return None, None
    return (order[at - 1][1] if at > 0 else None,
            order[at + 1][1] if at + 1 < len(order) else None)


def _passage_split(text: str, span: tuple[int, int] | None) -> tuple[str, str, str] | None:
    """(before, passage, after) of the part's text when ``span`` lies inside it."""
    if span is None or span[1] > len(text):
        return None
    return text[:span[0]], text[span[0]:span[1]], text[span[1]:]


def section_view(reader: Reader, request: Request) -> Response:
    """``/book/SLUG/CH/SEC``: a section's citation, summary and one part of its text, the
    query's words (``q``) and a hit's passage (``at``) marked, links to the neighbours."""
    slug = request.path_params["slug"]
    chapter, section = request.path_params["chapter"], request.path_params["section"]
    part = _int_param(request, "part", 1)

    def read(lib: Library) -> tuple[Any, ...]:
        sec, text, total = lib.section_part(slug, chapter, section, part)
        return lib.book(slug), sec, text, total, lib.outline(slug)

    try:
        book, sec, text, total, outline = reader.run(read)
    except GrimoireError as exc:
        return reader.error(request, exc, slug)
    before, after = _neighbours(outline, chapter, section)
    q = request.query_params.get("q", "")
    return reader.page(
        request, "section.html", title=sec.breadcrumb or sec.book, book=book, sec=sec,
        text=text, part=part, total=total, before=before, after=after, q=q,
        split=_passage_split(text, parse_span(request.query_params.get("at"))))


def _page_asked(request: Request) -> tuple[str, str, bool]:
    """The book, the page as asked and whether it is a printed label: ``P`` of
    ``/book/SLUG/page/P`` is what the CLI's ``page`` takes — the physical number, or a
    printed label (``xii``, ``A-3``), a number read as printed with ``?printed=1`` — and
    only the core (``Library.page_number``) reads it."""
    printed = request.query_params.get("printed", "") not in ("", "0")
    return request.path_params["slug"], request.path_params["page"], printed


def page_view(reader: Reader, request: Request) -> Response:
    """``/book/SLUG/page/P``: a PDF page's image (with ``highlight`` marked) and links to
    the pages around it by physical number; the image itself is ``page_png``. A page or
    label the book does not have is the error page with the core's line and a 404."""
    slug, asked, printed = _page_asked(request)
    try:
        book, page = reader.run(lambda lib: (lib.book(slug),
                                             lib.page_number(slug, asked, printed=printed)))
    except GrimoireError as exc:
        return reader.error(request, exc, slug)
    return reader.page(request, "page.html", title=f"{book.name}, p. {page}", book=book,
                       page=page, label=book.page_labels.get(page),
                       highlight=request.query_params.get("highlight") or None)


def page_png(reader: Reader, request: Request) -> Response:
    """``/book/SLUG/page/P.png``: the page as a PNG, ``highlight`` marked (checks/pages.py);
    ``P`` as ``page_view`` reads it."""
    slug, asked, printed = _page_asked(request)
    highlight = request.query_params.get("highlight") or None
    try:
        image = reader.run(lambda lib: lib.page_image(slug, asked, highlight, printed=printed))
    except GrimoireError as exc:
        return reader.error(request, exc, slug)
    headers = {"x-highlight-found": str(image.highlight_found).lower()}
    return Response(image.png, media_type="image/png", headers=headers)
