"""A model-free extractive summary: the section's most central sentences, in reading order.

Used when no LLM is configured (the default), so every chunk still gets a section summary
to situate it. Centrality is cosine similarity of each sentence's TF-IDF vector to the
section's centroid — cheap, deterministic and language-agnostic enough: Latin-script text
is split into words, runs of scripts without spaces (CJK, Thai …) into character bigrams.

Fiction: in a section where at least :data:`SPEECH_SHARE` of the sentences open with a
quotation mark (「 」 too) or a dash (or end one), those lines of dialogue ("“Come in!” said
Holmes.") rank :data:`SPEECH_FACTOR` times lower than the narration around them, which says
who is where and what happens; a section that is all dialogue still gets its most central
lines. A title before a name ("Mr. Holmes", "St. Louis", ``text.NAME_TITLES``) ends no
sentence, nor does an abbreviation before a number ("Art. 5", "No. 3", "Fig. 2"); "sir." and
"Jr." do (they come after a name or alone). A quotation ends a sentence where it closes, in
French (« … », spaced or not) and German („ … “, » … «) as in English.

Work is bounded for giant sections: only the first :data:`MAX_SENTENCES` sentences (of the
first :data:`MAX_INPUT_CHARS` characters) are considered, so time stays linear and small.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from grimoire_beholder.text import NAME_TITLES, NO_SPACE_CHARS, SUMMARY_STOP_WORDS, clip

MAX_INPUT_CHARS = 200_000
MAX_SENTENCES = 400
MIN_SENTENCE_TOKENS = 4  # headings and fragments are rarely good summary sentences
SPEECH_SHARE = 0.3  # of a section's sentences opening with speech: dialogue, ranked lower
SPEECH_FACTOR = 0.25
_SPEECH_OPENERS = ("“", '"', "‘", "'", "«", "„", "「", "『", "—", "–")
# A sentence ending a speech begun before it.
_SPEECH_CLOSERS = ("”", "»", "“", '"', "«", "」", "』")
# Their period ends a sentence: "Yes, sir." and "Sammy Davis Jr." come after a name, if any.
_HELD_TITLES = NAME_TITLES - {"sir", "jr"}
# Abbreviations written before a number: "Art. 5", "No. 3", "pp. 12", "Jan. 5".
_NUMBER_ABBREVIATIONS = frozenset({
    "no", "nos", "nr", "art", "arts", "sec", "secs", "fig", "figs", "vol", "vols", "ch",
    "chap", "p", "pp", "para", "paras", "approx", "eq", "eqs", "tab", "abs", "ref",
    "cl", "pt", "pts", "op", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec",
})

_NO_SPACE_RUN = re.compile(f"[{NO_SPACE_CHARS}]+")
_WORD = re.compile(rf"[^\W\d_{NO_SPACE_CHARS}][^\W_{NO_SPACE_CHARS}]*")
# A sentence ends at . ! ? … (plus any closing quote/bracket) before whitespace and a
# character that is not a lowercase letter (so "e.g. the" is not cut), right after a CJK
# full stop (plus closer) even without a space, and at blank lines.
_END = r"[.!?…]"
_CLOSE = r"[\"'”’)\]」』）]"
_LATIN_CLOSE = r"[\"'”’)\]」』）“»«]"  # German „…“ and »…«, French «…»: never open after a stop
_BOUNDARY = re.compile(
    rf"(?<={_END})\s+(?=[^\sa-z»]|»\S)|(?<={_END}{_LATIN_CLOSE})\s+(?=[^\sa-z])"
    rf"|(?<={_END}\s»)\s+(?=[^\sa-z])"  # French: « Très bien. » Le soleil…
    rf"|(?<=[。！？])(?!{_CLOSE})\s*|(?<=[。！？]{_CLOSE})\s*"
    r"|\n\s*\n"
)
_SPLIT = re.compile(f"({_BOUNDARY.pattern})")  # the pieces and what separates them
_TRAILING_WORD = re.compile(r"[^\W\d_]{1,6}$")


def _abbreviation(sentence: str) -> str | None:
    """The word before the final period of ``sentence``, lower-cased, if it may be an
    abbreviation ("…said Mr." → "mr"); None when it ends otherwise."""
    if sentence[-1] != ".":
        return None
    last = _TRAILING_WORD.search(sentence[-8:-1])
    return last.group().lower() if last is not None else None


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` with internal whitespace collapsed; empty pieces dropped. A
    piece ending in a title before a name ("…said Mr.") is joined to the next one, and one
    ending in an abbreviation before a number ("See Art.") to a next one in the same
    paragraph opening with a digit ("12 and No. 7."; a "4." after a blank line numbers a
    list)."""
    out = []
    held: list[str] = []  # pieces ending in a title, waiting for the rest of the sentence
    number = False  # the last held piece waits for a number, not a name
    parts = _SPLIT.split(text)
    paragraph = False  # a blank line since the last piece
    for index in range(0, len(parts), 2):
        paragraph = paragraph or (index > 0 and parts[index - 1].count("\n") > 1)
        sentence = " ".join(parts[index].split())
        if not sentence:
            continue
        if number and (paragraph or not sentence[0].isdigit()):
            out.append(" ".join(held))  # "It was No." ended there
            held.clear()
        paragraph = False
        word = _abbreviation(sentence)
        if word in _HELD_TITLES or word in _NUMBER_ABBREVIATIONS:
            held.append(sentence)
            number = word not in _HELD_TITLES
            continue
        number = False
        if held:
            sentence = " ".join([*held, sentence])
            held.clear()
        out.append(sentence)
    if held:
        out.append(" ".join(held))
    return out


