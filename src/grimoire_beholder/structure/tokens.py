"""A cheap, model-free token estimate used for sizing sections and chunks.

Roughly one token per 0.75 English words, like common BPE tokenizers; good enough to size
chunks without loading a tokenizer. CJK text has no spaces, so each such character counts
as one token.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\S+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text`` (0 for blank text)."""
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(_CJK.sub(" ", text))) if cjk else len(_WORD.findall(text))
    return round(words * 4 / 3) + cjk
