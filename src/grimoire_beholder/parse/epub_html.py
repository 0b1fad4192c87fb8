"""XHTML content documents → paragraph-like blocks, split exactly at TOC anchors.

An EPUB content document is walked once in document order. Text accumulates into the
current block; entering or leaving a block-level element (p, li, h1-h6, pre, tr, div, ...)
ends it, so nested markup (a list inside a list item, loose text in a div around
paragraphs) never loses or doubles text. When an element whose id is a TOC target starts,
the current block ends and an anchor event is emitted, so a TOC sub-entry pointing into the
middle of a document starts its section exactly there, even mid-paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree, html


def _tags(words: str) -> frozenset[str]:
    return frozenset(words.split())


BLOCK_TAGS = _tags(
    """p div li ul ol dl dt dd h1 h2 h3 h4 h5 h6 pre blockquote table thead tbody tfoot tr
    caption section article aside header footer nav figure figcaption address hr main body
    hgroup details summary form fieldset legend center"""
)
HEADINGS = _tags("h1 h2 h3 h4 h5 h6")
SKIP_TAGS = _tags("script style head title noscript svg rt rp template object")
CELL_TAGS = frozenset(("td", "th"))
_CELL = "\x1f"  # marks a table-cell boundary inside a row's buffer
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1e\x7f]")  # never text; \x1f is _CELL
_EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
# Reading-system chrome inside content documents (Sphinx "related" bars, page footers,
# inline TOCs): navigation, not the book's text.
SKIP_ROLES = frozenset(("navigation", "contentinfo", "doc-toc", "doc-pagelist"))
SKIP_TYPES = frozenset(("toc", "landmarks", "page-list"))
# A note reference's marker ("409", "*", "[3]"): dropped from the text, so the word before
# it stays a word of its own ("towns" not "towns409") and a quotation of the prose matches.
_NOTE_MARK = re.compile(
    r"[\[(]?(?:\d{1,4}|[A-Za-z]{1,2}|[*\u2020\u2021\u00a7\u00b6]{1,3})[\])]?")


def localname(el: etree._Element) -> str:
    """Tag name without namespace ("" for comments and processing instructions)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def attr_type(el: etree._Element) -> set[str]:
    """The epub:type tokens of an element, whichever parser (XML or HTML) produced it."""
    return set((el.get(_EPUB_TYPE) or el.get("epub:type") or "").lower().split())


def _sniff_encoding(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    head = data[:2048]
    m = re.search(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""", head) or re.search(
        rb"""charset\s*=\s*["']?([A-Za-z0-9._-]+)""", head, re.IGNORECASE
    )
    if m:
        name = m.group(1).decode("ascii", "replace")
        try:
            "".encode(name)
            return name
        except LookupError:
            pass
    return "utf-8"


def _strict(data: bytes, huge: bool = False) -> etree._Element | None:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=huge
    )
    return etree.fromstring(data, parser)


# libxml2's size limits (a text node over 10 MB, nesting over 256): lifted on a retry with
# huge_tree, which keeps the entity-amplification check; the member itself is size-capped.
_LIMITS = re.compile(r"depth|huge|too long", re.I)


def load_markup(data: bytes) -> etree._Element | None:
    """Parse XHTML strictly as XML (exact structure), falling back to the forgiving HTML
    parser for tag soup or HTML entities. Entities are never expanded from DTDs and nothing
    is fetched from the network. Returns None when neither parser yields a tree.

    Past libxml2's limits — elements nested over 256 deep, a text node over 10 MB — the XML
    parser fails and the HTML parser silently drops everything from that point on. Such a
    document is parsed again with the size limits lifted, flattened below ``MAX_DEPTH``
    first (see :func:`flatten`), so all its text is kept."""
    text: str | None = None
    try:
        root = _strict(data)
        if root is not None:
            return root
    except (etree.LxmlError, ValueError) as exc:
        if _LIMITS.search(str(exc)):
            text = flatten(_decode(data))
            try:
                return _strict(text.encode("utf-8"), huge=True)
            except (etree.LxmlError, ValueError):
                pass
    try:
        if text is None:
            text = flatten(_decode(data))
        # A DOCTYPE's internal subset would otherwise leak into the text as "]>".
        text = re.sub(r"<!DOCTYPE[^\[>]*(\[.*?\])?\s*>", "", text, count=1, flags=re.S | re.I)
        if not text.strip():
            return None
        return html.document_fromstring(text, parser=html.HTMLParser(huge_tree=True))
    except (etree.LxmlError, ValueError, LookupError):
        return None


def _decode(data: bytes) -> str:
    """The document as text, its XML declaration dropped (it may name another encoding)."""
    text = data.decode(_sniff_encoding(data), errors="replace")
    return re.sub(r"^\s*<\?xml[^>]*\?>", "", text)


MAX_DEPTH = 200  # below libxml2's 256 for both its XML and HTML parsers
_MARKUP = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<[?!][^>]*+>"
    r"|<(/?)([A-Za-z][^\s/>]*+)((?:[^>\"']++|\"[^\"]*+\"|'[^']*+')*+)>", re.S)
