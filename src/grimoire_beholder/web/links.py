"""The page's URLs, built in one place: every view has one a person can bookmark.

``/`` books · ``/book/SLUG`` outline · ``/book/SLUG/CH/SEC?part=N&q=…&at=A-B`` a section's
text (part N, the query's words marked, characters A–B of the part marked as the passage) ·
``/book/SLUG/page/N?highlight=…`` a PDF page (and ``…/page/N.png`` its image; the page links
the site makes use the physical N, a hand-typed one may be a printed label, ``/page/xii``) ·
``/search?q=…&book=&author=&type=&role=`` · ``/quote?text=…&book=`` · ``/lookup?term=…&book=``.
Empty parameters are left out, so the same view always has the same URL.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

# A highlight travels in the page's URL: its first characters find the passage on the page
# (checks/pages.py aligns what it is given), so longer ones only make the URL longer.
HIGHLIGHT_CHARS = 600
# Past this many digits a number in a URL names nothing there is (ids end at 2^63 - 1) and is
# read as BEYOND: int() refuses more than 4,300 digits (ValueError, a 500 before).
_MOST_DIGITS = 30
BEYOND = 10 ** _MOST_DIGITS


def whole_number(value: str | None) -> int | None:
    """A hand-editable number of a URL: plain ASCII digits as an int (one of more than
    :data:`_MOST_DIGITS` significant digits as :data:`BEYOND`, larger than any page, part,
    chapter or hit count); None for anything else (``'²'`` passes ``str.isdigit``)."""
    if not value or not (value.isascii() and value.isdigit()):
        return None
    digits = value.lstrip("0")
    return BEYOND if len(digits) > _MOST_DIGITS else int(digits or "0")


def _query(**params: object) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "", [])}
    return "?" + urlencode(kept, doseq=True) if kept else ""


def book_url(slug: str) -> str:
    return f"/book/{quote(slug, safe='')}"


def section_url(slug: str, chapter: int, section: int, *, part: int | None = None,
                q: str | None = None, at: tuple[int, int] | None = None) -> str:
    """A section; ``at`` (characters of the part) marks a passage and the URL jumps to it."""
    span = f"{at[0]}-{at[1]}" if at else None
    return (f"{book_url(slug)}/{chapter}/{section}"
            + _query(part=part if part and part > 1 else None, q=q, at=span)
            + ("#passage" if at else ""))


def clip_highlight(text: str | None) -> str | None:
    """The start of a passage, cut on a word boundary, as a page link highlights it."""
    if not text or len(text) <= HIGHLIGHT_CHARS:
        return text or None
    cut = text.rfind(" ", 0, HIGHLIGHT_CHARS)
    return text[:cut if cut > HIGHLIGHT_CHARS // 2 else HIGHLIGHT_CHARS]


def page_url(slug: str, page: int, highlight: str | None = None) -> str:
    return f"{book_url(slug)}/page/{page}" + _query(highlight=clip_highlight(highlight))


def page_png_url(slug: str, page: int, highlight: str | None = None) -> str:
    return f"{book_url(slug)}/page/{page}.png" + _query(highlight=clip_highlight(highlight))


def search_url(q: str, **filters: str | None) -> str:
    return "/search" + _query(q=q, **filters)


def quote_url(text: str | None = None, book: str | None = None) -> str:
    return "/quote" + _query(text=text, book=book)


def lookup_url(term: str | None = None, book: str | None = None) -> str:
    return "/lookup" + _query(term=term, book=book)


def parse_span(value: str | None) -> tuple[int, int] | None:
    """``"120-480"`` as (120, 480); None for anything else (a hand-edited URL just shows
    the section without a marked passage)."""
    if not value:
        return None
    start, sep, end = value.partition("-")
    first, last = whole_number(start), whole_number(end)
    if not sep or first is None or last is None or last <= first:
        return None
    return first, last
