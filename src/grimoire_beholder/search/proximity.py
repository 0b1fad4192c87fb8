"""Term proximity: how much of the question a chunk answers *in one place*.

Why: in a long story or chapter, neighbouring passages share the people, places and words
of the question, so both arms score a whole scene alike; the passage that holds the answer
is usually the one where the question's rarer words come *together*. BM25 and the
embedding read a chunk as a bag; this looks for the densest window.

For the head of the fused list: the query's content words (stop words dropped, a crude
stem: the first :data:`STEM` letters) are weighted by how rare they are among these
candidates (a term in every candidate tells them apart not at all), and each chunk gets the
best weighted share of those terms found within any :data:`WINDOW` consecutive words.

Cost: no chunk is stemmed word by word in Python. The head's chunks are read together as
one UTF-8 byte string, ASCII lower-cased, every other ASCII byte and every non-ASCII
character that is not a letter or digit (curly quotes, dashes) a space, whose words numpy
finds and reads eight bytes at a time, matching a word's first :data:`STEM` bytes (or a short
stem and the space ending it) as one integer (:func:`_byte_occurrences`); a non-ASCII
letter stays bytes of its word that no ASCII stem matches. Only when the query has a
non-ASCII stem, or a chunk a letter that lower-cases to ASCII, are the chunks holding
non-ASCII letters read one by one: their words found, joined and lower-cased in C and the
query's stems found by ``str.find`` (:func:`_text_occurrences`). Either way the Python work
grows with the matches, not with the text; ``tests/test_proximity.py`` holds both to the
word-by-word definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping, Sequence

import numpy as np

from grimoire_beholder.search.keyword import STOP_WORDS

WINDOW = 40  # words
STEM = 5
_WORD = re.compile(r"[^\W_]+")
_SEP = "\x00"  # never part of a word (``_WORD`` matches letters and digits only)
# UTF-8 text: ASCII letters and digits kept and lower-cased, other ASCII bytes a space, the
# bytes of other characters kept (then blanked unless the character is a letter or digit).
_LOWER_WORDS = bytes(ord(chr(c).lower()) if c < 128 and chr(c).isalnum() else
                     32 if c < 128 else c for c in range(256))
# The same, every non-ASCII byte a space but 0xFF (never in UTF-8): what a non-ASCII letter
# or digit is written as before the table is applied (``_byte_occurrences``).
_LOWER_ASCII_WORDS = _LOWER_WORDS[:128] + b" " * 127 + b"\xff"
_ASCII = bytes(range(128))
assert STEM < 8  # a full stem and the byte after a shorter one fit in eight bytes
# The letters whose lower case holds an ASCII letter (İ → i̇, the Kelvin sign → k): a word
# holding one is stemmed by ``str.lower`` (tests/test_proximity.py checks the list).
LOWER_TO_ASCII = frozenset("\u0130\u212a")


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


Needle = tuple[str, str]


def _needles(stems: Sequence[str]) -> list[Needle]:
    """(what to find in ``_SEP``-framed text, stem): a full-length stem starts a word, a
    shorter one is the whole word."""
    return [(_SEP + stem + ("" if len(stem) >= STEM else _SEP), stem) for stem in stems]


def _text_occurrences(text: str, needles: Sequence[Needle]) -> list[tuple[int, str]]:
    """(word index, stem) of every word of ``text`` whose stem is wanted, in word order —
    what ``[(i, s) for i, s in enumerate(_stems(text)) if s in stems]`` gives, in C: each
    word is lower-cased on its own (joined by a separator no word contains, so
    ``str.lower``'s context rules see the same word boundaries) and found by its start."""
    hay = _SEP + _SEP.join(_WORD.findall(text)).lower() + _SEP
    return _indexed(hay, _SEP, [(at, stem) for needle, stem in needles
                                for at in _starts(hay, needle)])


def _occurrences(texts: Sequence[str], stems: Sequence[str]) -> list[list[tuple[int, str]]]:
    """:func:`_text_occurrences` of each text: all at once as UTF-8 bytes
    (:func:`_byte_occurrences`), except, one by one, the texts holding a non-ASCII letter
    or digit when a stem is not ASCII or such a letter lower-cases to ASCII."""
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    others: set[str] = set()  # the non-ASCII characters of the texts
    slow: set[int] = set()
    if not all(map(bytes.isascii, encoded)):
        others = set(b" ".join(encoded).translate(None, _ASCII).decode("utf-8",
                                                                          "surrogatepass"))
        letters = {c for c in others if c.isalnum()}
        if letters and (letters & LOWER_TO_ASCII or not all(map(str.isascii, stems))):
            slow = _non_ascii_words(texts, " ".join(texts))
    out: list[list[tuple[int, str]]] = [[] for _ in texts]
    if slow:
        needles = _needles(stems)
        for n in slow:
            out[n] = _text_occurrences(texts[n], needles)
            encoded[n] = b""
    _byte_occurrences(encoded, others, stems, out)
    return out


def _non_ascii_words(texts: Sequence[str], joined: str) -> set[int]:
    """Indexes of the ``texts`` (``joined`` by one space) holding a non-ASCII letter or
    digit (what ``_WORD`` matches: ``str.isalnum``)."""
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    at = np.flatnonzero(points > 127)
    values, inverse = np.unique(points[at], return_inverse=True)
    word = np.array([chr(v).isalnum() for v in values.tolist()], dtype=bool)
    at = at[word[inverse.reshape(-1)]]
    ends = np.cumsum([len(text) + 1 for text in texts])
    return set(np.searchsorted(ends, at, side="right").tolist())


def _byte_occurrences(encoded: Sequence[bytes], others: Collection[str], stems: Sequence[str],
                      out: list[list[tuple[int, str]]]) -> None:
    """Add to ``out[n]`` the (word index, stem) of each word of the UTF-8 text
    ``encoded[n]`` whose stem is one of the ASCII ``stems``, for texts whose non-ASCII
    letters and digits all lower-case to non-ASCII: such a letter stays bytes of its word
    that no ASCII stem matches, and the texts' other non-ASCII characters (``others`` holds
    every non-ASCII character of the texts) are word breaks, as in ``_WORD``. Whichever
    kind is fewer is rewritten, one ``bytes.replace`` a character: the breaks as spaces, or
    the letters as 0xFF bytes and then every other non-ASCII byte a space. Each word's
    first eight bytes (the text padded with spaces) are one little-endian integer: a
    full-length stem is its first :data:`STEM` bytes, a shorter one the whole word and the
    space after it."""
    by_width: dict[int, dict[int, str]] = {}
    for stem in stems:
        if stem.isascii():
            key = (stem + ("" if len(stem) >= STEM else " ")).encode("ascii")
            by_width.setdefault(len(key), {})[int.from_bytes(key, "little")] = stem
    if not by_width:
        return
    letters = [c for c in others if c.isalnum()]
    raw = b" " + b" ".join(encoded) + b" " * 8
    if len(letters) * 2 <= len(others):  # no more letters than breaks
        for char in letters:  # UTF-8 sequences only match whole characters
            code = char.encode("utf-8", "surrogatepass")
            raw = raw.replace(code, b"\xff" * len(code))
        raw = raw.translate(_LOWER_ASCII_WORDS)
    else:
        raw = raw.translate(_LOWER_WORDS)
        for char in others:
            if not char.isalnum():
                code = char.encode("utf-8", "surrogatepass")
                raw = raw.replace(code, b" " * len(code))
    buf = np.frombuffer(raw, dtype=np.uint8)
    space = buf == 32
    starts = np.flatnonzero(space[:-8] & ~space[1:-7]) + 1  # the first byte of each word
    heads = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))[starts]
    found: list[np.ndarray] = []  # the words matching each stem in ``names``
    names: list[str] = []
    for width, keys in by_width.items():
        masked = heads & np.uint64((1 << (8 * width)) - 1)
        for value, stem in keys.items():
            words = (masked == np.uint64(value)).nonzero()[0]
            if words.size:
                found.append(words)
                names.append(stem)
    if not found:
        return
    hits = np.concatenate(found)
    which = np.repeat(np.arange(len(found)), [words.size for words in found])
    order = np.argsort(hits, kind="stable")  # word order
    hits, which = hits[order], which[order]
    bounds = np.cumsum([1, *(len(text) + 1 for text in encoded)])  # where each text starts
    text_of = np.searchsorted(bounds, starts[hits], side="right") - 1
    first_word = np.searchsorted(starts, bounds[:-1])
    for n, index, name in zip(text_of.tolist(), (hits - first_word[text_of]).tolist(),
                              which.tolist(), strict=True):
        out[n].append((index, names[name]))


