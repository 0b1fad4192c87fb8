"""How likely the answer is among a search's hits: a small calibrated logistic model.

Why: a search always returns *something*, and an assistant cannot tell a strong hit from the
least-bad passage of a library that does not cover the question. A number in 0..1 lets the
CLI say so plainly and the assistant say "the library does not seem to cover this".

The signal comes only from scores and texts the search already has (no extra model call),
four features, each a plain reading of "did the search find the question":

* ``cos_top`` — the best cosine of the vector arm (how close the nearest passage means);
* ``fused_top`` — the best fused score (both arms together);
* ``coverage`` — the share of the question's content words (stop words dropped, compared
  by their first 5 letters, accents folded, as a crude stem; in scripts written without
  spaces, its character bigrams) found in the top hit's text, context or heading;
* ``names_unmatched`` — the square of the top hit's ``coverage`` when a name or number of
  the question is found in none of the hits (nor the title or author of their books: "What
  does Sun Tzu say about spies?" of The Art of War, whose passages seldom name him), else
  0: a question about the very article but a person, place or year it never mentions
  (SQuAD v2's commonest unanswerable kind)
  matches well *except* for that name. Squared, because the better the rest matches, the
  more the missing name says: a developer's long question that matches a third of its
  words and names the platform it runs on ("our Docker build") is not such a question.
  A name is what a reader would mark as one: a capitalised word that does not start a
  sentence and is not an acronym (``GitHub`` is one, ``CLI`` and ``JSON`` are not), or a
  figure of two digits or more; "…on Linux. After I save…" has one name. A question whose
  case marks no name (lower case, capitals, Title Case) takes as names the words the
  library itself writes as names (``search/library_names.py``): "what killed julia
  stoner" names Julia and Stoner in a library that writes them so;
* ``rerank_top`` — the reranker's score of the top hit, when a reranker ran;
* ``kw_gap`` — 1 − second/best keyword score, for keyword search alone (below); 0 when the
  keyword arm found a single passage (no second to stand out from).

Fewer features generalise better here: score margins, the arms' agreement, the share of hits
from the top hit's book and the coverage over all hits were features too; with them,
cross-validated by document, the model flagged fewer unanswerable questions for the same
share of answerable ones (README, "Not in the library").

What kind of file the top hit is from (PDF, Markdown…) is deliberately not a feature: with
it, a model fit on two of the dev sets flagged a third of the answerable questions of the
third; without it, at most 5% (``bench/calibrate_confidence.py`` prints both tables).

The coefficients are fit per retrieval setting (``hybrid:convex``, ``hybrid:rrf``,
``vector``, ``keyword``; ``+rerank:<backend>`` variants when fit with one) by
``bench/calibrate_confidence.py`` on the dev question sets, and stored in
:mod:`.confidence_model`. A setting without coefficients gets ``confidence = None``
(unknown), never a made-up number.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from grimoire_beholder.text import NAME_TITLES, NO_SPACE_CHARS, STOP_WORDS, WORD_TOKEN

FEATURES: tuple[str, ...] = ("cos_top", "fused_top", "coverage", "names_unmatched")
# Keyword search alone has no cosine and its fused score is always 1 (scaled by the best):
# how far its best chunk stands out from the second (``kw_gap``) stands in for them.
KEYWORD_FEATURES: tuple[str, ...] = ("kw_gap", "coverage", "names_unmatched")
RERANK_FEATURE = "rerank_top"
STEM = 5


_SENTENCE_END = re.compile(r"[.!?:;]\s*$")
_NO_SPACE_RUN = re.compile(f"[{NO_SPACE_CHARS}]+")
_TITLES = NAME_TITLES  # neither they nor their period mark a name


class _Marks(dict[int, int | None]):
    """For ``str.translate``: a combining character's code point → None (dropped), any
    other → itself; filled as characters are met (the table is only as big as the
    characters the library's texts use). ``unmet`` finds a character not in the table yet
    (none ASCII) and ``marks`` the combining ones in it, both rebuilt by :meth:`drop` after
    a text brought new characters and the table grew by half: a text of met characters
    loses its marks in one regular expression pass (a translate looks every character up
    through this class, ~8x slower), any other goes through the translate."""

    def __init__(self) -> None:
        super().__init__()
        # (unmet, marks), replaced as one tuple so a thread never pairs a new ``unmet``
        # with an old ``marks`` (which would keep a mark ``unmet`` calls met).
        self.patterns: tuple[re.Pattern[str], re.Pattern[str] | None] = (
            re.compile("[^\x00-\x7f]"), None)
        self.built = 0  # the table's size when they were built

    def __missing__(self, key: int) -> int | None:
        value = None if unicodedata.combining(chr(key)) else key
        self[key] = value
        return value

    def drop(self, text: str) -> str:
        """``text`` without its combining characters (``text.translate(self)``). Safe to
        call from several threads: the table only grows, and is read from a copy."""
        unmet, marks = self.patterns
        if unmet.search(text) is None:
            return text if marks is None else marks.sub("", text)
        out = text.translate(self)
        if len(self) < 1.5 * self.built:  # rebuilt as the table grows by half (amortised)
            return out
        table = list(self.items())  # another thread may be adding characters
        self.built = len(table)
        met = "".join(re.escape(chr(key)) for key, _ in table if key > 127)
        dropped = "".join(re.escape(chr(key)) for key, value in table if value is None)
        self.patterns = (re.compile(f"[^\\x00-\\x7f{met}]"),
                         re.compile(f"[{dropped}]") if dropped else None)
        return out


_MARKS = _Marks()


def _folded(text: str) -> str:
    """Lower case, accents dropped ("Tzŭ" ~ "tzu"); ASCII text is only lower-cased."""
    low = text.lower()
    if low.isascii():
        return low
    return _MARKS.drop(unicodedata.normalize("NFKD", low))


def _bigrams(text: str) -> tuple[str, set[str]]:
    """``text`` without its runs of a script written without spaces (Chinese, Japanese,
    Korean, Thai: ``unicode61`` and WORD_TOKEN see a whole run as one word), and those
    runs' character bigrams (a lone character as itself), the unit their words are
    compared in."""
    if text.isascii():
        return text, set()
    grams: set[str] = set()
    for run in _NO_SPACE_RUN.findall(text):
        grams.update(run[i:i + 2] for i in range(max(len(run) - 1, 1)))
    return (_NO_SPACE_RUN.sub(" ", text), grams) if grams else (text, grams)


def _stems(text: str) -> set[str]:
    rest, grams = _bigrams(_folded(text))
    return {w[:STEM] for w in WORD_TOKEN.findall(rest)} | grams


def _content(query: str) -> set[str]:
    rest, grams = _bigrams(_folded(query))
    return {w[:STEM] for w in WORD_TOKEN.findall(rest)
            if w not in STOP_WORDS and len(w) > 2} | grams


def coverage(query: str, text: str) -> float:
    """Share of the query's content words (by 5-letter stem) present in ``text``."""
    return _covered(_content(query), _stems(text))


def _covered(words: set[str], stems: set[str]) -> float:
    return len(words & stems) / len(words) if words else 0.0


Folded = tuple[str, set[str]]  # a text as ``_bigrams(_folded(text))`` leaves it


def _holds(folded: Folded, stem: str) -> bool:
    """Whether ``stem`` is one of ``_stems`` of the text ``folded`` comes from, found by
    ``str.find`` instead of stemming every word: a bigram, or an occurrence starting a word
    (no letter or digit before it: ``WORD_TOKEN`` matches ``str.isalnum`` runs) that is the
    whole word, or its first :data:`STEM` characters. A stem with other characters is no
    word's."""
    rest, grams = folded
    if stem in grams:
        return True
    if not stem.isalnum():
        return False
    size, whole = len(stem), len(stem) < STEM
    at = rest.find(stem)
    while at != -1:
        if (at == 0 or not rest[at - 1].isalnum()) and not (
                whole and at + size < len(rest) and rest[at + size].isalnum()):
            return True
        at = rest.find(stem, at + 1)
    return False


def _names(query: str) -> set[str]:
    """The query's names and numbers, stemmed: a figure of two or more digits, or a word of
    two or more letters that starts with a capital and is not all capitals (``Holmes``,
    ``GitHub``; not ``JSON``, ``CLI``), does not start a sentence and is not a title such as
    ``Mr`` or ``Dr`` (whose period ends no sentence: "Mr. Holmes" names Holmes). A question
    in Title Case ("How Did The Engineer Lose His Thumb?", "How to Build a Package with
    Debhelper") marks no word as a name, as one in capitals or in lower case does not: only
    its figures count (:func:`_unmatched` then asks the library)."""
    figures, capitalised, blind = _name_parts(query)
    return figures if blind else figures | capitalised


def _name_parts(query: str) -> tuple[set[str], set[str], bool]:
    """The query's figures and capitalised words (stems, as :func:`_names` reads them), and
    whether its case marks no name: all in lower case or in capitals, or in Title Case."""
    capitalised, lower, capital_stop_word, out = [], 0, False, set()
    for match in WORD_TOKEN.finditer(query):
        word = match.group()
        if word.isdigit():
            if len(word) > 1:
                out.add(word[:STEM])
            continue
        if len(word) < 2 or not _inside_sentence(query[:match.start()]):
            continue
        folded = _folded(word)
        if not word[0].isupper():
            lower += folded not in STOP_WORDS and len(word) > 2 and word.isalpha()
        elif folded in STOP_WORDS:
            capital_stop_word = True
        elif not word.isupper() and folded not in _TITLES:
            capitalised.append(folded[:STEM])
    title_case = lower == 0 and (len(capitalised) >= 4
                                 or (len(capitalised) >= 3 and capital_stop_word))
    return out, set(capitalised), title_case or query.islower() or query.isupper()


def _inside_sentence(before: str) -> bool:
    """Whether a word after ``before`` is inside a sentence (not its first word). A period
    after a title or an initial ("Dr.", "J.") ends no sentence."""
    if not before.strip():
        return False
    end = _SENTENCE_END.search(before)
    if end is None:
        return True
    if not end.group().startswith("."):
        return False
    words = WORD_TOKEN.findall(before[-12:])
    last = words[-1] if words else ""
    return len(last) == 1 or _folded(last) in _TITLES


def names_missing(query: str, text: str) -> float:
    """Share of the query's names and numbers (by 5-letter stem) absent from ``text``."""
    return _missing(_names(query), _stems(text))


def _missing(names: set[str], stems: set[str]) -> float:
    return len(names - stems) / len(names) if names else 0.0


def _any_missing(names: set[str], pieces: Sequence[str], top_text: str,
                 top: Folded) -> bool:
    """Whether a name is absent from the text the ``pieces`` make joined by spaces."""
    return bool(_absent(names, pieces, top_text, top))


def _absent(names: set[str], pieces: Sequence[str], top_text: str, top: Folded) -> set[str]:
    """The names absent from the text the ``pieces`` make joined by spaces (the top hit's
    text when they are empty), looked for piece by piece until every name is found (a word
    never spans a space, so the stems of the whole are those of its pieces)."""
    left = set(names)
    if not pieces or (len(pieces) == 1 and not pieces[0]):
        pieces = [top_text]
    for piece in pieces:
        if not left:
            break
        folded = top if piece == top_text else _bigrams(_folded(piece))
        left = {name for name in left if not _holds(folded, name)}
    return left


def _unmatched(query: str, pieces: Sequence[str], top_text: str, top: Folded,
               written: Callable[[Sequence[str]], Sequence[str]] | None) -> bool:
    """Whether a name or number of the query is in none of the hits. When the query's case
    marks no name and ``written`` is given, its names are the words the top hit lacks that
    ``written`` says the library writes as names (``search/library_names.py``); only those
    are looked for in the other hits."""
    figures, capitalised, blind = _name_parts(query)
    if not blind or written is None:
        return _any_missing(figures if blind else figures | capitalised, pieces, top_text, top)
    if _any_missing(figures, pieces, top_text, top):
        return True
    rest, _ = _bigrams(_folded(query))
    words = {w[:STEM]: w for w in WORD_TOKEN.findall(rest)
             if w not in STOP_WORDS and len(w) > 2 and w.isalpha()}
    unseen = [word for stem, word in sorted(words.items()) if not _holds(top, stem)]
    names = {word[:STEM] for word in written(unseen)} if unseen else set()
    return bool(names) and _any_missing(names, pieces, top_text, top)


def features(query: str, arms: Mapping[str, Sequence[tuple[int, float]]],
             fused_scores: Sequence[float], top_text: str,
             rerank_top: float | None = None,
             all_text: str | Sequence[str] = "",
             written: Callable[[Sequence[str]], Sequence[str]] | None = None
             ) -> dict[str, float]:
    """The feature vector of one search (see the module docstring); arms best first,
    ``all_text`` the text of every hit returned (the top one's alone when empty), whole or
    in pieces that joined by spaces make it.

    No text is stemmed word by word: the query's stems are looked for (:func:`_holds`), in
    as much of ``all_text`` as the answer needs: none when the query names nothing or the
    top hit covers none of its words (the feature is 0 either way), and pieces only until
    every name is found. ``written`` tells which words the library writes as names, for a
    query whose case marks none (:func:`_unmatched`)."""
    vector = arms.get("vector") or []
    keyword = arms.get("keyword") or []
    words = _content(query)
    top = _bigrams(_folded(top_text))
    top_coverage = (sum(_holds(top, word) for word in words) / len(words)) if words else 0.0
    out = {
        "cos_top": float(vector[0][1]) if vector else 0.0,
        "fused_top": float(fused_scores[0]) if fused_scores else 0.0,
        "coverage": top_coverage,
        "names_unmatched": (top_coverage ** 2 if top_coverage > 0 and _unmatched(
            query, [all_text] if isinstance(all_text, str) else all_text, top_text, top,
            written) else 0.0),
        # A lone keyword match has no lead to measure: it is the one passage holding a word
        # of the question, which off-topic questions find too (counted as no lead, not 1).
        "kw_gap": (1.0 - float(keyword[1][1]) / float(keyword[0][1])
                   if len(keyword) > 1 and keyword[0][1] > 0 else 0.0),
    }
    if rerank_top is not None:
        out[RERANK_FEATURE] = float(rerank_top)
    return out


def model_key(mode: str, fusion: str | None, reranker: str | None = None) -> str:
    """The coefficient set's name for a retrieval setting, e.g. ``hybrid:convex``."""
    key = f"{mode}:{fusion}" if mode == "hybrid" and fusion else mode
    return f"{key}+rerank:{reranker}" if reranker else key


def feature_names(key: str) -> tuple[str, ...]:
    """The features the model of setting ``key`` (see :func:`model_key`) is fit on."""
    return KEYWORD_FEATURES if key.split("+")[0] == "keyword" else FEATURES


def predict(feats: Mapping[str, float], model: Mapping[str, Any]) -> float:
    """The logistic model's probability for one feature mapping (missing features = 0)."""
    names = model["features"]
    x = np.array([feats.get(n, 0.0) for n in names], dtype=np.float64)
    z = (x - np.asarray(model["mean"])) / np.asarray(model["scale"])
    logit = float(z @ np.asarray(model["coef"]) + float(model["intercept"]))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))