_ANCHOR_ATTR = re.compile(r"""\s(?:id|name)\s*=\s*(?:"[^"]*+"|'[^']*+')""")


def flatten(text: str) -> str:
    """``text`` with every element deeper than ``MAX_DEPTH`` unwrapped: its text stays in
    place, a block element leaves an empty ``<div/>`` (still a block boundary, keeping its
    id for TOC anchors), an inline one only its id. Unchanged when nothing nests that deep;
    one regex pass, linear in the text."""
    parts: list[str] = []
    open_tags: list[tuple[str, bool]] = []  # each open element: its name, was its tag kept
    pos = 0
    for tag in _MARKUP.finditer(text):
        closing, name, attrs = tag.group(1), tag.group(2), tag.group(3)
        if name is None or (not closing and attrs.rstrip().endswith("/")):
            continue  # comment, declaration or self-closing element: depth unchanged
        name = name.lower()
        if closing:
            kept = _close(open_tags, name)
            if kept is False:
                parts += [text[pos:tag.start()], _boundary(name, "")]
                pos = tag.end()
            continue
        if name in _VOID:
            continue
        if len(open_tags) < MAX_DEPTH:
            open_tags.append((name, True))
            continue
        open_tags.append((name, False))
        anchors = "".join(_ANCHOR_ATTR.findall(attrs))
        parts += [text[pos:tag.start()], _boundary(name, anchors)]
        pos = tag.end()
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


# HTML elements that never have a closing tag (tag soup writes <br>, not <br/>).
_VOID = _tags("area base br col embed hr img input link meta param source track wbr")
_CLOSE_LOOKBACK = 64  # how far up a closing tag looks for its (implicitly closed) opener


def _close(open_tags: list[tuple[str, bool]], name: str) -> bool | None:
    """Pop the element ``</name>`` closes (and those tag soup left open inside it); whether
    its tag was kept, or None for a stray closing tag."""
    for back in range(1, min(len(open_tags), _CLOSE_LOOKBACK) + 1):
        if open_tags[-back][0] == name:
            kept = open_tags[-back][1]
            del open_tags[-back:]
            return kept
    return None


def _boundary(name: str, anchors: str) -> str:
    if name in BLOCK_TAGS:
        return f"<div{anchors}/>"
    return f"<span{anchors}/>" if anchors else ""


def collapse(text: str) -> str:
    return " ".join(text.split())


def _pre_text(text: str) -> str:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


@dataclass
class DocInfo:
    """What the assembler needs to know about one content document before walking it."""

    root: etree._Element
    body: etree._Element
    ids: set[str]
    types: set[str]  # epub:type tokens on body and its first child element
    title: str  # <title>

    @classmethod
    def from_bytes(cls, data: bytes) -> DocInfo | None:
        if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return None  # binary junk under a content-document name
        root = load_markup(data)
        if root is None:
            return None
        body = next((el for el in root.iter() if localname(el) == "body"), root)
        ids: set[str] = set()
        for el in body.iter():
            if not isinstance(el.tag, str):
                continue
            if el.get("id"):
                ids.add(el.get("id", ""))
            if localname(el) == "a" and el.get("name"):
                ids.add(el.get("name", ""))
        types = attr_type(body)
        first = next((c for c in body if localname(c)), None)
        if first is not None:
            types |= attr_type(first)
        title_el = next((el for el in root.iter() if localname(el) == "title"), None)
        title = collapse(title_el.xpath("string()")) if title_el is not None else ""
        return cls(root, body, ids, types, title)


