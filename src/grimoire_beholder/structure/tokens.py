"""A cheap, model-free token estimate used for sizing sections and chunks.

Roughly one token per 0.75 English words, like common BPE tokenizers; good enough to size
chunks without loading a tokenizer. Scripts without spaces (CJK, kana, Hangul, Thai:
``text.NO_SPACE_CHARS``) count one token per character.
"""

from __future__ import annotations

import re

from grimoire_beholder.text import NO_SPACE_CHARS

_WORD = re.compile(r"\S+")
_NO_SPACE = re.compile(f"[{NO_SPACE_CHARS}]")


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text`` (0 for blank text)."""
    chars = len(_NO_SPACE.findall(text))
    words = len(_WORD.findall(_NO_SPACE.sub(" ", text))) if chars else len(_WORD.findall(text))
    return round(words * 4 / 3) + chars
