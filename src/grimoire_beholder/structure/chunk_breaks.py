"""Where, in a section's text, a chunk may end and the next one begin.

Positions only: each function takes the text and character offsets and returns an offset.
A chunk's window holds about ``chunk_size`` approximate tokens (:func:`window_end`); its end
is the preferred boundary in the window's back part — a paragraph break, a sentence end, a
line break, a word break, else a hard cut (:func:`best_break`); the next chunk starts about
``chunk_overlap`` tokens earlier, on a sentence or word start (:func:`overlap_start`). The
work is bounded by the window's own size (bounded ``str.split``, ``rfind``).
"""

from __future__ import annotations

import re

from grimoire_beholder.structure.tokens import quick_tokens

# One approximate token is 3/4 of a whitespace-separated word (see tokens.py).
_WORDS_PER_TOKEN = 0.75
# Characters per token we never expect to exceed in real text: caps a window in text that
# has no spaces at all (CJK, minified data) before any token counting happens.
MAX_CHARS_PER_TOKEN = 10
# A boundary is only taken if the chunk keeps at least this share of its window; otherwise
# a paragraph break near the start would produce a string of tiny chunks.
_MIN_FILL = 0.5

_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
_SENTENCE_END = re.compile(r"(?:[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[”’」』）]*)")
# The same two patterns for text read backwards (to find the *last* sentence end quickly).
_REV_SENTENCE_END = re.compile(r"\s[\"'”’)\]]*[.!?…]")
_REV_CJK_SENTENCE_END = re.compile(r"[”’」』）]*[。！？]")


def skip_space(text: str, pos: int) -> int:
    """The first non-space position at or after ``pos`` (``len(text)`` if none)."""
    match = _NON_SPACE.search(text, pos)
    return match.start() if match else len(text)


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without its leading and trailing whitespace (empty at ``start``)."""
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return start, start
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def window_end(text: str, start: int, chunk_size: int, most_chars: int) -> int:
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
        tokens = quick_tokens(text[start:end])
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


def best_break(text: str, start: int, end: int, paragraphs: bool = True) -> int:
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
    pos = skip_space(text, low + len(parts[0])) if len(parts) > words else skip_space(text, low)
    if pos == low and low > 0 and not text[low - 1].isspace():
        # The earliest word was cut in half by ``low``: step to the next whole word.
        space = _SPACE.search(text, low, end)
        if space is None:
            return None
        pos = skip_space(text, space.start())
    return pos if pos < end else None


def overlap_start(text: str, start: int, end: int, chunk_overlap: int) -> int:
    """Where the next chunk starts: about ``chunk_overlap`` tokens before ``end``, on a
    sentence start if one is near, else on a word start; ``end`` when there is no overlap."""
    if chunk_overlap <= 0:
        return end
    words = max(1, int(chunk_overlap * _WORDS_PER_TOKEN))
    low = max(start + 1, end - chunk_overlap * MAX_CHARS_PER_TOKEN)
    pos = _words_back(text, low, end, words)
    if pos is None:
        return end
    # Prefer a sentence (or line) start, as long as it keeps at least half the wanted overlap.
    latest = _words_back(text, pos, end, max(1, words // 2)) or pos
    found = [
        skip_space(text, match.end())
        for match in _SENTENCE_END.finditer(text, max(start, pos - 8), latest)
    ]
    newline = text.find("\n", pos, latest)
    if newline != -1:
        found.append(skip_space(text, newline))
    found = [s for s in found if pos <= s <= latest]
    return min(found) if found else pos


_Span = tuple[int | None, int | None, int | None, int | None]