@dataclass
class WalkResult:
    """A document as a stream of ("anchor", id) and ("block", text) events."""

    events: list[tuple[str, str]] = field(default_factory=list)
    first_heading: str = ""
    text_chars: int = 0
    link_chars: int = 0  # text inside links to other documents of the book
    links: int = 0


def _internal_link(href: str | None) -> bool:
    if not href:
        return False
    return not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href) and not href.startswith("#")


def _chrome(el: etree._Element) -> bool:
    role = (el.get("role") or "").lower()
    return role in SKIP_ROLES or bool(attr_type(el) & SKIP_TYPES)


def noteref(el: etree._Element) -> bool:
    """Whether ``el`` is a note reference whose text is a marker, not words: epub:type
    "noteref" or role "doc-noteref" with no space in its text, or a link inside or around a
    <sup> whose text is a short marker (a number, a letter or two, an asterisk or dagger)."""
    if "noteref" in attr_type(el) or (el.get("role") or "").lower() == "doc-noteref":
        return " " not in collapse(el.xpath("string()"))
    if localname(el) != "a" or not el.get("href"):
        return False
    parent = el.getparent()
    in_sup = parent is not None and localname(parent) == "sup"
    if not in_sup and not any(localname(d) == "sup" for d in el.iterdescendants()):
        return False
    return bool(_NOTE_MARK.fullmatch(collapse(el.xpath("string()"))))


def walk(body: etree._Element, split_ids: set[str]) -> WalkResult:
    """Walk ``body`` in document order (iteratively: hostile nesting cannot overflow the
    stack), emitting blocks and an anchor event wherever an id in ``split_ids`` starts."""
    res = WalkResult()
    buf: list[str] = []
    pre_depth = 0
    link_depth = 0

    def add(text: str | None) -> None:
        if text:
            buf.append(text)
            if link_depth:
                res.link_chars += len(text.strip())

    def flush(heading: bool = False, pre: bool = False) -> None:
        if not buf:
            return
        raw = _CONTROL.sub("", "".join(buf))
        buf.clear()
        if pre:
            text = _pre_text(raw.replace(_CELL, " "))
        elif _CELL in raw:
            text = " | ".join(c for c in (collapse(p) for p in raw.split(_CELL)) if c)
        else:
            text = collapse(raw)
        if text:
            res.events.append(("block", text))
            res.text_chars += len(text)
            if heading and not res.first_heading:
                res.first_heading = collapse(text)

    stack: list[tuple[etree._Element, bool]] = [(body, False)]
    while stack:
        el, closing = stack.pop()
        name = localname(el)
        if closing:
            if name == "pre":
                pre_depth -= 1
            if name in BLOCK_TAGS:
                flush(heading=name in HEADINGS, pre=name == "pre")
            elif name in CELL_TAGS:
                buf.append(_CELL)
            elif name == "br":
                buf.append("\n" if pre_depth else " ")
            elif name == "a" and _internal_link(el.get("href")):
                link_depth -= 1
            if el is not body:
                add(el.tail)
            continue
        if not name:  # comment / processing instruction: only its tail is text
            add(el.tail)
            continue
        anchor = el.get("id") or (el.get("name") if name == "a" else None)
        if anchor and anchor in split_ids:
            flush()
            res.events.append(("anchor", anchor))
        if noteref(el):  # the marker leaves no text and is no link: only its tail
            add(el.tail)
            continue
        if name in SKIP_TAGS or _chrome(el):
            stack.append((el, True))  # still emit its tail
            continue
        if name in BLOCK_TAGS:
            flush()
        if name == "pre":
            pre_depth += 1
        if name == "a" and _internal_link(el.get("href")):
            link_depth += 1
            res.links += 1
        stack.append((el, True))
        add(el.text)
        stack.extend((child, False) for child in reversed(el))
    flush()
    return res
