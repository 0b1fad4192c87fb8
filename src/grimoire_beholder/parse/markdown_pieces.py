"""Cutting a Markdown body into bounded pieces, so no construct costs more than its size.

markdown-it builds a token object (hundreds of bytes) for every list item, table cell,
line break or emphasis mark, and spends ~15–35 µs on each: a 5 MB table of one-letter cells
took 1.4 GB and 29 s, a 1 MB list of ``- a`` lines 600 MB and 30 s. So it never sees the
whole document, nor the constructs whose token count is unbounded by their bytes:

* The body is cut into pieces of at most ~400 lines / 16 KB at block boundaries (a blank
  line followed by an unindented line, outside a fence), and at most 2,000 lines / 64 KB
  anywhere; each piece is parsed on its own and its tokens dropped before the next.
* Fenced code blocks and tables that start at the left margin are read here, line by line,
  without tokens (a table row becomes ``cell | cell``, trailing empty cells dropped — a
  header of 5,000 columns no longer pads every short row with thousands of cells).
* The work markdown-it would do is estimated per piece from what it costs (lines, list and
  quote markers, inline marks). While the whole document's estimate is over a budget
  proportional to its size — ordinary documents stay well under it — the densest pieces
  are read as plain text instead: paragraphs split at blank lines, ATX headings still
  heading, markup left as written. Nothing is dropped; the parser warns how much was read
  this way.

Reference-style links are resolved across pieces: definitions are collected up front.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from markdown_it.common.utils import normalizeReference

from grimoire_beholder.parse.markdown_html import (
    BLOCK_OPENER,
    SEPARATING_TAGS,
    html_block_end,
    html_hide,
    html_runs,
)

SOFT_LINES, SOFT_BYTES = 400, 16 << 10  # a piece ends at the next block boundary after this
HARD_LINES, HARD_BYTES = 2000, 64 << 10  # …and anywhere after this
# The cost model below is in microseconds of markdown-it-py time, measured per construct.
# Ordinary documents cost ~1–2.5 µs a byte. Past the base budget, a piece costing more than
# _DENSE µs a byte is read plain, and the densest of the rest are too until the whole stays
# within _PER_BYTE µs a byte.
_BASE_US, _PER_BYTE_US, _DENSE_US = 500_000, 3, 6
_BIG_FENCE = 4 << 10  # fenced code this long is read here, not by markdown-it
_PLAIN_BLOCK = 1 << 10  # plain-read paragraphs are gathered into blocks of about this size
_MAX_REFERENCES = 100_000

# (first source line, heading level or 0 for a block, text, [first, stop) line map)
Event = tuple[int, int, str, list[int] | None]

_FENCE = re.compile(r"(`{3,}|~{3,})([^\n]*)")
_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
# Lines that end a table (the block starts markdown-it checks with its blockquote rules).
_ENDS_TABLE = re.compile(r" {0,3}(?:[>#]|```|~~~|<[A-Za-z/!?]|(?:[-*_][ \t]*){3,}$"
                         r"|(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$))|[ \t]{4}")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")
_REFERENCE = re.compile(r"(?m)^ {0,3}\[((?:[^\]\\\n]|\\.){1,999})\]:")
# What markdown-it spends its time on (µs each, measured): lines found by regexes, marks
# counted by str.count, both at C speed.
_LINE_COSTS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"(?m)^[ \t]*\S"), 30),  # a non-blank line: rules tried, tokens, breaks
    (re.compile(r"(?m)^[ \t>]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)"), 70),  # a list item
    (re.compile(r"(?m)^ {0,3}#{1,6}(?:[ \t]|$)"), 25),  # a heading
)
_MARK_COSTS = {
    "<": 35, ">": 35,  # a blockquote level, an HTML tag or an autolink
    "*": 25, "_": 25, "&": 25,  # emphasis delimiters, entities
    "[": 16, "]": 16,  # links
    "`": 8, "\\": 8, "|": 8, "!": 8,  # code spans, escapes, table cells, images
}
# Inline markup in plain-read text and table cells: a code span keeps its content as is, a
# link or image its text, emphasis marks at the edge of a word and HTML tags go (a tag
# that separates words, <br> or <td>, leaves a space).
_ANY_MARK = re.compile(r"[*_`<\[&]")
# Every alternative starts only where a run of its marks starts and scans no further than
# the next mark of its kind, so a line of a million backticks or asterisks stays linear.
_INLINE = re.compile(r"(?<!`)(`++)([^`\n]{1,2000}?)\1(?!`)"
                     r"|!?\[([^\[\]\n]{0,500}+)\](?:\([^()\n]{0,500}+\)|\[[^\[\]\n]{0,500}+\])"
                     r"|<(?=[A-Za-z/])/?(?P<tag>[A-Za-z0-9]*+)[^<>\n]{0,200}+>"
                     r"|(?<![\w*])[*_]++(?=\S)"
                     r"|(?<=[^\s*_])[*_]++(?![\w*])")


@dataclass(slots=True)
class Piece:
    """Lines ``[start, stop)`` of the body, read as ``kind``: "md" (markdown-it), "plain",
    "fence", "html" or "table"."""

    kind: str
    start: int
    stop: int
    cost: int = 0


def _blank(line: str) -> bool:
    return not line or line.isspace()


def _closer(opener: str) -> re.Pattern[str]:
    """The line that closes a fence opened by ``opener``: the same mark, at least as long
    (a multi-line pattern, to search the body at C speed)."""
    marker = _FENCE.match(opener)
    assert marker is not None
    return _closing(marker.group(1)[0], len(marker.group(1)))


@functools.lru_cache(maxsize=64)
def _closing(mark: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(mark)}{{{length},}}[ \t]*$", re.M)


def _fence_end(body: str, at: int) -> int | None:
    """The offset just past the fence opening at offset ``at`` (a line start at the
    margin), its closing line included; the body's end when it is never closed."""
    found = _FENCE.match(body, at)
    if found is None or (found.group(1)[0] == "`" and "`" in found.group(2).split("\n")[0]):
        return None
    opener_end = body.find("\n", at)
    if opener_end < 0:
        return len(body)
    close = _closer(found.group(1)).search(body, opener_end + 1)
    return len(body) if close is None else min(close.end() + 1, len(body))