def confidence(feats: Mapping[str, float], mode: str, fusion: str | None,
               reranker: str | None = None) -> float | None:
    """Probability that the answer is among the hits, or None when not calibrated.

    With a reranker but no coefficients fit with it, the setting's plain model is used
    (the reranker score is then not part of the estimate).
    """
    from grimoire_beholder.search.confidence_model import MODELS

    model = MODELS.get(model_key(mode, fusion, reranker)) if reranker else None
    model = model or MODELS.get(model_key(mode, fusion))
    # Never a certain 1.0 (nor 0.0): a fitted probability is an estimate, and a threshold of
    # 1 must flag everything.
    return None if model is None else min(0.9999, max(0.0001, round(predict(feats, model), 4)))


def fit(rows: Sequence[Mapping[str, float]], labels: Sequence[int],
        names: Sequence[str] = FEATURES, l2: float = 1.0,
        iterations: int = 50, weights: Sequence[float] | None = None) -> dict[str, Any]:
    """Fit an L2-regularised logistic regression (Newton's method) on standardised features.

    Standardising keeps one penalty fair to features of different scales; the means and
    scales are stored with the coefficients so :func:`predict` needs nothing else.
    ``weights`` (one per row, default 1) let small question sets count as much as big ones.
    """
    x = np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    sw = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(y), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the intercept is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -50, 50)))
        grad = z.T @ (sw * (p - y)) + penalty * w
        hess = (z * (sw * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return {"features": list(names), "mean": [round(float(v), 6) for v in mean],
            "scale": [round(float(v), 6) for v in scale],
            "coef": [round(float(v), 6) for v in w[:-1]], "intercept": round(float(w[-1]), 6)}
