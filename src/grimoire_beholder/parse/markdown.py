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
everything here walks the flat token stream iteratively, so nothing recurses on input depth.

Memory and time stay proportional to the file: markdown-it only ever sees one bounded piece
at a time, never tables or long fences, and dense markup past a budget is read as plain
text (``markdown_pieces.py``); headings beyond one per ``_CHARS_PER_HEADING`` characters are
kept as text rather than becoming thousands of empty sections. Both are said in a warning.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from grimoire_beholder.errors import NoTextError
from grimoire_beholder.parse.document import Block, ParsedBook, ParsedChapter, ParsedSection
from grimoire_beholder.parse.markdown_html import (
    heading_text,
    hidden_to_end,
    html_block_unclosed,
    html_runs,
    html_text,
    inline_text,
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
from grimoire_beholder.parse.plain_text import line_count, read_text_file

# Deep enough for any real document (lists in quotes in lists), shallow enough that
# markdown-it's recursive block parser stays far from Python's recursion limit.
_MAX_NESTING = 40
_UNTITLED = "Untitled"
# Headings become chapters and sections only up to one per this many characters (and at
# least _MIN_HEADINGS): a file of nothing but "# a" lines must not cost a section each.
_CHARS_PER_HEADING, _MIN_HEADINGS = 256, 2_000
_CONTAINERS = {"bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"}


@functools.cache
def _markdown() -> MarkdownIt:
    # Tables are read by markdown_pieces (its table rule pads every short row to the header's
    # width, one token per cell); inside a list or quote a table stays plain text.
    return MarkdownIt("commonmark", {"maxNesting": _MAX_NESTING})


# ---------------------------------------------------------------------------- front matter


def split_front_matter(text: str) -> tuple[dict[str, str], str, int]:
    """``(metadata, body, lines_removed)`` for a leading ``---`` YAML block.

    Only flat ``key: value`` lines (and ``key:`` followed by ``- item`` lines, joined with
    ", ") are understood: that covers title/author without pulling in a YAML library.
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
    for raw in lines[1:close]:
        stripped = raw.strip()
        if key and stripped.startswith("- "):
            item = _unquote(stripped[2:])
            meta[key] = f"{meta[key]}, {item}" if meta.get(key) else item
            continue
        key = None
        if raw[:1].isspace() or ":" not in stripped or stripped.startswith("#"):
            continue
        name, _, value = stripped.partition(":")
        name = name.strip().lower()
        meta[name] = _unquote(value.strip())
        key = name
    body = "\n".join(lines[close + 1 :])
    return meta, body, close + 1


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# ---------------------------------------------------------------------------- token walking


def _matching_close(tokens: list[Token], start: int) -> int:
    """Index of the token closing ``tokens[start]`` (an ``*_open``), found by nesting depth."""
    depth = 0
    for index in range(start, len(tokens)):
        depth += tokens[index].nesting
        if depth == 0:
            return index
    return len(tokens) - 1


def _gather(tokens: list[Token], start: int, stop: int) -> str:
    """Plain text of the tokens in ``[start, stop]``, one line per paragraph/row/item.

    List items keep a marker ("- ", "3. ") and indentation for their depth so a nested list
    still reads as a list inside a chunk; table rows become ``cell | cell``.
    """
    parts: list[str] = []
    list_depth = 1 if tokens[start].type == "list_item_open" else 0
    marker = ""
    row: list[str] | None = None
    for token in tokens[start : stop + 1]:
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "list_item_open":
            bullet = f"{token.info}{token.markup}" if token.info else "-"
            marker = "  " * max(list_depth - 1, 0) + bullet + " "
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            while row and not row[-1]:  # cells markdown-it padded a short row with
                row.pop()
            parts.append(" | ".join(row))
            row = None
        elif kind == "inline":
            text = inline_text(token)
            if row is not None:
                row.append(text)
            elif text:
                parts.append(marker + text)
                marker = ""
        elif kind in ("fence", "code_block"):
            code = token.content.rstrip("\n")
            if code.strip():
                parts.append(marker + code)
                marker = ""
        elif kind == "html_block":
            shown = html_text(token.content)
            if shown:
                parts.append(marker + shown)
                marker = ""
    return "\n".join(parts)


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


# Tokens whose map marks source lines as read; containers are left out on purpose because
# their map can span text that markdown-it dropped at its nesting limit.
_LEAF_TOKENS = {"inline", "fence", "code_block", "html_block", "hr", "heading_open", "table_open"}
# Lines with nothing but container markers (a bare ">" or "-") or a link reference definition.
_NO_TEXT_LINE = re.compile(r"^[\s>]*(?:(?:[-+*]|\d{1,9}[.)])[\s>]*)?$|^ {0,3}\[[^\]]+\]:\s*\S")


def _content_lines(token: Token) -> list[int] | None:
    """A block's source lines; for a fenced listing only the lines of its code, not the
    fences, so that its text keeps one line per source line (chunks of it cite their own)."""
    if token.type != "fence" or not token.map or not token.content.strip():
        return token.map
    first = token.map[0] + 1
    return [first, min(token.map[1], first + token.content.count("\n"))]


def _events(tokens: list[Token]) -> list[Event]:
    """Headings and blocks in document order, walking the flat token list without recursion."""
    events: list[Event] = []

    def add(level: int, text: str, line_map: list[int] | None) -> None:
        events.append((line_map[0] if line_map else 0, level, text, line_map))

    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind == "heading_open" and token.level == 0:
            add(int(token.tag[1:]), heading_text(tokens[index + 1]), token.map)
            index += 3
        elif kind == "paragraph_open":
            add(0, inline_text(tokens[index + 1]), token.map)
            index += 3
        elif kind in ("fence", "code_block"):
            add(0, _gather(tokens, index, index), _content_lines(token))
            index += 1
        elif kind == "html_block":  # each run of lines that show text, by its own lines
            top = token.map[0] if token.map else 0
            for first, text in html_runs(token.content):
                add(0, text, [top + first, top + first + text.count("\n") + 1])
            index += 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            close = _matching_close(tokens, index)
            item = index + 1
            while item < close:
                item_close = _matching_close(tokens, item)
                add(0, _gather(tokens, item, item_close), tokens[item].map)
                item = item_close + 1
            index = close + 1
        elif kind in _CONTAINERS:
            close = _matching_close(tokens, index)
            add(0, _gather(tokens, index, close), token.map)
            index = close + 1
        else:
            index += 1
    return events


def _orphans(tokens: list[Token], lines: list[str], reparse: bool = True) -> list[Event]:
    """Text lines no token accounts for, recovered at their place in the document.

    markdown-it silently drops everything below its nesting limit (and, inside a too-deep
    list, the rest of the document). Rather than lose a user's text, each run of such lines
    is parsed once more with its indentation removed (so a ``# Heading`` stays a heading);
    whatever that second pass still drops comes back as plain paragraphs.
    """
    covered = bytearray(len(lines) + 1)
    for token in tokens:
        if token.type in _LEAF_TOKENS and token.map:
            first, stop = token.map
            covered[first:stop] = b"\x01" * (stop - first)
    events: list[Event] = []
    run: list[int] = []
    for number, line in enumerate([*lines, ""]):
        if number < len(lines) and not covered[number] and not _NO_TEXT_LINE.match(line):
            run.append(number)
            continue
        if run:
            events.extend(_recover(lines[run[0] : run[-1] + 1], run[0], reparse))
            run = []
    return events


def _recover(run: list[str], first: int, reparse: bool) -> list[Event]:
    stripped = [line.strip() for line in run]
    if not reparse:
        return [(first, 0, "\n".join(stripped), [first, first + len(run)])]
    tokens = _markdown().parse("\n".join(stripped))
    found = _events(tokens) + _orphans(tokens, stripped, reparse=False)
    return [
        (line + first, level, text, [m[0] + first, m[1] + first] if m else None)
        for line, level, text, m in found
    ]


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
            tokens = _markdown().parse("\n".join(part), env)
            found = _events(tokens) + _orphans(tokens, part)
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
