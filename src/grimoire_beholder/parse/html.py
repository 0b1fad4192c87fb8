"""HTML → ParsedBook: a saved web page or a Zotero snapshot, its main text by its headings.

The page is parsed by the EPUB reader's markup loader (``parse/epub_html.load_markup``:
strict XML, else lxml's HTML parser; no entities, DTDs or network; a page nested deeper
than libxml2 allows is flattened first, so 100k nested tags cost one linear pass and
lose no text) and walked by the same block walker, so tables, lists and ``<pre>`` read
the same as in an EPUB.

The main text, not the navigation: the page's one ``<main>`` (or ``role="main"``), else
its one ``<article>``, else its ``<body>``; inside it, page chrome is dropped before the
walk — ``nav``, ``aside``, ``form``, a ``header``/``footer`` outside an article,
landmark roles other than main, and elements whose class or id names a menu, sidebar,
breadcrumb, cookie banner, share bar or comment thread. Headings ``h1``–``h6`` become
chapters and sections (``parse/headed.py``). Title: ``<title>``'s text when the page has
no lone ``h1`` (``citation_title`` or ``og:title`` meta first); author from
``citation_author`` / ``author`` meta.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from lxml import etree

from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.parse.document import ParsedBook
from grimoire_beholder.parse.epub_html import DocInfo, collapse, localname, walk
from grimoire_beholder.parse.headed import Piece, assemble
from grimoire_beholder.parse.source import read_source

MAX_HTML_BYTES = 64 * 1024 * 1024  # as one EPUB member (parse/epub_package.py)
_HEADING = re.compile(r"h([1-6])")
_CHROME_TAGS = frozenset(("nav", "aside", "form", "menu", "dialog", "button", "select"))
_PAGE_PARTS = frozenset(("header", "footer"))
_CHROME_ROLES = frozenset(("navigation", "banner", "contentinfo", "complementary", "search",
                           "menu", "menubar", "dialog", "alert"))
_CHROME_WORDS = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|navigation|menu|sidebar|breadcrumbs?|cookies?|consent|"
    r"share|sharing|social|comments?|advert|ads|banner|skip-link|toc-sidebar)"
    r"(?:$|[\s_-])", re.I)


def _meta(root: etree._Element, *names: str) -> str | None:
    """The first non-empty ``<meta name|property=…>`` content among ``names``, in order."""
    found: dict[str, str] = {}
    for el in root.iter():
        if localname(el) == "meta":
            key = (el.get("name") or el.get("property") or "").strip().lower()
            if key in names and key not in found and (el.get("content") or "").strip():
                found[key] = collapse(el.get("content", ""))
    return next((found[n] for n in names if n in found), None)


def _authors(root: etree._Element) -> str | None:
    names = [collapse(el.get("content", "")) for el in root.iter()
             if localname(el) == "meta" and (el.get("name") or "").lower() == "citation_author"]
    names = [n for n in names if n]
    return "; ".join(dict.fromkeys(names)) if names else _meta(root, "author", "dc.creator")


def _chrome(el: etree._Element, name: str) -> bool:
    role = (el.get("role") or "").strip().lower()
    if name in _CHROME_TAGS or role in _CHROME_ROLES:
        return True
    marks = f"{el.get('class') or ''} {el.get('id') or ''}"
    return bool(marks.strip()) and bool(_CHROME_WORDS.search(marks)) and name not in (
        "main", "article", "body", "h1", "h2", "h3", "h4", "h5", "h6")


def main_content(body: etree._Element) -> etree._Element:
    """The element holding the page's main text: its one main, else one article, else body."""
    mains = [el for el in body.iter() if localname(el) == "main"
             or (el.get("role") or "").strip().lower() == "main"]
    if len(mains) == 1:
        return mains[0]
    articles = [el for el in body.iter() if localname(el) == "article"]
    return articles[0] if len(articles) == 1 else body


def _drop_chrome(main: etree._Element) -> None:
    """Remove navigation and page furniture under ``main`` (their tails stay). One pass
    with an explicit stack: hostile nesting cannot overflow or go quadratic."""
    doomed = []
    stack = [(child, localname(main) in ("article", "main")) for child in main]
    while stack:
        el, in_article = stack.pop()
        name = localname(el)
        if not name:
            continue
        if _chrome(el, name) or (name in _PAGE_PARTS and not in_article):
            doomed.append(el)
            continue
        inside = in_article or name in ("article", "main")
        stack.extend((child, inside) for child in el)
    for el in doomed:
        _drop(el)


def _drop(el: etree._Element) -> None:
    """Remove ``el`` and what it holds, keeping the text that follows it (its tail)."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        before = el.getprevious()
        if before is not None:
            before.tail = (before.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _pieces(main: etree._Element) -> list[Piece]:
    """Headings and blocks in document order: each heading gets a fresh id that the walker
    reports as an anchor, and the block after that anchor is the heading's text."""
    token = uuid.uuid4().hex
    levels: dict[str, int] = {}
    for n, el in enumerate(main.iter()):
        match = _HEADING.fullmatch(localname(el))
        if match and collapse(el.xpath("string()")):
            el.set("id", f"h{n}-{token}")
            levels[f"h{n}-{token}"] = int(match.group(1))
    pieces: list[Piece] = []
    pending: int | None = None
    for kind, value in walk(main, set(levels)).events:
        if kind == "anchor":
            pending = levels[value]
        else:
            pieces.append(Piece(value, pending))
            pending = None
    return pieces


def parse_html(path: Path) -> ParsedBook:
    """Parse a saved HTML page into chapters and sections of its main text; InputFileError
    for a file that is not HTML or too large, NoTextError when no text is left."""
    path = Path(path)
    data = read_source(path)
    if len(data) > MAX_HTML_BYTES:
        raise InputFileError(f"{path}: refused, {len(data):,} bytes is more than an HTML "
                             f"page may be ({MAX_HTML_BYTES:,})")
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # DocInfo looks at the head only; a PDF or an image named .html has NULs further on
        raise InputFileError(f"{path}: not readable HTML (binary data or no markup)")
    try:
        info = DocInfo.from_bytes(data)
    except (etree.LxmlError, ValueError, RecursionError) as exc:
        raise InputFileError(f"{path}: not readable HTML ({exc})") from exc
    del data
    if info is None:
        raise InputFileError(f"{path}: not readable HTML (binary data or no markup)")
    main = main_content(info.body)
    _drop_chrome(main)
    pieces = _pieces(main)
    if not any(p.level is None for p in pieces):
        raise NoTextError(f"{path}: no text in the page's main content")
    title = _meta(info.root, "citation_title", "og:title", "dc.title")
    if title is None and sum(p.level == 1 for p in pieces) != 1:
        title = info.title or None
    return assemble(pieces, title=title, author=_authors(info.root), source_type="html",
                    source_path=str(path), fallback_title=info.title or path.stem)
