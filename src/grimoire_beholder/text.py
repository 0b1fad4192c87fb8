"""What the code knows about written text, in one place: structure (token estimates), models
(summaries, window splits, tokenizer input) and search (keyword queries, confidence) all
read it from here, so they cannot disagree about which scripts have no spaces or which words
carry no meaning, nor about where to cut a text that is too long (``clip``). A leaf module:
it imports nothing of the package.
"""

from __future__ import annotations

import re
import unicodedata

# Scripts written without spaces between words, as a regex character class (no brackets).
# A run of them is one "word" to a whitespace split and to FTS5's unicode61, so token
# estimates count each character, the summariser uses character bigrams and the keyword arm
# searches such runs as trigrams.
NO_SPACE_CHARS = (
    "\u0e00-\u0e7f"  # Thai
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f\u31a0-\u31bf"  # Bopomofo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"  # Hangul
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B–G
)

# A word token: letters and digits (``\w`` minus ``_``, which unicode61 treats as a
# separator), so a token is what the FTS5 word table indexes.
WORD_TOKEN = re.compile(r"[^\W_]+")

# English function words that never help find a passage: the keyword arm drops them from
# queries (unless nothing else is left) and confidence ignores them in query coverage.
STOP_WORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our",
    "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why",
    "will", "with", "would", "you", "your",
})

# The extractive summariser also ignores these: common words that would pull a section's
# centroid towards filler sentences. They stay out of STOP_WORDS on purpose: dropping them
# from queries would change 78 of the 260 dev-set questions' keyword queries, and the README's
# retrieval figures were measured without that.
SUMMARY_STOP_WORDS = STOP_WORDS | frozenset({
    "above", "after", "again", "against", "all", "also", "am", "any", "because", "before",
    "being", "below", "between", "both", "doing", "down", "during", "each", "few", "further",
    "having", "here", "hers", "herself", "him", "himself", "itself", "just", "may", "might",
    "more", "most", "must", "myself", "nor", "now", "off", "once", "one", "only", "other",
    "ours", "out", "over", "own", "same", "shall", "should", "some", "such", "theirs",
    "through", "too", "under", "until", "up", "us", "very", "while", "yours",
})

# Titles and abbreviations written before a name ("Mr. Holmes", "St. Louis"): their period
# ends no sentence and marks no name (search/confidence.py, models/extractive.py).
NAME_TITLES = frozenset({
    "mr", "mrs", "ms", "mme", "mlle", "dr", "prof", "rev", "fr", "st", "mt", "jr", "sr", "gen",
    "col", "capt", "lt", "sgt", "sir", "messrs", "vs",
})

# A question, not a document: the embedding model reads ~1,000 characters of it, and every
# surface echoes it back, so a 1 MB "question" is refused rather than searched and returned.
MAX_QUERY_CHARS = 2_000

# A quotation to check (verify, verify_quote): a long block quotation, not a chapter.
MAX_QUOTE_CHARS = 5_000

# The most hits one search returns (``--top-k``, ``top_k`` in the config): the search
# engine's MAX_TOP_K, here for the CLI's option checks (tests/test_config.py holds them equal).
MOST_HITS = 100

ELLIPSIS = "…"
_SENTENCE_ENDS = (". ", "! ", "? ", "。")
_TRAILING = " \t\r\n,;:"


def without_lone_surrogates(text: str) -> str:
    """``text`` with lone surrogates (from broken JSON) as ``?``: tokenizers raise on them."""
    return text.encode("utf-8", "replace").decode("utf-8")


def clip(text: str, limit: int, *, at_sentence: bool = False) -> str:
    """``text`` in at most ``limit`` characters, or as it is when it fits: the one clip for
    what ingest stores (extractive summaries, chunk contexts, so its cut points are part of
    what the index holds) and every excerpt the adapters show.

    Cut after the last sentence end that fits when ``at_sentence`` and one is in the second
    half (no "…": the text still ends cleanly), else at the last word boundary in the second
    half, else mid-word; a cut mid-sentence ends in "…" with no dangling space or comma.
    """
    if len(text) <= limit:
        return text
    if at_sentence:
        head = text[:limit]
        end = max(head.rfind(mark) for mark in _SENTENCE_ENDS)
        if end > limit // 2:
            return head[: end + 1].rstrip()
    cut = text[: max(1, limit - 1)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(_TRAILING) + ELLIPSIS


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 chapter``, ``3 chapters``, ``1,200 chunks`` (``plural_form`` for irregular nouns)."""
    return f"{count:,} {noun if count == 1 else plural_form or noun + 's'}"


def flat(text: str) -> str:
    """``text`` on one line: every run of whitespace one space (for one-line excerpts)."""
    return " ".join(text.split())


# One part of a long section: ~5k tokens, twice over in an MCP result (text + structured).
PART_CHARS = 20_000


def _hard_split(piece: str, limit: int) -> list[str]:
    """A paragraph longer than a part, split at line, sentence or word ends when possible."""
    out = []
    while len(piece) > limit:
        window = piece[:limit]
        cut = max(window.rfind("\n"), window.rfind(". ") + 1, window.rfind(" "))
        cut = cut if cut > limit // 2 else limit
        out.append(piece[:cut])
        piece = piece[cut:]
    return [*out, piece]


def split_parts(text: str, limit: int = PART_CHARS) -> list[str]:
    """Deterministic parts of at most ``limit`` characters, on paragraph boundaries (the
    parts of a long section: MCP ``get_section`` and the CLI's ``show`` serve the same ones).

    Joining the parts with blank lines gives the text back (when no paragraph had to be cut),
    so a model that fetches every part reads the section exactly.
    """
    parts: list[str] = []
    current: str | None = None
    for paragraph in text.split("\n\n"):
        for piece in _hard_split(paragraph, limit) if len(paragraph) > limit else [paragraph]:
            if current is not None and len(current) + 2 + len(piece) <= limit:
                current = f"{current}\n\n{piece}"
            else:
                if current is not None:
                    parts.append(current)
                current = piece
    parts.append(current or "")
    return parts


def page_ranges(pages: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1–3, 7"``: a list of skipped pages short enough for one line."""
    spans: list[list[int]] = []
    for page in sorted(pages):
        if spans and page == spans[-1][1] + 1:
            spans[-1][1] = page
        else:
            spans.append([page, page])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


_PLURAL_EXCEPTIONS = ("ss", "us", "is")


def index_fold(text: str) -> str:
    """Text as the keyword word index holds it and reads a query: NFKC (full-width
    ``ＡＢＣ``, ligatures, superscripts as the plain letters and digits FTS5's ``unicode61``
    knows), soft hyphens (U+00AD, line-break hints inside a word) removed so the word stays
    whole. ASCII text is returned as it is."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).replace("\u00ad", "")


def normalize_term(text: str) -> str:
    """A term or a query phrase reduced for matching: case, accents and punctuation gone,
    a plural "s" dropped ("Missing values" ~ "missing value", "read.fwf" ~ "read fwf").
    How printed back-of-book index entries are stored (``parse.backindex``) and matched
    (``search.lookup``, ``search.ranking``)."""
    folded = text.casefold()
    if not folded.isascii():  # no ASCII character is a combining mark
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = re.sub(r"[\W_]+", " ", folded).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s")
                    and not w.endswith(_PLURAL_EXCEPTIONS) else w for w in words)
