"""A chunk's source span: the pages and source lines of a character range of a section.

A section's text is its blocks' texts joined by blank lines; :func:`span_of` maps a range
of it back to the blocks it touches, and inside a block that keeps one line per source line
(:class:`LineMaps`) to the exact lines, so a chunk cites where it is in the book.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from grimoire_beholder.parse.document import Block

_NEWLINE = re.compile("\n")

_Span = tuple[int | None, int | None, int | None, int | None]


class LineMaps:
    """Where each block's line breaks are, found once per block (a 5 MB block holding
    thousands of chunks is scanned once, not once per chunk); None for a block whose text
    does not keep one line per source line (a table without its delimiter row, a list
    re-flowed by the parser): a chunk in it cites the block's own span."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.breaks: dict[int, list[int] | None] = {}

    def line(self, index: int, offset: int) -> int | None:
        """The source line of character ``offset`` of block ``index``'s text, if known."""
        if index not in self.breaks:
            block = self.blocks[index]
            breaks: list[int] | None = None
            if block.line_start is not None and block.line_end is not None:
                breaks = [m.start() for m in _NEWLINE.finditer(block.text)]
                if len(breaks) != block.line_end - block.line_start:
                    breaks = None
            self.breaks[index] = breaks
        found = self.breaks[index]
        start = self.blocks[index].line_start
        if found is None or start is None:
            return None
        return start + bisect_left(found, max(0, offset))


def span_of(blocks: list[Block], offsets: list[int], start: int, end: int,
             lines: LineMaps) -> _Span:
    """``(page_start, page_end, line_start, line_end)`` of ``[start, end)``: the pages of the
    blocks it touches, and its lines — exact inside a block that keeps its source lines, so
    a chunk of a 300-line listing cites its own lines, not the listing's."""
    first = max(0, bisect_right(offsets, start) - 1)
    last = max(first, bisect_left(offsets, end) - 1)
    pages = [b.page for b in blocks[first : last + 1] if b.page is not None]
    last_pages = [b.last_page for b in blocks[first : last + 1] if b.last_page is not None]
    starts = [b.line_start for b in blocks[first : last + 1] if b.line_start is not None]
    ends = [b.line_end for b in blocks[first : last + 1] if b.line_end is not None]
    line_start = min(starts) if starts else None
    line_end = max(ends) if ends else None
    if line_start is not None and blocks[first].line_start == line_start:
        line_start = lines.line(first, start - offsets[first]) or line_start
    if line_end is not None and blocks[last].line_end == line_end:
        line_end = lines.line(last, end - 1 - offsets[last]) or line_end
    return (
        min(pages) if pages else None,
        max(last_pages) if last_pages else None,
        line_start,
        line_end,
    )
