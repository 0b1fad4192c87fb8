"""Raw HTML in Markdown, reduced to what a browser shows of it (in HTML blocks, in
markdown-it's inline tokens, and in text read without markdown-it).

Comments, ``<script>``/``<style>`` contents, CDATA sections and ``<?…?>`` instructions are
not shown; tags are not shown either, but a tag that starts a new line or box on the page
(``<br>``, ``<p>``, ``<li>``, ``<td>``…) still parts the words on either side of it, so
``<p>one</p><p>two</p>`` reads "one two", not "onetwo". Entities are decoded last, so
``&lt;script&gt;`` stays text.

Every pattern here scans at most to the next ``<`` (or, for an unclosed comment or script,
once to the end), so a 20 MB block of tag soup costs linear time.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it.token import Token

# What a browser does not show; an unclosed one runs to the end of the block, as in a browser.
_HIDDEN_HTML = re.compile(r"<!--.*?(?:-->|\Z)|<(script|style)\b.*?(?:</\1\s*>|\Z)"
                          r"|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)",
                          re.DOTALL | re.IGNORECASE)
# The tags of HTML's own elements. A bare tag of any other name ("cp <source-file> <dest>",
# "Array<T>") is a reader's placeholder, shown as written: dropping it would lose words the
# writer typed. One with attributes, a closing or a self-closing one is markup all the same
# (MDX's <TabItem value="js">, </Tabs>, <Note />) and is dropped.
_ELEMENT_NAMES = (
    "a abbr acronym address area article aside audio b base bdi bdo big blink blockquote body "
    "br button canvas caption center cite code col colgroup data datalist dd del details dfn "
    "dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset "
    "h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li "
    "link main map mark marquee menu meta meter nav nobr noscript object ol optgroup option "
    "output p param picture pre progress q rp rt ruby s samp script search section select "
    "slot small source span strike strong style sub summary sup svg path g rect circle table "
    "tbody td template textarea tfoot th thead time title tr track tt u ul var video wbr")
HTML_ELEMENTS = frozenset(_ELEMENT_NAMES.split())
# A tag (a quoted attribute value may hold ">", its name in group 1), or a declaration; no
# length cap: the scan stops at the next "<". Whether the name is HTML's is asked after.
_ANY_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*+)(?=[\s/>])"
                      r"(?:(?:[^<>\"']++|\"[^\"<]*+\"|'[^'<]*+')*+>|[^<>]*+>)|<![^<>]*+>")


_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9-]*+>")


def _shown(found: re.Match[str]) -> bool:
    """Whether a tag ``_ANY_TAG`` found is a placeholder to show as written."""
    return (found.group(1) is not None and found.group(1).lower() not in HTML_ELEMENTS
            and _PLACEHOLDER.fullmatch(found.group()) is not None)


def html_tag(text: str) -> bool:
    """Whether ``text`` is one tag to drop: of an HTML element, a declaration, or markup
    of another name (with attributes, closing or self-closing) — not a placeholder."""
    found = _ANY_TAG.fullmatch(text)
    return found is not None and not _shown(found)


# Tags a browser lays out as a line or a box of their own: they separate words.
SEPARATING_TAGS = frozenset((
    "br", "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table", "thead",
    "tbody", "tfoot", "caption", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr",
    "section", "article", "header", "footer", "nav", "aside", "main", "details", "summary",
    "figure", "figcaption", "center", "address", "img"))
SEPARATING = re.compile(r"</?(?i:" + "|".join(sorted(SEPARATING_TAGS)) + r")(?![\w-])")
_GAP = "\x01"
# A line's leading gaps go (its indentation stays); gaps within it become one space. Each
# run of blanks is scanned from its start only, so a long one stays linear.
_LEADING_GAPS = re.compile(r"^([ \t]*+)\x01[\x01 \t]*+", re.MULTILINE)
_GAPS = re.compile(r"(?<![ \t\x01])[ \t]*+\x01[\x01 \t]*+")
_LINE_BREAK_TAG = re.compile(r"<br\b", re.IGNORECASE)
_HIDING_TAG = re.compile(r"<(script|style)\b", re.IGNORECASE)
# Openers of what html_hide blanks out, and what closes each.
_CLOSERS = {"<!--": "-->", "<script": "</script", "<style": "</style"}


_IMAGE_ALT = re.compile(r"<img\b[^<>]*?(?<![\w-])alt\s*=\s*"
                        r"(?:\"([^\"<]*)\"|'([^'<]*)'|([^\s\"'<>]+))", re.IGNORECASE)


def image_alt(tag: str) -> str:
    """The ``alt`` text of an ``<img>`` tag, else "": a heading that is only a logo image
    (``# <img src="logo.svg" alt="Fastify">``) is named by it, as a screen reader says it."""
    found = _IMAGE_ALT.match(tag)
    if found is None:
        return ""
    return html.unescape(next(part for part in found.groups() if part is not None)).strip()


def _lines_of(found: re.Match[str]) -> str:
    return "\n" * found.group().count("\n")


def _tag(found: re.Match[str]) -> str:
    if _shown(found):
        return found.group()  # a placeholder, kept as written
    gap = _GAP if SEPARATING.match(found.group()) else ""
    return gap + "\n" * found.group().count("\n") if "\n" in found.group() else gap


def html_lines(block: str) -> list[str]:
    """What a browser shows of a block of raw HTML in Markdown, one (maybe empty) line per
    source line: hidden parts and tags dropped (separating tags part words), entities
    decoded. ``<a id="…"></a>`` anchors and ``<!-- lint -->`` comments, which fill real
    documentation, show nothing; ``<h1 align="center">Fastify</h1>`` its text."""
    text = _HIDDEN_HTML.sub(_lines_of, block.replace(_GAP, ""))
    text = _ANY_TAG.sub(_tag, text)
    if _GAP in text:
        text = _GAPS.sub(" ", _LEADING_GAPS.sub(r"\1", text))
    if "&" in text:
        text = html.unescape(text)
    return [line.rstrip() for line in text.split("\n")]


def html_text(block: str) -> str:
    """The lines of ``html_lines`` that show anything."""
    return "\n".join(line for line in html_lines(block) if line.strip())


def html_runs(block: str) -> list[tuple[int, str]]:
    """``(first line, text)`` of each run of consecutive source lines that show anything,
    its text one line per source line: a block cited (or a chunk of it) by its own lines."""
    runs: list[tuple[int, str]] = []
    run: list[str] = []
    for number, line in enumerate([*html_lines(block), ""]):
        if line.strip():
            run.append(line)
        elif run:
            runs.append((number - len(run), "\n".join(run)))
            run = []
    return runs


def html_hide(text: str) -> str:
    """``text`` with its closed comments, scripts and styles blanked out, their line breaks
    kept (so line numbers still hold): for text read without markdown-it, where an
    unclosed ``<!--`` may be prose and must not hide the rest. Linear: once an opener has
    no closer, no later opener of its kind is looked at."""
    if "<" not in text:
        return text
    low = text.lower()
    ahead = {opener: low.find(opener) for opener in _CLOSERS}
    parts: list[str] = []
    pos = 0
    while ahead:
        opener = min(ahead, key=lambda name: ahead[name])
        start = ahead[opener]
        if start < 0:
            del ahead[opener]
            continue
        close = low.find(_CLOSERS[opener], start + len(opener))
        if close < 0:
            del ahead[opener]
            continue
        end = close + len(_CLOSERS[opener])
        if opener != "<!--":
            gt = low.find(">", end)
            end = len(text) if gt < 0 else gt + 1
        parts += [text[pos:start], "\n" * text.count("\n", start, end)]
        pos = end
        for name in ahead:
            if ahead[name] < pos:
                ahead[name] = low.find(name, pos)
    return "".join(parts) + text[pos:] if parts else text


# An HTML block a browser hides or shows as written, which markdown-it runs past blank
# lines (CommonMark kinds 1-5: its opener at the margin, its closer anywhere on a line).
# BLOCK_OPENER finds only those not closed on their first line: the others end there.
_NAMES = r"(?i:script|pre|style|textarea)"
BLOCK_OPENER = (r"<(?:!--(?![^\n]*-->)|\?(?![^\n]*\?>)|![A-Za-z](?![^\n]*>)"
                r"|!\[CDATA\[(?![^\n]*\]\]>)|" + _NAMES + r"(?=[\s>]|$)(?![^\n]*</" + _NAMES
                + r">))")
_BLOCK_OPENERS = (
    (re.compile(r"<(?i:script|pre|style|textarea)(?=[\s>]|$)"),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I)),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
)


