"""markdown-it's token stream as heading and block events, in document order.

An event is ``(first line, heading level or 0, text, source lines)`` (``markdown_pieces.Event``,
lines 0-based within the piece parsed). :func:`token_events` walks the flat token list
iteratively, so nothing recurses on input depth; :func:`orphan_events` gives back, as events
too, the text lines markdown-it dropped below its nesting limit. Blocks are paragraphs, list
items (a top-level item with its nested sub-items), fenced and indented code, tables and
blockquotes.
"""

from __future__ import annotations

import functools
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from grimoire_beholder.parse.markdown_html import heading_text, html_runs, html_text, inline_text
from grimoire_beholder.parse.markdown_pieces import Event

# Deep enough for any real document (lists in quotes in lists), shallow enough that
# markdown-it's recursive block parser stays far from Python's recursion limit.
_MAX_NESTING = 40
_CONTAINERS = {"bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"}


@functools.cache
def markdown_parser() -> MarkdownIt:
    """The one CommonMark parser, its nesting capped (``_MAX_NESTING``)."""
    # Tables are read by markdown_pieces (its table rule pads every short row to the header's
    # width, one token per cell); inside a list or quote a table stays plain text.
    return MarkdownIt("commonmark", {"maxNesting": _MAX_NESTING})


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


def token_events(tokens: list[Token]) -> list[Event]:
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


def orphan_events(tokens: list[Token], lines: list[str], reparse: bool = True) -> list[Event]:
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
    tokens = markdown_parser().parse("\n".join(stripped))
    found = token_events(tokens) + orphan_events(tokens, stripped, reparse=False)
    return [
        (line + first, level, text, [m[0] + first, m[1] + first] if m else None)
        for line, level, text, m in found
    ]
