"""The templates, the one Library the page reads, and the page's error responses.

Jinja2 autoescapes every value (a book titled ``<script>`` shows as text); the only markup
not written by a template comes from ``marking.mark``, which escapes the text it marks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from grimoire_beholder.citation import extent
from grimoire_beholder.errors import (
    BookNotFoundError,
    GrimoireError,
    NoPageImagesError,
    NotFoundError,
)
from grimoire_beholder.text import plural
from grimoire_beholder.web import links
from grimoire_beholder.web.marking import excerpt, mark, query_words

if TYPE_CHECKING:
    from grimoire_beholder.library import Library

T = TypeVar("T")


def environment() -> Environment:
    """The templates of ``web/templates``, with the links and marking helpers."""
    env = Environment(loader=PackageLoader("grimoire_beholder.web", "templates"),
                      autoescape=select_autoescape(default=True), trim_blocks=True,
                      lstrip_blocks=True)
    env.globals.update(
        book_url=links.book_url, section_url=links.section_url, page_url=links.page_url,
        page_png_url=links.page_png_url, search_url=links.search_url,
        quote_url=links.quote_url, lookup_url=links.lookup_url, extent=extent, plural=plural,
        query_words=query_words)
    env.filters.update(mark=mark, excerpt=excerpt)
    return env


@dataclass
class Reader:
    """The library the page reads, opened read-only, and the templates it is shown with.

    Starlette runs the routes on worker threads; one lock keeps them to the one SQLite
    connection in turn, as the MCP server does."""

    library: Library
    env: Environment = field(default_factory=environment)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # what a command the page suggests needs to open this library (`` --library DIR``)
    library_flags: str = ""

    def __post_init__(self) -> None:
        self.env.globals["library_flags"] = self.library_flags

    def run(self, fn: Callable[[Library], T]) -> T:
        with self.lock:
            return fn(self.library)

    def page(self, request: Request, template: str, status: int = 200,
             **context: Any) -> HTMLResponse:
        """``template`` rendered with ``context`` (plus the request's path and query)."""
        html = self.env.get_template(template).render(
            path=request.url.path, params=request.query_params, **context)
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, exc: GrimoireError,
              slug: str | None = None) -> HTMLResponse:
        """A library error as a page with its one line: 404 for what does not exist. Asked
        about a part of book ``slug`` that the book lacks, the page links back to the book
        (not when the book itself is missing)."""
        missing = (BookNotFoundError, NotFoundError, NoPageImagesError)
        status = 404 if isinstance(exc, missing) else 400
        book_link = (links.book_url(slug)
                     if slug is not None and not isinstance(exc, BookNotFoundError) else None)
        return self.page(request, "error.html", status, message=str(exc), title="Not shown",
                         book_link=book_link)
