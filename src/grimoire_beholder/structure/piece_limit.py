"""The embedding model's bound on a chunk: :class:`PieceLimit`, and chunk ends cut back to it.

A chunk must fit the model's window, counted in the model's own word pieces (see
``ingest.build.piece_limit``). These functions move a chunk's end (or the next chunk's
start) so that the bound holds for any text, code and CJK included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from grimoire_beholder.structure.chunk_breaks import skip_space, trim

_SPACE = re.compile(r"\s")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class PieceLimit:
    """The embedding model's measure of a text (``count``) and the most a chunk may hold."""

    count: Callable[[str], int]
    most: int


def fit_end(text: str, start: int, end: int, limit: PieceLimit) -> int:
    """The furthest word end ``<= end`` such that ``text[start:end]`` holds at most
    ``limit.most`` pieces, counted word by word (a text is nearly always the sum of its
    words); inside the first word when that word alone is too long (a run of CJK, a blob)."""
    used = 0
    fitted = start
    for word in _WORD.finditer(text, start, end):
        used += limit.count(word.group())
        if used > limit.most:
            break
        fitted = word.end()
    else:
        return end
    if fitted > start:
        return fitted
    low, high = start + 1, end  # a first word too long by itself: bisect its characters
    while low < high:
        middle = (low + high + 1) // 2
        if limit.count(text[start:middle]) <= limit.most:
            low = middle
        else:
            high = middle - 1
    return low


def within(text: str, start: int, end: int, limit: PieceLimit) -> int:
    """``end``, or less until ``text[start:end]`` (trimmed) holds at most ``limit.most``
    pieces: the check on the chunk as it will be embedded, whatever boundary was chosen."""
    while end - start > 1:
        first, last = trim(text, start, end)
        if limit.count(text[first:last]) <= limit.most:
            break
        space = _SPACE.search(text[start:end - 1][::-1])
        end = end - 1 - space.start() if space is not None else end - 1
        end = max(end, start + 1)
    return end


def overlap_within_share(text: str, start: int, end: int, nxt: int, chunk_size: int,
                          chunk_overlap: int) -> int:
    """``nxt``, or a later word start so that the overlap is at most twice the configured
    share (``chunk_overlap / chunk_size``) of the chunk ``[start, end)``. The overlap is
    counted in words; a chunk cut short by the piece limit (minified code, blobs: many
    pieces per word) holds few words, and without this the next chunk began a word or two
    after this one (x-fit F1). Prose chunks overlap less than this and are unchanged."""
    most = (end - start) * min(chunk_size, 2 * chunk_overlap) // chunk_size
    least = end - most
    if nxt >= least:
        return nxt
    if least > start and text[least - 1].isspace():
        return skip_space(text, least)
    space = _SPACE.search(text, least, end)
    return skip_space(text, space.start()) if space is not None else end
