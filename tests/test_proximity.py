"""Term proximity's fast path (words found in C) gives exactly the word-by-word definition."""

from __future__ import annotations

import random

from grimoire_beholder.search import proximity

WORDS = ("İstanbul", "ΟΔΟΣ", "straße", "Stranger", "strangers", "silver", "Silverware", "sil",
         "abc", "ABCD", "abcde", "x_y", "naïve", "ǅemal", "ﬁre", "Fire", "ΣΑΣ", "ß",
         "lighthouse", "the", "and", "paid", "room", "rooms", "日本語", "２０２６", "1999", "a",
         "résumé", "resumé", "silveré", "\u212aelvin", "cafe\u0301s", "roomé")
BREAKS = ("...", ",", "-", "\n", "_", "\x1f", "’", "—", "\ud800", "\xa0", "«")  # no word


def _by_definition(query: str, texts: dict[int, str]) -> dict[int, float]:
    stems = proximity.query_stems(query)
    if not stems or not texts:
        return {}
    weights = proximity.weights(stems, texts)
    return {chunk_id: proximity.best_window(text, weights) for chunk_id, text in texts.items()}


def test_scores_equal_the_word_by_word_definition_on_mixed_scripts() -> None:
    """Half the texts' words are ASCII (curly quotes and dashes breaking words like
    spaces), half mixed scripts (read as UTF-8 bytes too while every stem is ASCII and no
    letter lower-cases to ASCII, else by the regex path)."""
    rng = random.Random(3)
    ascii_words = tuple(w for w in WORDS if w.isascii())
    for trial in range(400):
        pool = ascii_words if trial % 2 else WORDS
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
        texts = {i: " ".join(rng.choice((*pool, *BREAKS))
                             for _ in range(rng.randint(0, 120)))
                 for i in range(rng.randint(1, 6))}
        assert proximity.scores(query, texts) == _by_definition(query, texts), query


def test_a_short_stem_is_a_whole_word_and_a_long_one_a_prefix() -> None:
    texts = {1: "the fig tree", 2: "figures of speech", 3: "strangers met", 4: "a stranger"}
    shares = proximity.scores("fig strangeness", texts)
    assert shares == _by_definition("fig strangeness", texts)
    assert shares[1] > 0 and shares[3] > 0 and shares[4] > 0
    assert shares[2] == 0.0  # "figures" is not the word "fig"


def test_the_letters_lowering_to_ascii_are_all_listed() -> None:
    """A word with such a letter would stem to ASCII its bytes do not hold: it must take
    the regex path."""
    found = {c for c in map(chr, range(128, 0x110000))
             if c.isalnum() and any(ord(x) < 128 for x in c.lower())}
    assert found == proximity.LOWER_TO_ASCII


def test_an_ascii_query_in_text_with_other_letters() -> None:
    """Accented words stay whole words (read as bytes); the Kelvin sign lower-cases to k."""
    texts = {1: "le résumé du café’s naïve silver — silverware", 2: "a \u212aelvin scale",
             3: "cafe\u0301 silver lighthouse"}
    shares = proximity.scores("kelvin silver resum cafe", texts)
    assert shares == _by_definition("kelvin silver resum cafe", texts)
    assert shares[2] > 0
