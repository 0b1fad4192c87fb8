"""Which words a library writes as names, for questions whose case says nothing.

The confidence's names signal (``search/confidence.py``) reads names from the question's
capitals: "What architect designed the stadium at Tamuning?" names Tamuning. A question
typed in lower case ("what killed julia stoner"), in capitals or in Title Case marks no
name by its case, so there the library is asked instead: a word of the question counts as
a name when the library's own text writes it capitalised inside a sentence and seldom in
lower case (``Stoner`` yes; ``engineer``, ``JSON`` no) — the same words the question's
capitals would have marked, had the user typed them. A word the library never writes is
not known to be a name, and is not counted as one: in lower case, "tamuning" and
"webhook" look alike (counting such words flagged many more answerable questions; README,
"Not in the library").

Only words the confidence needs are asked about (those of the question found in none of
the hits), each once per library state: :class:`WrittenNames` keeps the answers until the
engine sees the library change (:meth:`WrittenNames.clear`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from grimoire_beholder.search.confidence import _MARKS, _inside_sentence
from grimoire_beholder.store import word_texts

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store

WORDS = 4  # words asked about per search, the longest
CHUNKS = 8  # chunk texts read per word
OCCURRENCES = 8  # occurrences inside sentences looked at per word
CAPITAL_SHARE = 0.8  # of the word's occurrences inside sentences, at least this many capitalised
_MAX_KNOWN = 10_000


def written_as_name(word: str, texts: Sequence[str]) -> bool | None:
    """Whether ``texts`` write ``word`` (lower case, accents folded) as a name: capitalised
    and not all capitals (``Holmes``, ``GitHub``; not ``JSON``) inside a sentence — a
    word starting a sentence or a line tells nothing — in at least :data:`CAPITAL_SHARE`
    of its first :data:`OCCURRENCES` occurrences inside sentences. None when it has no
    occurrence inside a sentence. Accents are dropped only from texts where the word is
    not found as it is ("tzu" in "Sun Tzŭ")."""
    text = "\n".join(texts)
    low = text.lower()
    if not text.isascii() and (word not in low or len(low) != len(text)):
        text = _MARKS.drop(unicodedata.normalize("NFKD", text))
        low = text.lower()
        if len(low) != len(text):  # a letter whose lower case is longer ("İ"): not read
            return None
    capital = lower = 0
    size, at = len(word), low.find(word)
    while at != -1 and capital + lower < OCCURRENCES:
        end = at + size
        if ((at == 0 or not low[at - 1].isalnum()) and (end == len(low) or not low[end].isalnum())
                and not _starts_sentence(text[max(0, at - 16):at])):
            found = text[at:end]
            if found.islower():
                lower += 1
            elif found[0].isupper() and not found.isupper():
                capital += 1
        at = low.find(word, end)
    if capital + lower == 0:
        return None
    return capital > 0 and capital >= CAPITAL_SHARE * (capital + lower)


def _starts_sentence(before: str) -> bool:
    """Whether a word after ``before`` (the text's last few characters before it) may be
    capitalised for its place alone: first of the text, of a line or of a sentence (after
    ``.``, ``!`` or ``?``, opening quotes and brackets aside; "Dr." and "J." end none). After
    ``;``, ``:`` or ``,`` a capital marks a name ("Noida, India; Hortolandia and…")."""
    kept = before.rstrip()
    if not kept or "\n" in before[len(kept):]:
        return True
    kept = kept.rstrip("\"'“‘([")
    if not kept or kept[-1] in "!?":
        return True
    return kept[-1] == "." and not _inside_sentence(kept)


class WrittenNames:
    """``names(words)``: those of ``words`` the library writes as names
    (:func:`written_as_name` over the first :data:`CHUNKS` chunks holding each), the
    answers kept per word until :meth:`clear`. Only the :data:`WORDS` longest are asked
    about (each costs an FTS5 query): a question with more words the top hit lacks matches
    too little of it for a missing name to weigh (the feature is its coverage squared)."""

    def __init__(self, conn: Store) -> None:
        self._conn = conn
        self._known: dict[str, bool] = {}

    def clear(self) -> None:
        self._known.clear()

    def __call__(self, words: Sequence[str]) -> list[str]:
        out = []
        for word in sorted(words, key=lambda w: (-len(w), w))[:WORDS]:
            known = self._known.get(word)
            if known is None:
                if len(self._known) >= _MAX_KNOWN:
                    self._known.clear()
                texts = word_texts.texts_with_word(self._conn, word, CHUNKS)
                known = self._known[word] = bool(written_as_name(word, texts))
            if known:
                out.append(word)
        return out