def _cells(line: str) -> list[str]:
    """A table row's cells, split at unescaped pipes, outer empty cells removed."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    if cells and not cells[0].strip():
        cells.pop(0)
    if cells and not cells[-1].strip():
        cells.pop()
    return cells


def _table_end(lines: list[str], start: int) -> int | None:
    """One past the last row of a table whose header is ``lines[start]``, or None."""
    if start + 1 >= len(lines) or "|" not in lines[start] or lines[start].startswith("    "):
        return None
    if not _DELIMITER.fullmatch(lines[start + 1]):
        return None
    header = _cells(lines[start])
    if not header or len(header) != len(_cells(lines[start + 1])):
        return None
    end = start + 2
    while end < len(lines) and not _blank(lines[end]) and not _ENDS_TABLE.match(lines[end]):
        end += 1
    return end


# Where a piece may start: after a blank line, an unindented line (b); a line opening a fence
# at the margin (f); a comment, script, <pre>… at the margin, which runs past blank lines
# (h); a line with a pipe above a delimiter-like line, maybe a table (t).
_CANDIDATE = re.compile(r"(?P<b>\n[ \t]*\n)(?=[^ \t\n])|^(?P<f>)(?=`{3}|~{3})"
                        r"|^(?P<h>)(?=" + BLOCK_OPENER + ")"
                        r"|^(?P<t>)(?=[^\n|]*+\|[^\n]*+\n {0,3}[|:-])", re.M)


_KINDS = {"f": "fence", "h": "html", "t": "table"}


class _Cutter:
    """Walks the candidates of ``_CANDIDATE`` (at C speed), counting lines as it goes."""

    def __init__(self, body: str, lines: list[str]) -> None:
        self.body, self.lines = body, lines
        self.pieces: list[Piece] = []
        self.start = self.start_offset = 0  # the open "md" piece: first line, its offset

    def close_md(self, line: int, offset: int) -> None:
        """End the open piece before ``line`` (at ``offset``), in HARD_BYTES parts."""
        body = self.body
        while offset - self.start_offset > HARD_BYTES:
            newline = body.find("\n", self.start_offset + HARD_BYTES, offset)
            if newline < 0 or newline + 1 >= offset:
                break
            stop = self.start + body.count("\n", self.start_offset, newline) + 1
            self.pieces.append(Piece("md", self.start, stop))
            self.start, self.start_offset = stop, newline + 1
        if line > self.start and not self.body[self.start_offset:offset].isspace():
            self.pieces.append(Piece("md", self.start, line))
        self.start, self.start_offset = line, offset

    def special(self, kind: str, line: int, at: int) -> tuple[int, int] | None:
        """(stop line, end offset) of the fence, HTML block or table at ``line``/``at``."""
        if kind in "fh":
            end = (_fence_end if kind == "f" else html_block_end)(self.body, at)
            if end is None:
                return None
            return line + self.body.count("\n", at, end) + (end == len(self.body)), end
        stop = _table_end(self.lines, line)
        if stop is None:
            return None
        return stop, min(at + sum(len(ln) + 1 for ln in self.lines[line:stop]), len(self.body))

    def run(self) -> list[Piece]:
        body = self.body
        line = offset = pos = 0  # a known line start, and where the search resumes
        while (found := _CANDIDATE.search(body, pos)) is not None:
            kind = found.lastgroup or "b"
            at = found.end() if kind == "b" else found.start()
            line += body.count("\n", offset, at)
            offset, pos = at, at if kind == "b" else at + 1
            if kind == "b":
                if at - self.start_offset >= SOFT_BYTES:
                    self.close_md(line, at)
                continue
            span = self.special(kind, line, at)
            if span is None:
                continue
            stop, end = span
            first, line, offset, pos = line, stop, end, end
            if kind in "fh" and end - at < _BIG_FENCE:
                continue  # markdown-it reads it with its neighbours; never cut inside
            self.close_md(first, at)
            last = self.pieces[-1] if self.pieces else None
            if kind == "t" and last and last.kind == "table" and last.stop <= first:
                last.stop = stop  # tables apart by blank lines only: one block
            else:
                self.pieces.append(Piece(_KINDS[kind], first, stop))
            self.start, self.start_offset = stop, end
        self.close_md(len(self.lines), len(body) + 1)
        return self.pieces


def cut(body: str, lines: list[str]) -> list[Piece]:
    """The pieces of ``body`` (split into ``lines``) in order: "md" pieces are bounded,
    fences and tables whole."""
    return _Cutter(body, lines).run()


def estimate(text: str) -> int:
    """Microseconds markdown-it would spend on ``text``, roughly (see ``_COSTS``)."""
    return (sum(len(pattern.findall(text)) * weight for pattern, weight in _LINE_COSTS)
            + sum(text.count(mark) * weight for mark, weight in _MARK_COSTS.items()))


def assign(pieces: list[Piece], lines: list[str], total: int) -> int:
    """Mark "md" pieces "plain" where markdown-it would cost too much (see the constants)
    in a body of ``total`` characters; returns how many characters are read plain."""
    sizes: dict[int, int] = {}
    for number, piece in enumerate(pieces):
        if piece.kind == "md":
            text = "\n".join(lines[piece.start:piece.stop])
            piece.cost, sizes[number] = estimate(text), len(text) + 1
    if sum(pieces[n].cost for n in sizes) <= _BASE_US:
        return 0  # a small document: markdown-it reads all of it
    for number, size in sizes.items():
        if size > HARD_BYTES and pieces[number].cost > size:  # one giant line of markup
            pieces[number].kind = "plain"
    spent = sum(pieces[n].cost for n in sizes if pieces[n].kind == "md")
    budget = _BASE_US + _PER_BYTE_US * total
    for number in sorted(sizes, key=lambda n: pieces[n].cost / sizes[n], reverse=True):
        piece = pieces[number]
        if spent <= budget and piece.cost <= _DENSE_US * sizes[number]:
            break
        if piece.kind == "md":
            piece.kind = "plain"
            spent -= piece.cost
    return sum(sizes[n] for n in sizes if pieces[n].kind == "plain")


def references(body: str) -> dict[str, dict[str, Any]]:
    """Every reference definition's label, so ``[text][label]`` in any piece reads as
    ``text`` (only the link text is kept, so the target does not matter)."""
    found: dict[str, dict[str, Any]] = {}
    for match in _REFERENCE.finditer(body):
        if len(found) >= _MAX_REFERENCES:
            break
        found.setdefault(normalizeReference(match.group(1)), {"href": "", "title": ""})
    return found


def plain_inline(text: str) -> str:
    """Inline markup reduced to text without building tokens: link text kept, emphasis
    marks, code backticks and HTML tags dropped."""
    if not _ANY_MARK.search(text):
        return text
    text = _INLINE.sub(_inline_part, text)
    return html.unescape(text) if "&" in text else text


def _inline_part(found: re.Match[str]) -> str:
    last = found.lastindex  # which alternative matched: 2 code, 3 link, 4 tag, else a mark
    if last == 4:  # "a<br>b" reads "a b"
        return " " if found.group(4).lower() in SEPARATING_TAGS else ""
    if last == 2:
        return found.group(2)
    return plain_inline(found.group(3)) if last == 3 else ""


def fence_event(lines: list[str], piece: Piece) -> Event:
    """A fenced code block: its content lines, without the fences (text and line span)."""
    stop = piece.stop
    while stop - 1 > piece.start and not lines[stop - 1].strip():
        stop -= 1
    if stop - 1 > piece.start and _closer(lines[piece.start]).fullmatch(lines[stop - 1]):
        stop -= 1
    code = "\n".join(lines[piece.start + 1:stop]).rstrip("\n")
    # cited by the lines of its code, one per line of the text (a chunk of it cites its own)
    return (piece.start, 0, code, [piece.start + 1, stop] if code.strip() else
            [piece.start, piece.stop])


def html_events(lines: list[str], piece: Piece) -> list[Event]:
    """A long comment, script, ``<pre>``… block: what a browser shows of it (often
    nothing), one block per run of lines that show text, each cited by its own lines."""
    return [(piece.start + first, 0, text,
             [piece.start + first, piece.start + first + text.count("\n") + 1])
            for first, text in html_runs("\n".join(lines[piece.start:piece.stop]))]


def table_event(lines: list[str], piece: Piece) -> Event:
    """Tables as one block, one ``cell | cell`` line per row; each table's delimiter row
    (the line after a header, which follows a blank line or starts the piece) is skipped."""
    rows = []
    header = True
    for index in range(piece.start, piece.stop):
        line = lines[index]
        if _blank(line):
            header = True
            continue
        if not header and index > piece.start and _DELIMITER.fullmatch(line) \
                and _blank(lines[index - 2] if index - 2 >= piece.start else ""):
            continue
        header = False
        cells = [plain_inline(cell.strip().replace("\\|", "|"))
                 for cell in _cells(html_hide(line))]
        while cells and not cells[-1]:
            cells.pop()
        rows.append(" | ".join(cells))
    return (piece.start, 0, "\n".join(rows), [piece.start, piece.stop])


_BREAK = re.compile(r"\n[ \t]*\n")  # a blank line: where a plain block may end
_HEADING_LINE = re.compile(r"(?m)^ {0,3}#{1,6}(?:[ \t]|$)")
_LINE_EDGES = re.compile(r"(?<![ \t])[ \t]*+\n[ \t]*+")


def plain_events(lines: list[str], piece: Piece, headings: bool) -> Iterator[Event]:
    """Blocks of about ``_PLAIN_BLOCK`` characters ending at blank lines, markup as
    written; with ``headings``, ATX heading lines in them still start sections."""
    text = html_hide("\n".join(lines[piece.start:piece.stop]))
    pos, line = 0, piece.start
    while pos < len(text):
        found = _BREAK.search(text, pos + _PLAIN_BLOCK)
        end = found.start() + 1 if found else len(text)
        block = text[pos:end]
        body = block.lstrip()
        first = line + block.count("\n", 0, len(block) - len(body))
        body = body.rstrip()
        if headings and _HEADING_LINE.search(body):
            yield from _plain_lines(body.split("\n"), first)
        elif body:
            yield (first, 0, plain_inline(_LINE_EDGES.sub("\n", body)),
                   [first, first + body.count("\n") + 1])
        line += block.count("\n")
        pos = end


def _atx_title(rest: str) -> str:
    """A heading's text without its optional closing ``#`` sequence (no regex: a heading
    line can be megabytes long)."""
    title = rest.strip()
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare.rstrip()
    return title


def _plain_lines(run: list[str], first: int) -> Iterator[Event]:
    """A run of non-blank lines holding ATX headings: each heading, and the text between."""
    start: int | None = None
    for number, line in enumerate([*run, "#"]):
        heading = _ATX.match(line) if number < len(run) else None
        if start is not None and (heading or number == len(run)):
            text = "\n".join(ln.strip() for ln in run[start:number])
            yield (first + start, 0, plain_inline(text), [first + start, first + number])
            start = None
        if heading:
            title = plain_inline(_atx_title(line[heading.end():]))
            yield (first + number, len(heading.group(1)), title,
                   [first + number, first + number + 1])
        elif start is None and number < len(run):
            start = number
