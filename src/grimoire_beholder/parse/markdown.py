"""Markdown parsing with markdown-it-py (CommonMark plus tables).

Structure: ``#`` headings start chapters; ``##``–``######`` headings are sections, flattened
in document order, each carrying its breadcrumb below the chapter (``["Setup", "Windows"]``).
Text between a chapter heading and its first sub-heading is the chapter's untitled lead-in.
Text before the first ``#`` heading becomes a chapter of its own, titled by the front matter
title or else the file name: titling it by the single ``#`` heading would give two chapters
the same name (a README with a badge line above ``# Project`` is the usual case).

Blocks are paragraphs, list items (a top-level item with its nested sub-items), fenced and
indented code, tables and blockquotes, each with its 1-based inclusive source line range,
so a hit can be shown as ``notes.md:12-18``.

Pathological nesting (1,000 ``>`` levels) is cut off by markdown-it's ``maxNesting`` guard;
the flat token stream is walked iteratively (``markdown_tokens.py``), so nothing recurses on
input depth, and the text markdown-it dropped at that limit is recovered there.

Memory and time stay proportional to the file: markdown-it only ever sees one bounded piece
at a time, never tables or long fences, and dense markup past a budget is read as plain
text (``markdown_pieces.py``); headings beyond one per ``_CHARS_PER_HEADING`` characters are
kept as text rather than becoming thousands of empty sections. Both are said in a warning.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from grimoire_beholder.errors import NoTextError
from grimoire_beholder.parse.document import Block, ParsedBook, ParsedChapter, ParsedSection
from grimoire_beholder.parse.markdown_html import (
    hidden_to_end,
    html_block_unclosed,
    unclosed_at_end,
)
from grimoire_beholder.parse.markdown_pieces import (
    Event,
    assign,
    cut,
    fence_event,
    html_events,
    plain_events,
    references,
    table_event,
)
from grimoire_beholder.parse.markdown_sitegen import split_toml_front_matter, strip_site_markup
from grimoire_beholder.parse.markdown_tokens import markdown_parser, orphan_events, token_events
from grimoire_beholder.parse.plain_text import line_count, read_text_file

_UNTITLED = "Untitled"
# Headings become chapters and sections only up to one per this many characters (and at
# least _MIN_HEADINGS): a file of nothing but "# a" lines must not cost a section each.
_CHARS_PER_HEADING, _MIN_HEADINGS = 256, 2_000


# ---------------------------------------------------------------------------- front matter


def split_front_matter(text: str) -> tuple[dict[str, str], str, int]:
    """``(metadata, body, lines_removed)`` for a leading ``---`` YAML block.

    Only flat ``key: value`` lines (and ``key:`` followed by ``- item`` lines, or a
    ``[a, b]`` list, joined with ", "; an item ``- name: A`` as Quarto writes authors is
    ``A``) are understood, quoted values as YAML reads them (escapes in double quotes,
    ``''`` in single): that covers title/author without pulling in a YAML library.
    An unclosed block is not front matter (it is a thematic break followed by text).
    Hugo's ``+++`` TOML block is read too (``markdown_sitegen``).
    """
    if text.startswith("+++") and (toml := split_toml_front_matter(text)) is not None:
        return toml
    if not text.startswith("---"):
        return {}, text, 0
    lines = text.split("\n", 200)
    if lines[0].rstrip() != "---":
        return {}, text, 0
    close = next(
        (i for i in range(1, min(len(lines), 200)) if lines[i].rstrip() in ("---", "...")), None
    )
    if close is None:
        return {}, text, 0
    meta: dict[str, str] = {}
    key: str | None = None
    block = False  # the value is a block scalar (``title: >-`` then indented lines)
    for raw in lines[1:close]:
        stripped = raw.strip()
        if key and block and (raw[:1].isspace() or not stripped):
            meta[key] = f"{meta[key]} {stripped}".strip()  # a name is one line
            continue
        if key and stripped.startswith("- "):
            item = _scalar(_uncommented(stripped[2:]), item=True)
            meta[key] = f"{meta[key]}, {item}" if meta.get(key) else item
            continue
        if key and raw[:1].isspace():  # more of the value (a list item's other keys)
            continue
        key = None
        if raw[:1].isspace() or ":" not in stripped or stripped.startswith("#"):
            continue
        name, _, value = stripped.partition(":")
        name = name.strip().lower()
        value = _uncommented(value.strip())
        block = _BLOCK_SCALAR.fullmatch(value) is not None
        meta[name] = "" if block else _scalar(value)
        key = name
    body = "\n".join(lines[close + 1 :])
    return meta, body, close + 1


# One item of a ``[a, "b", 'c']`` flow list: a double-quoted scalar (backslash escapes), a
# single-quoted one (``''`` is a quote), or plain text up to the next comma.
_FLOW_ITEM = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,]*)\s*(?:,|$)""")
# YAML's escapes in a double-quoted scalar (YAML 1.2, 5.7), one character each.
_ESCAPED = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