def _terms(sentence: str) -> list[str]:
    lowered = sentence.lower()
    terms = [w for w in _WORD.findall(lowered) if w not in SUMMARY_STOP_WORDS and len(w) > 1]
    for run in _NO_SPACE_RUN.findall(lowered):
        terms.extend(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return terms


def _length(sentence: str) -> int:
    return len(sentence.split()) + sum(len(r) for r in _NO_SPACE_RUN.findall(sentence)) // 2


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def _vectors(sentences: list[str]) -> list[dict[str, float]]:
    """Unit-length TF-IDF vectors, one per sentence (empty dict for a term-less one)."""
    counts = [Counter(_terms(s)) for s in sentences]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(sentences)
    vectors = []
    for c in counts:
        vec = {t: (1.0 + math.log(tf)) * (math.log((1 + n) / (1 + df[t])) + 1.0)
               for t, tf in c.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors.append({t: v / norm for t, v in vec.items()})
    return vectors


def rank_sentences(sentences: list[str]) -> list[int]:
    """Indices of ``sentences`` from most to least central (ties: earlier first)."""
    vectors = _vectors(sentences)
    centroid: dict[str, float] = {}
    for vec in vectors:
        for t, v in vec.items():
            centroid[t] = centroid.get(t, 0.0) + v
    norm = math.sqrt(sum(v * v for v in centroid.values())) or 1.0
    centroid = {t: v / norm for t, v in centroid.items()}
    speech = [sentence.startswith(_SPEECH_OPENERS) or sentence.endswith(_SPEECH_CLOSERS)
              for sentence in sentences]
    dialogue = sum(speech) >= SPEECH_SHARE * len(sentences)
    scores = []
    for i, (sentence, vec) in enumerate(zip(sentences, vectors, strict=True)):
        score = _cosine(vec, centroid)
        if _length(sentence) < MIN_SENTENCE_TOKENS:
            score *= 0.5
        if dialogue and speech[i]:
            score *= SPEECH_FACTOR
        scores.append((-score, i))
    return [i for _, i in sorted(scores)]


def summarize(text: str, max_sentences: int = 3, max_chars: int = 600) -> str:
    """Up to ``max_sentences`` central sentences of ``text``, in order, within ``max_chars``.

    Near-duplicate sentences (cosine > 0.8 to one already chosen) are skipped so a
    repeated phrase cannot fill the whole summary. Returns "" for blank text.
    """
    sentences = split_sentences(text[:MAX_INPUT_CHARS])[:MAX_SENTENCES]
    if not sentences or max_sentences < 1 or max_chars < 1:
        return ""
    if len(sentences) == 1:
        return clip(sentences[0], max_chars)
    vectors = _vectors(sentences)
    chosen: list[int] = []
    used = 0
    for i in rank_sentences(sentences):
        if len(chosen) >= max_sentences:
            break
        if any(_cosine(vectors[i], vectors[j]) > 0.8 for j in chosen):
            continue
        extra = len(sentences[i]) + (1 if chosen else 0)
        if chosen and used + extra > max_chars:
            continue  # a shorter, less central sentence may still fit
        chosen.append(i)
        used += extra
    return clip(" ".join(sentences[i] for i in sorted(chosen)), max_chars)
