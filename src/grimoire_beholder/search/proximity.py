"""Term proximity: how much of the question a chunk answers *in one place*.

Why: in a long story or chapter, neighbouring passages share the people, places and words
of the question, so both arms score a whole scene alike; the passage that holds the answer
is usually the one where the question's rarer words come *together*. BM25 and the
embedding read a chunk as a bag; this looks for the densest window.

For the head of the fused list: the query's content words (stop words dropped, a crude
stem: the first :data:`STEM` letters) are weighted by how rare they are among these
candidates (a term in every candidate tells them apart not at all), and each chunk gets the
best weighted share of those terms found within any :data:`WINDOW` consecutive words.

Cost: a chunk is not stemmed word by word in Python. Its words are found, joined and
lower-cased in C, and the query's stems are found in that text by ``str.find``
(:func:`_occurrences`), so the Python work grows with the matches, not with the text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import AnyStr

from grimoire_beholder.search.keyword import STOP_WORDS

WINDOW = 40  # words
STEM = 5
_WORD = re.compile(r"[^\W_]+")
_SEP = "\x00"  # never part of a word (``_WORD`` matches letters and digits only)
# ASCII text: letters and digits kept, everything else a space (``_WORD`` on ASCII).
_ASCII_WORDS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))


def _stems(text: str) -> list[str]:
    return [w.lower()[:STEM] for w in _WORD.findall(text)]


def query_stems(query: str) -> list[str]:
    """The query's content words, stemmed, each once, in order."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w[:STEM] for w in words if w not in STOP_WORDS and len(w) > 2]
    return list(dict.fromkeys(kept))


def weights(stems: Sequence[str], texts: Mapping[int, str]) -> dict[str, float]:
    """IDF of each query stem over the candidate texts (rarer among them = heavier)."""
    return _weights(stems, [_stems(text) for text in texts.values()])


def _weights(stems: Sequence[str], stemmed: Sequence[Sequence[str]]) -> dict[str, float]:
    docs = [set(words) for words in stemmed]
    n = len(docs)
    out = {}
    for stem in stems:
        df = sum(1 for d in docs if stem in d)
        out[stem] = math.log(1.0 + (n + 1) / (df + 0.5)) if df else 0.0
    return out


def best_window(text: str, term_weights: Mapping[str, float], window: int = WINDOW) -> float:
    """The largest share of the total term weight found within ``window`` words of text."""
    return _best_window(_stems(text), term_weights, window)


def _best_window(stemmed: Sequence[str], term_weights: Mapping[str, float],
                 window: int = WINDOW) -> float:
    return _share([(i, s) for i, s in enumerate(stemmed) if term_weights.get(s, 0.0) > 0],
                  term_weights, window)


Needle = tuple[str, bytes | None, str]


def _needles(stems: Sequence[str]) -> list[Needle]:
    """(what to find in ``_SEP``-framed text, the same in ASCII bytes or None, stem): a
    full-length stem starts a word, a shorter one is the whole word."""
    out = []
    for stem in stems:
        needle = _SEP + stem + ("" if len(stem) >= STEM else _SEP)
        out.append((needle, needle.encode("ascii") if needle.isascii() else None, stem))
    return out


def _occurrences(text: str, needles: Sequence[Needle]) -> list[tuple[int, str]]:
    """(word index, stem) of every word of ``text`` whose stem is wanted, in word order —
    what ``[(i, s) for i, s in enumerate(_stems(text)) if s in stems]`` gives, in C: each
    word is lower-cased on its own (joined by a separator no word contains, so
    ``str.lower``'s context rules see the same word boundaries) and found by its start.
    ASCII text (most of it) is split into words as bytes, without the regex."""
    if text.isascii():
        raw = b"\0" + b"\0".join(text.encode("ascii").translate(_ASCII_WORDS).lower()
                                 .split()) + b"\0"
        return _indexed(raw, b"\0", [(at, stem) for _, needle, stem in needles
                                     if needle is not None for at in _starts(raw, needle)])
    hay = _SEP + _SEP.join(_WORD.findall(text)).lower() + _SEP
    return _indexed(hay, _SEP, [(at, stem) for needle, _, stem in needles
                                for at in _starts(hay, needle)])


def _starts(hay: AnyStr, needle: AnyStr) -> Iterator[int]:
    at = hay.find(needle)
    while at != -1:
        yield at
        at = hay.find(needle, at + 1)


def _indexed(hay: AnyStr, sep: AnyStr, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(offset, stem) in framed text → (word index, stem) in word order: a word's index is
    the number of separators before its own."""
    found.sort()
    out, index, last = [], 0, 0
    for at, stem in found:
        index += hay.count(sep, last, at)
        last = at
        out.append((index, stem))
    return out


def _share(positions: Sequence[tuple[int, str]], term_weights: Mapping[str, float],
           window: int = WINDOW) -> float:
    """:func:`_best_window` over the (word index, stem) positions of weighted stems."""
    total = sum(term_weights.values())
    if total <= 0:
        return 0.0
    best = 0.0
    start = 0
    counts: dict[str, int] = {}
    for end in range(len(positions)):
        counts[positions[end][1]] = counts.get(positions[end][1], 0) + 1
        while positions[end][0] - positions[start][0] >= window:
            stem = positions[start][1]
            counts[stem] -= 1
            if not counts[stem]:
                del counts[stem]
            start += 1
        best = max(best, sum(term_weights[s] for s in counts))
    return best / total


def scores(query: str, texts: Mapping[int, str]) -> dict[int, float]:
    """Chunk id → best-window share (0..1) for the candidate chunks' texts."""
    stems = query_stems(query)
    if not stems or not texts:
        return {}
    needles = _needles(stems)
    found = {chunk_id: _occurrences(text, needles) for chunk_id, text in texts.items()}
    present = [{s for _, s in hits} for hits in found.values()]
    n = len(present)
    term_weights = {}
    for stem in stems:  # as _weights: IDF over the candidates
        df = sum(1 for d in present if stem in d)
        term_weights[stem] = math.log(1.0 + (n + 1) / (df + 0.5)) if df else 0.0
    return {chunk_id: _share(hits, term_weights) for chunk_id, hits in found.items()}