# A block scalar's header: ``>`` folds the indented lines below, ``|`` keeps them.
_BLOCK_SCALAR = re.compile(r"[>|][+-]?[1-9]?|[>|][1-9][+-]")
# A value before a comment: a quoted scalar or a flow list (whose quotes may hold "#"),
# or plain text up to a "#" after white space, as YAML reads a comment.
_BEFORE_COMMENT = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'"""
                             r"""|\[(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\]"'])*\])\s+#""")


def _uncommented(value: str) -> str:
    """``value`` without a YAML comment after it (``Tides # draft`` is ``Tides``)."""
    if value.startswith("#"):
        return ""
    if (quoted := _BEFORE_COMMENT.match(value)) is not None:
        return quoted.group(1)
    if value[:1] in "\"'[":
        return value
    return re.split(r"\s#", value, maxsplit=1)[0].rstrip()


def _scalar(value: str, *, item: bool = False) -> str:
    """A front matter value as text: unquoted, a ``[a, "b"]`` list joined with ", ", and a
    list ``item`` that is a mapping (``name: A``) its name."""
    if len(value) >= 2 and value[0] == "[" and value[-1] == "]":
        items = (_unquote(m.group(1).strip()) for m in _FLOW_ITEM.finditer(value[1:-1]))
        return ", ".join(item for item in items if item)
    name, colon, rest = value.partition(":")
    if item and colon and name.strip().lower() == "name" and rest.strip():
        return _unquote(rest.strip())
    return _unquote(value)


