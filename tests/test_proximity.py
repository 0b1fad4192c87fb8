"""Term proximity's fast path (words found in C) gives exactly the word-by-word definition."""

from __future__ import annotations

import random

from grimoire_beholder.search import proximity

WORDS = ("İstanbul", "ΟΔΟΣ", "straße", "Stranger", "strangers", "silver", "Silverware", "sil",
         "abc", "ABCD", "abcde", "x_y", "naïve", "ǅemal", "ﬁre", "Fire", "ΣΑΣ", "ß",
         "lighthouse", "the", "and", "paid", "room", "rooms", "日本語", "２０２６", "1999", "a")
BREAKS = ("...", ",", "-", "\n", "_", "\x1f", "’", "—", "\ud800")  # none of them a word


def _by_definition(query: str, texts: dict[int, str]) -> dict[int, float]:
    stems = proximity.query_stems(query)
    if not stems or not texts:
        return {}
    weights = proximity.weights(stems, texts)
    return {chunk_id: proximity.best_window(text, weights) for chunk_id, text in texts.items()}


def test_scores_equal_the_word_by_word_definition_on_mixed_scripts() -> None:
    """Half the texts' words are ASCII (read together as bytes, curly quotes and dashes
    breaking words like spaces), half mixed scripts (the regex path)."""
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
