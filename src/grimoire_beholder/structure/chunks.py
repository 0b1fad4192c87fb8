"""Split a section's text into overlapping, retrieval-sized chunks.

Every chunk is an exact slice ``section.text[char_start:char_end]`` so a hit can always be
located and highlighted in the stored section text. Chunks aim at ``chunk_size`` approximate
tokens and start about ``chunk_overlap`` tokens before the previous chunk ended, so a fact
that straddles a boundary is whole in at least one chunk.

Boundaries are chosen in order of preference: a paragraph break, a sentence end, a line
break, a word break, and (only for text without any whitespace, e.g. a base64 blob) a hard
cut. The work per chunk is bounded by the chunk's own size (bounded ``str.split``, ``rfind``), so a
50 MB single-paragraph text chunks in linear time and without per-word Python lists.

With a :class:`PieceLimit` (the embedding model's own count of word pieces and the most a
chunk may hold, see ``ingest.build.piece_limit``) no chunk holds more pieces than that: its
window is cut back word by word before a boundary is chosen, and the chosen chunk is
counted again, so the bound holds for any text, code and CJK included. Without one (a model
whose tokenizer is unknown, e.g. through Ollama) chunks are sized in approximate tokens only.

Whatever the sizes, no chunk holds more than :data:`MAX_CHUNK_CHARS` characters: a chunk is
what a search hit returns (``search.passages`` widens a shorter one, never past that), so a
chunk cut longer — long words or URLs, tables, code, no piece limit, a large ``chunk_size``
— is cut again inside that many characters; every other chunk is cut as it would be anyway.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from grimoire_beholder.parse.document import Block, ParsedSection
from grimoire_beholder.structure import MAX_CHUNK_CHARS as MAX_CHUNK_CHARS  # re-exported
from grimoire_beholder.structure.tokens import approx_tokens

# One approximate token is 3/4 of a whitespace-separated word (see tokens.py).
_WORDS_PER_TOKEN = 0.75
# Characters per token we never expect to exceed in real text: caps a window in text that
# has no spaces at all (CJK, minified data) before any token counting happens.
_MAX_CHARS_PER_TOKEN = 10
# A boundary is only taken if the chunk keeps at least this share of its window; otherwise
# a paragraph break near the start would produce a string of tiny chunks.
_MIN_FILL = 0.5
_RUNT_SHARE = 0.25
_MERGE_LIMIT = 1.25
_COUNT_PIECE = 1 << 20

_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
_WORD = re.compile(r"\S+")
_NEWLINE = re.compile("\n")
_SENTENCE_END = re.compile(r"(?:[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[”’」』）]*)")
# The same two patterns for text read backwards (to find the *last* sentence end quickly).
_REV_SENTENCE_END = re.compile(r"\s[\"'”’)\]]*[.!?…]")
_REV_CJK_SENTENCE_END = re.compile(r"[”’」』）]*[。！？]")


@dataclass(frozen=True)
class PieceLimit:
    """The embedding model's measure of a text (``count``) and the most a chunk may hold."""

    count: Callable[[str], int]
    most: int


@dataclass
class ChunkDraft:
    """A chunk before it is stored: its text, where it sits in the section, and its source span."""

    text: str
    char_start: int
    char_end: int
    approx_tokens: int
    page_start: int | None = None
    page_end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


def _tokens(piece: str) -> int:
    # ASCII text has no CJK, so the estimate is just words * 4/3; str.split is several times
    # faster than a regex findall and defines whitespace identically.
    if piece.isascii():
        return round(len(piece.split()) * 4 / 3)
    return approx_tokens(piece)


def count_tokens(text: str) -> int:
    """approx_tokens, fast for ASCII and without building a list of every word of a huge text.

    Counting materialises all words at once; for a 50 MB paragraph that is hundreds of
    megabytes, so large texts are counted in ~1 MB pieces cut at whitespace.
    """
    if len(text) <= _COUNT_PIECE:
        return _tokens(text)
    total = 0
    start = 0
    while start < len(text):
        stop = min(len(text), start + _COUNT_PIECE)
        if stop < len(text):
            space = _SPACE.search(text, stop, min(len(text), stop + _COUNT_PIECE))
            stop = space.start() if space else min(len(text), stop + _COUNT_PIECE)
        total += _tokens(text[start:stop])
        start = stop
    return total