def html_block_end(body: str, at: int) -> int | None:
    """The offset just past the line that closes the HTML block opening at offset ``at`` (a
    line start at the margin), the body's end when it is never closed; None if no such
    block opens there."""
    for opener, closer in _BLOCK_OPENERS:
        if opener.match(body, at):
            found = closer.search(body, at)
            if found is None:
                return len(body)
            newline = body.find("\n", found.end())
            return len(body) if newline < 0 else newline + 1
    return None


def html_block_unclosed(block: str) -> str | None:
    """The opener of the HTML block ``block`` (as cut by ``html_block_end``) when nothing
    closes it, so it runs to the end of the file; else None."""
    for opener, closer in _BLOCK_OPENERS:
        if found := opener.match(block):
            return None if closer.search(block) else found.group()
    return None


def hidden_to_end(line: int, opener: str, lines: int) -> str:
    """The warning for an HTML block opened at 1-based ``line`` by ``opener`` that nothing
    closes, hiding its ``lines`` lines to the end of the file."""
    return (f"line {line}: {opener} is never closed, so the {lines:,} lines from it to the "
            "end of the file are hidden, as a browser hides them")


def unclosed_at_end(tokens: Sequence[Token]) -> tuple[int, str, int] | None:
    """For markdown-it's ``tokens`` of a text: (0-based first line, opener, line count) of
    its last block when that is an HTML block nothing closes (so it runs to the text's
    end); else None."""
    for token in reversed(tokens):
        if token.map is None or token.level != 0:
            continue
        if token.type == "html_block" and (opener := html_block_unclosed(token.content)):
            start, end = token.map
            return start, opener, end - start
        return None
    return None


