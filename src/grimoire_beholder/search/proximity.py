"""Term proximity: how much of the question a chunk answers *in one place*.

Why: in a long story or chapter, neighbouring passages share the people, places and words
of the question, so both arms score a whole scene alike; the passage that holds the answer
is usually the one where the question's rarer words come *together*. BM25 and the
embedding read a chunk as a bag; this looks for the densest window.

For the head of the fused list: the query's content words (stop words dropped, a crude
stem: the first :data:`STEM` letters) are weighted by how rare they are among these
candidates (a term in every candidate tells them apart not at all), and each chunk gets the
best weighted share of those terms found within any :data:`WINDOW` consecutive words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from grimoire_beholder.search.keyword import STOP_WORDS

WINDOW = 40  # words
STEM = 5
_WORD = re.compile(r"[^\W_]+")


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
    total = sum(term_weights.values())
    if total <= 0:
        return 0.0
    positions = [(i, s) for i, s in enumerate(stemmed) if term_weights.get(s, 0.0) > 0]
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
    stemmed = {chunk_id: _stems(text) for chunk_id, text in texts.items()}  # once each
    term_weights = _weights(stems, list(stemmed.values()))
    return {chunk_id: _best_window(words, term_weights) for chunk_id, words in stemmed.items()}