def _unquote(value: str) -> str:
    """A quoted scalar's text as YAML reads it: ``"A \\"B\\""`` is ``A "B"``, ``'it''s'``
    is ``it's``; an escape YAML does not know stays as written, and one that makes a
    control character other than white space (``\\0``, ``\\e``), which no name holds, or a
    lone surrogate, makes none."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return _ESCAPE.sub(_unescape, value[1:-1])
    return value


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) == 1:
        char = _ESCAPED.get(code)
        if char is None:
            return match.group(0)
    elif (number := int(code[1:], 16)) > sys.maxunicode:
        return match.group(0)
    else:
        char = chr(number)
    if char.isspace() or unicodedata.category(char) not in ("Cc", "Cs"):
        return char
    return ""


@dataclass
class _Builder:
    """Accumulates chapters and sections while walking headings and blocks in order."""

    prelude_title: str
    lines: list[str]
    offset: int
    chapters: list[ParsedChapter] = field(default_factory=list)
    h1_titles: list[str] = field(default_factory=list)
    heading_stack: list[tuple[int, str]] = field(default_factory=list)
    found_text: bool = False
    headings: int = 0

    def _current_chapter(self) -> ParsedChapter:
        if not self.chapters:
            self.chapters.append(ParsedChapter(title=self.prelude_title))
        return self.chapters[-1]

    def heading(self, level: int, title: str) -> None:
        self.headings += 1
        title = title or _UNTITLED
        if level == 1:
            self.h1_titles.append(title)
            self.chapters.append(ParsedChapter(title=title))
            self.heading_stack = []
            return
        chapter = self._current_chapter()
        while self.heading_stack and self.heading_stack[-1][0] >= level:
            self.heading_stack.pop()
        self.heading_stack.append((level, title))
        path = [name for _, name in self.heading_stack]
        chapter.sections.append(ParsedSection(title=title, path=path))

    def block(self, text: str, line_map: list[int] | None) -> None:
        if not text.strip():
            return
        self.found_text = True
        chapter = self._current_chapter()
        if not chapter.sections:  # text before the first sub-heading: the lead-in
            chapter.sections.append(ParsedSection(title=""))
        start, end = self._line_range(line_map)
        chapter.sections[-1].blocks.append(Block(text=text, line_start=start, line_end=end))

    def _line_range(self, line_map: list[int] | None) -> tuple[int | None, int | None]:
        if not line_map:
            return None, None
        first, stop = line_map[0], line_map[1]
        # markdown-it's map can include trailing blank lines (loose lists); trim them.
        while stop - 1 > first and not self.lines[stop - 1].strip():
            stop -= 1
        return first + 1 + self.offset, stop + self.offset


def _document_events(lines: list[str], body: str, warnings: list[str],
                     budget: _Capped, offset: int) -> Iterator[Event]:
    """Headings and blocks in document order, one bounded piece at a time (see
    markdown_pieces.py): no token list ever spans more than one piece."""
    parts = cut(body, lines)
    plain = assign(parts, lines, len(body))
    if plain:
        warnings.append(f"{plain:,} characters of dense markup were read as plain text "
                        "(markup kept as written)")
    env = {"references": references(body)}
    for piece in parts:
        if piece.kind == "md":
            part = lines[piece.start:piece.stop]
            tokens = markdown_parser().parse("\n".join(part), env)
            found = token_events(tokens) + orphan_events(tokens, part)
            if piece.stop >= len(lines) and (hidden := unclosed_at_end(tokens)):
                warnings.append(hidden_to_end(hidden[0] + piece.start + 1 + offset, *hidden[1:]))
            del tokens
            for first, level, text, line_map in sorted(found, key=lambda event: event[0]):
                yield (first + piece.start, level, text,
                       [line_map[0] + piece.start, line_map[1] + piece.start]
                       if line_map else None)
        elif piece.kind == "plain":
            yield from plain_events(lines, piece, headings=budget.left > 0)
        elif piece.kind == "fence":
            yield fence_event(lines, piece)
        elif piece.kind == "html":
            block = "\n".join(lines[piece.start:piece.stop])
            if piece.stop >= len(lines) and (opener := html_block_unclosed(block)):
                warnings.append(hidden_to_end(piece.start + 1 + offset, opener,
                                              block.rstrip().count("\n") + 1))
            yield from html_events(lines, piece)
        else:
            yield table_event(lines, piece)


class _Capped:
    """Lets the first ``most`` headings through; later ones are turned into text, each run
    of them (with the text between) one block rather than one block per heading. Plain
    pieces ask ``left`` so they stop looking for headings once none would count."""

    def __init__(self, most: int) -> None:
        self.left, self.demoted = most, 0

    def over(self, events: Iterator[Event]) -> Iterator[Event]:
        texts: list[str] = []  # the run being joined: its texts and line span
        span = [0, 0]
        for event in events:
            first, level, text, line_map = event
            if level and self.left > 0:
                self.left -= 1
                yield event
                continue
            if level:
                self.demoted += 1
                text = "#" * level + " " + text
            if self.left > 0 or not line_map:
                yield (first, 0, text, line_map)
                continue
            if texts and span[1] < line_map[0]:  # not adjacent: the run ends
                yield (span[0], 0, "\n".join(texts), span)
                texts, span = [], [0, 0]
            if not texts:
                span = [line_map[0], line_map[1]]
            texts.append(text)
            span[1] = line_map[1]
        if texts:
            yield (span[0], 0, "\n".join(texts), span)


def parse_markdown(path: Path) -> ParsedBook:
    """Parse a Markdown file into chapters (``#``) and flattened sections (``##``–``######``)."""
    path = Path(path)
    text = read_text_file(path)
    total_lines = line_count(text)
    meta, body, offset = split_front_matter(text)
    del text
    body = strip_site_markup(body, liquid=offset > 0)  # line for line; Liquid: Jekyll pages
    fm_title = meta.get("title") or None
    builder = _Builder(prelude_title=fm_title or path.stem, lines=body.split("\n"),
                       offset=offset)
    warnings: list[str] = []
    events = _Capped(max(_MIN_HEADINGS, len(body) // _CHARS_PER_HEADING))
    for _, level, text_, line_map in events.over(
            _document_events(builder.lines, body, warnings, events, offset)):
        if level:
            builder.heading(level, text_)
        else:
            builder.block(text_, line_map)
    if demoted := events.demoted:
        warnings.append(f"{demoted:,} headings were kept as text: more than one per "
                        f"{_CHARS_PER_HEADING} characters would only make empty sections")
    if not builder.found_text and not builder.chapters:
        raise NoTextError(f"{path}: contains no text")
    if fm_title:
        title = fm_title
    elif len(builder.h1_titles) == 1:
        title = builder.h1_titles[0]
    else:
        title = path.stem
    return ParsedBook(
        title=title,
        author=meta.get("author") or meta.get("authors") or None,
        source_type="markdown",
        source_path=str(path),
        chapters=builder.chapters,
        line_count=total_lines,
        warnings=warnings,
    )