def _starts(hay: str, needle: str) -> Iterator[int]:
    at = hay.find(needle)
    while at != -1:
        yield at
        at = hay.find(needle, at + 1)


def _indexed(hay: str, sep: str, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
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
    if total <= 0 or not positions:
        return 0.0
    if positions[-1][0] - positions[0][0] < window:
        # one window holds them all: nothing leaves it, and the sum over all its stems (in
        # the order they came, as below) is the largest (adding weights ≥ 0 never lowers a
        # rounded sum)
        return sum(map(term_weights.__getitem__, dict.fromkeys(s for _, s in positions))
                   ) / total
    best = 0.0
    start = 0
    counts: dict[str, int] = {}
    for end in range(len(positions)):
        stem = positions[end][1]
        changed = stem not in counts
        counts[stem] = counts.get(stem, 0) + 1
        while positions[end][0] - positions[start][0] >= window:
            gone = positions[start][1]
            counts[gone] -= 1
            if not counts[gone]:
                del counts[gone]
                changed = True
            start += 1
        if changed:  # else the same stems in the same order: the same sum
            best = max(best, sum(map(term_weights.__getitem__, counts)))
    return best / total


def scores(query: str, texts: Mapping[int, str]) -> dict[int, float]:
    """Chunk id → best-window share (0..1) for the candidate chunks' texts."""
    stems = query_stems(query)
    if not stems or not texts:
        return {}
    found = dict(zip(texts, _occurrences(list(texts.values()), stems), strict=True))
    present = [{s for _, s in hits} for hits in found.values()]
    n = len(present)
    term_weights = {}
    for stem in stems:  # as _weights: IDF over the candidates
        df = sum(1 for d in present if stem in d)
        term_weights[stem] = math.log(1.0 + (n + 1) / (df + 0.5)) if df else 0.0
    return {chunk_id: _share(hits, term_weights) for chunk_id, hits in found.items()}
