"""A cheap, model-free token estimate used for sizing sections and chunks.

Roughly one token per 0.75 English words, like common BPE tokenizers; good enough to size
chunks without loading a tokenizer. Scripts without spaces (CJK, kana, Hangul, Thai:
``text.NO_SPACE_CHARS``) count one token per character. :func:`count_tokens` gives the same
estimate for a text of any size, fast for ASCII and in bounded memory.
"""

from __future__ import annotations

import re

from grimoire_beholder.text import NO_SPACE_CHARS

_WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s")
_COUNT_PIECE = 1 << 20
_NO_SPACE = re.compile(f"[{NO_SPACE_CHARS}]")


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text`` (0 for blank text)."""
    chars = len(_NO_SPACE.findall(text))
    words = len(_WORD.findall(_NO_SPACE.sub(" ", text))) if chars else len(_WORD.findall(text))
    return round(words * 4 / 3) + chars


def quick_tokens(piece: str) -> int:
    """:func:`approx_tokens`, faster for ASCII text."""
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
        return quick_tokens(text)
    total = 0
    start = 0
    while start < len(text):
        stop = min(len(text), start + _COUNT_PIECE)
        if stop < len(text):
            space = _SPACE.search(text, stop, min(len(text), stop + _COUNT_PIECE))
            stop = space.start() if space else min(len(text), stop + _COUNT_PIECE)
        total += quick_tokens(text[start:stop])
        start = stop
    return total
