"""The query's words marked in a passage, and the excerpt of a hit worth showing.

Everything returned is HTML-safe ``Markup``: the passage is escaped piece by piece and only
the ``<mark>`` tags this module writes are markup. A word matches a query word ignoring
case, or when it starts with a query word of four letters or more (``keepers`` for
``keeper``), the way a reader expects a search to have matched.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from grimoire_beholder.text import STOP_WORDS, WORD_TOKEN

EXCERPT_CHARS = 700
_LEAD = 160  # characters shown before the first marked word


def query_words(query: str) -> list[str]:
    """The query's words worth marking: no stop words, no single letters; lower case."""
    words = [w.lower() for w in WORD_TOKEN.findall(query)]
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1]
    return list(dict.fromkeys(kept or words))


def _matcher(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alternatives = [re.escape(w) + (r"[^\W_]*" if len(w) >= 4 else "") for w in
                    sorted(words, key=len, reverse=True)]
    return re.compile(r"(?<![^\W_])(?:" + "|".join(alternatives) + r")(?![^\W_])",
                      re.IGNORECASE)


def mark(text: str, words: list[str]) -> Markup:
    """``text`` escaped, with every word matching one of ``words`` in ``<mark>``."""
    pattern = _matcher(words)
    if pattern is None:
        return escape(text)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        out += (escape(text[pos:m.start()]), "<mark>", escape(m.group(0)), "</mark>")
        pos = m.end()
    out.append(escape(text[pos:]))
    return Markup("".join(out))  # every piece of text in it went through escape()


def excerpt(text: str, words: list[str], limit: int = EXCERPT_CHARS) -> str:
    """About ``limit`` characters of ``text`` starting a little before the first word that
    matches, cut on word boundaries, with ``…`` where it was cut (the whole text if short)."""
    if len(text) <= limit:
        return text
    pattern = _matcher(words)
    found = pattern.search(text) if pattern else None
    start = max(0, found.start() - _LEAD) if found else 0
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 40 else start
    end = min(len(text), start + limit)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + limit // 2 else end
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")