# ---------------------------------------------------------------------------- inline tokens


def inline_text(token: Token) -> str:
    """Plain text of an inline token: link targets, emphasis marks, comments and the tags
    of HTML's elements dropped (``<br>`` is a line break, ``<p>``, ``<td>``… part words, a
    ``<script>``'s or ``<style>``'s contents are not shown), as a browser shows it; a bare
    tag of another name (``<file>``) is kept as text."""
    parts: list[str] = []
    hidden: str | None = None  # the closing tag a script or style runs to
    for child in token.children or []:
        kind = child.type
        if hidden is not None:
            if kind == "html_inline" and child.content.lower().startswith(hidden):
                hidden = None
        elif kind in ("text", "code_inline", "image"):
            parts.append(child.content)
        elif kind in ("softbreak", "hardbreak") or (
                kind == "html_inline" and _LINE_BREAK_TAG.match(child.content)):
            parts.append("\n")
        elif kind == "html_inline" and not (child.content.startswith("<!--")
                                            or html_tag(child.content)):
            parts.append(child.content)  # not HTML's: a placeholder such as <file>
        elif kind == "html_inline":
            if opened := _HIDING_TAG.match(child.content):
                hidden = f"</{opened.group(1).lower()}"
            elif SEPARATING.match(child.content):
                parts.append(" ")
    return "".join(parts).strip()


def heading_text(token: Token) -> str:
    """A heading's text; for one that shows only ``<img>`` tags, their alt texts."""
    return inline_text(token) or " ".join(filter(None, (
        image_alt(child.content) for child in token.children or []
        if child.type == "html_inline")))