def _skip_space(text: str, pos: int) -> int:
    match = _NON_SPACE.search(text, pos)
    return match.start() if match else len(text)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return start, start
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def _window_end(text: str, start: int, chunk_size: int, most_chars: int) -> int:
    """End of the longest stretch from ``start`` holding about ``chunk_size`` tokens and at
    most ``most_chars`` characters."""
    words = max(1, int(chunk_size * _WORDS_PER_TOKEN))
    cap = min(len(text), start + most_chars)
    piece = text[start:cap]
    # split() stops after ``words`` words and hands back the untouched rest: C speed, no regex.
    parts = piece.split(None, words)
    kept = len(piece) - len(parts[-1]) if len(parts) > words else len(piece)
    end = start + len(piece[:kept].rstrip())
    if piece.isascii():
        return end  # split() already bounded the word count, which is the whole estimate
    # Scripts without spaces count one token per character; shrink until it fits.
    for _ in range(6):
        tokens = _tokens(text[start:end])
        if tokens <= chunk_size or end - start <= 1:
            break
        end = start + max(1, (end - start) * chunk_size // tokens)
    return end


def _last_sentence_end(text: str, floor: int, end: int) -> int | None:
    """Position just after the last sentence end in ``text[floor:end]``, searched backwards."""
    stop = min(len(text), end + 1)  # one more char: the space that confirms a sentence end
    rev = text[floor:stop][::-1]
    best: int | None = None
    spaced = _REV_SENTENCE_END.search(rev)
    if spaced is not None:
        best = stop - 1 - spaced.start()  # the whitespace position == exclusive sentence end
    cjk = None if rev.isascii() else _REV_CJK_SENTENCE_END.search(rev)
    if cjk is not None:
        position = stop - cjk.start()
        best = position if best is None else max(best, position)
    return best if best is not None and best <= end else None


def _best_break(text: str, start: int, end: int, paragraphs: bool = True) -> int:
    """The preferred boundary in the back part of ``text[start:end]``: paragraph, sentence,
    line, word, else ``end`` itself (a hard cut). Without ``paragraphs`` (window mode) the
    paragraph and line preferences are skipped: prose windows end at sentences, so their
    size stays even however the text happens to be broken into lines."""
    if end >= len(text):
        return end
    floor = start + int((end - start) * _MIN_FILL)
    # Look one step past ``end`` too: a window that stops right before a break should use it.
    paragraph = text.rfind("\n\n", floor, min(len(text), end + 2)) if paragraphs else -1
    if paragraph > start:
        return paragraph
    sentence = _last_sentence_end(text, floor, end)
    if sentence is not None and sentence > start:
        return sentence
    line = text.rfind("\n", floor, min(len(text), end + 1)) if paragraphs else -1
    if line > start:
        return line
    if text[end].isspace():
        return end
    space = _SPACE.search(text[floor:end][::-1])
    if space is not None and end - space.start() > start:
        return end - space.start()
    return end


def _words_back(text: str, low: int, end: int, words: int) -> int | None:
    """Start of the ``words``-th word before ``end`` (or of the earliest whole word after
    ``low``); None when no whole word lies in ``[low, end)``."""
    piece = text[low:end]
    parts = piece.rsplit(None, words)
    if not parts:
        return None
    pos = _skip_space(text, low + len(parts[0])) if len(parts) > words else _skip_space(text, low)
    if pos == low and low > 0 and not text[low - 1].isspace():
        # The earliest word was cut in half by ``low``: step to the next whole word.
        space = _SPACE.search(text, low, end)
        if space is None:
            return None
        pos = _skip_space(text, space.start())
    return pos if pos < end else None


def _overlap_start(text: str, start: int, end: int, chunk_overlap: int) -> int:
    """Where the next chunk starts: about ``chunk_overlap`` tokens before ``end``, on a
    sentence start if one is near, else on a word start; ``end`` when there is no overlap."""
    if chunk_overlap <= 0:
        return end
    words = max(1, int(chunk_overlap * _WORDS_PER_TOKEN))
    low = max(start + 1, end - chunk_overlap * _MAX_CHARS_PER_TOKEN)
    pos = _words_back(text, low, end, words)
    if pos is None:
        return end
    # Prefer a sentence (or line) start, as long as it keeps at least half the wanted overlap.
    latest = _words_back(text, pos, end, max(1, words // 2)) or pos
    found = [
        _skip_space(text, match.end())
        for match in _SENTENCE_END.finditer(text, max(start, pos - 8), latest)
    ]
    newline = text.find("\n", pos, latest)
    if newline != -1:
        found.append(_skip_space(text, newline))
    found = [s for s in found if pos <= s <= latest]
    return min(found) if found else pos


_Span = tuple[int | None, int | None, int | None, int | None]


class _LineMaps:
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


def _span_of(blocks: list[Block], offsets: list[int], start: int, end: int,
             lines: _LineMaps) -> _Span:
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


def _fit_end(text: str, start: int, end: int, limit: PieceLimit) -> int:
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


def _within(text: str, start: int, end: int, limit: PieceLimit) -> int:
    """``end``, or less until ``text[start:end]`` (trimmed) holds at most ``limit.most``
    pieces: the check on the chunk as it will be embedded, whatever boundary was chosen."""
    while end - start > 1:
        first, last = _trim(text, start, end)
        if limit.count(text[first:last]) <= limit.most:
            break
        space = _SPACE.search(text[start:end - 1][::-1])
        end = end - 1 - space.start() if space is not None else end - 1
        end = max(end, start + 1)
    return end


def _overlap_within_share(text: str, start: int, end: int, nxt: int, chunk_size: int,
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
        return _skip_space(text, least)
    space = _SPACE.search(text, least, end)
    return _skip_space(text, space.start()) if space is not None else end


def _chunk_end(text: str, pos: int, chunk_size: int, paragraphs: bool,
               limit: PieceLimit | None, most_chars: int) -> int:
    """Where the chunk starting at ``pos`` ends: its window (``most_chars`` at most), cut
    back to the piece limit, then to the preferred boundary (``_best_break``)."""
    end = _window_end(text, pos, chunk_size, most_chars)
    if limit is not None:
        end = _fit_end(text, pos, end, limit)
    at_tail = _skip_space(text, end) >= len(text)
    end = len(text) if at_tail else _best_break(text, pos, end, paragraphs)
    if limit is not None:
        end = _within(text, pos, end, limit)
    return end


def _spans(text: str, chunk_size: int, chunk_overlap: int, paragraphs: bool,
           limit: PieceLimit | None, most_chars: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = _skip_space(text, 0)
    while pos < len(text):
        end = _chunk_end(text, pos, chunk_size, paragraphs, limit,
                         chunk_size * _MAX_CHARS_PER_TOKEN)
        first, last = _trim(text, pos, end)
        if last - first > most_chars:  # cut again inside the bound (module docstring)
            end = _chunk_end(text, pos, chunk_size, paragraphs, limit, most_chars)
        spans.append(_trim(text, pos, end))
        if end >= len(text):
            break
        following = _skip_space(text, end)
        if following >= len(text):
            break
        nxt = _overlap_start(text, pos, end, chunk_overlap)
        if limit is not None:
            nxt = _overlap_within_share(text, pos, end, nxt, chunk_size, chunk_overlap)
        pos = nxt if pos < nxt < end else following
    return spans


def _merge_runt(text: str, spans: list[tuple[int, int]], chunk_size: int,
                limit: PieceLimit | None, most_chars: int) -> None:
    """Fold a tiny last chunk into its predecessor when the result stays near target size
    (and within the piece limit)."""
    if len(spans) < 2:
        return
    last_start, last_end = spans[-1]
    if count_tokens(text[last_start:last_end]) >= chunk_size * _RUNT_SHARE:
        return
    prev_start = spans[-2][0]
    if last_end - prev_start > min(chunk_size * _MAX_CHARS_PER_TOKEN, most_chars):
        return  # hard-cut text (no spaces), or over the bound: keep the character cap
    if count_tokens(text[prev_start:last_end]) > chunk_size * _MERGE_LIMIT:
        return
    if limit is None or limit.count(text[prev_start:last_end]) <= limit.most:
        spans[-2:] = [(prev_start, last_end)]


def chunk_section(section: ParsedSection, chunk_size: int, chunk_overlap: int, *,
                  paragraphs: bool = True, limit: PieceLimit | None = None,
                  most_chars: int | None = MAX_CHUNK_CHARS) -> list[ChunkDraft]:
    """Chunks of ``section.text`` covering every non-space character, in order.

    ``paragraphs=False`` is window mode (see ``structure.modes``): the same overlapping
    windows, but cut at sentence ends rather than at paragraph or line breaks. ``limit``
    bounds every chunk in the embedding model's pieces as well, ``most_chars`` in characters
    (module docstring; None: only ``chunk_size`` bounds them, for pieces that are not
    chunks, such as the synthetic sections of ``structure.sections``).
    """
    text = section.text
    if not text.strip():
        return []
    chunk_size = max(1, chunk_size)
    chunk_overlap = max(0, min(chunk_overlap, chunk_size - 1))
    if limit is not None:
        limit = PieceLimit(limit.count, max(1, limit.most))
    chars = chunk_size * _MAX_CHARS_PER_TOKEN
    chars = chars if most_chars is None else max(1, min(chars, most_chars))
    if (len(text) <= chunk_size * _MAX_CHARS_PER_TOKEN and approx_tokens(text) <= chunk_size
            and len(text.strip()) <= chars
            and (limit is None or limit.count(text.strip()) <= limit.most)):
        spans = [_trim(text, 0, len(text))]
    else:
        spans = _spans(text, chunk_size, chunk_overlap, paragraphs, limit, chars)
        _merge_runt(text, spans, chunk_size, limit, chars)
    offsets: list[int] = []
    cursor = 0
    for block in section.blocks:
        offsets.append(cursor)
        cursor += len(block.text) + 2
    drafts: list[ChunkDraft] = []
    lines = _LineMaps(section.blocks)
    for start, end in spans:
        if start >= end:
            continue
        piece = text[start:end]
        page_start, page_end, line_start, line_end = _span_of(
            section.blocks, offsets, start, end, lines
        )
        drafts.append(
            ChunkDraft(piece, start, end, count_tokens(piece),
                       page_start, page_end, line_start, line_end)
        )
    return drafts
