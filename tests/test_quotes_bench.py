"""The bar for checked quotations, on the real bench books (../shared/bench/books): 20
quotations altered the ways people alter them are all found at the right page (PDF) or
chapter (EPUB); 10 invented or wrong-book ones are all reported as not found.

Skipped when ../shared/bench is absent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.checks.textmatch import fold
from grimoire_beholder.library import Library
from helpers import BENCH, fake_config

BOOKS = BENCH / "books"
pytestmark = [
    pytest.mark.slow,  # ingests the real bench books
    pytest.mark.skipif(not BOOKS.is_dir(), reason="../shared/bench is not here"),
]

R_INTRO, HOLMES, WAR = "r-intro", "the-adventures-of-sherlock-holmes", "the-art-of-war"

# (quotation as re-typed, how it was altered, book, physical page (PDF) or chapter title)
FOUND: list[tuple[str, str, str, int | str]] = [
    ("The recall and editing capabilities under\nUNIX are   highly customizable.",
     "whitespace", R_INTRO, 12),
    ("In the case of a doubly in-\ndexed array, an index matrix may be given consisting of "
     "two columns and as many rows as desired.", "hyphenation", R_INTRO, 27),
    ('gives too much smoothing (it usually does for "interesting" densities).',
     "straight quotes", R_INTRO, 44),
    ("The location of the site initialization ﬁle is taken from the value of the R_PROFILE "
     "environment variable.", "ligature", R_INTRO, 58),
    ("Occasionally Poisson data arises in practice and in the past it was often analyzed as "
     "gaussian data after either a log or a square-root transformation.", "omission",
     R_INTRO, 70),
    ("The value is the desired size of text characters … relative to the default text size.",
     "ellipsis", R_INTRO, 83),
    ("The quadratic form xTA-1x which is used in multivariate computations, should be "
     "computed by something like x %*% solve(A,x), rather than computing the inverse of A.",
     "dashes", R_INTRO, 31),
    ("If the second argument is a single value and not a list,\na single vector is read in, "
     "all components of which\nmust be of the same mode as the dummy value.", "line breaks",
     R_INTRO, 40),
    ("In the example above, the transpose function will always be available as base::t, "
     "because it is defined in the base package.", "hyphenation", R_INTRO, 90),
    ("The formula operators are similar in effect to the Wilkinson and Rogers notation [...] "
     "as Glim and Genstat.", "ellipsis", R_INTRO, 63),
    ("Grit in a sensitive instrument, or a crack in one of his own high–power lenses, would "
     "not be more disturbing than a strong emotion in a nature such as his.", "dashes",
     HOLMES, "A Scandal in Bohemia"),
    ("The stout gentleman half rose from his chair and gave a bob of greeting, with a quick "
     "questioning glance from his small fat-encircled eyes.", "omission", HOLMES,
     "The Redheaded League"),
    ("As evening drew in, the storm grew higher and louder,\nand the wind cried and sobbed "
     "like a child in the chimney.", "line breaks", HOLMES, "The Five Orange Pips"),
    ("My wife was on a visit to her mother's, and for a few days I was a dweller once more "
     "in my old quarters at Baker Street.", "straight apostrophe", HOLMES,
     "The Five Orange Pips"),
    ("It was early in April in the year '83 that I woke one morning to find Sherlock Holmes "
     "standing, fully dressed, by the side of my bed.", "straight quotes", HOLMES,
     "The Adventure of the Speckled Band"),
    ("If I claim full justice for my art, it is because it is an impersonal thing--a thing "
     "beyond myself.", "dashes", HOLMES, "The Adventure of the Copper Beeches"),
    ("He tried more than once to break away from the dangerous company which he was "
     "keeping, but each time the inﬂuence of his friend, Sir George Burnwell, was enough to "
     "draw him back again.", "ligature", HOLMES, "The Adventure of the Beryl Coronet"),
    ("If you know yourself but not the enemy, for every victory gained you will also suffer "
     "a defeat. If you know neither the enemy nor yourself, you will succumb in every "
     "battle.", "omission (endnote marks)", WAR, "III: Attack by Stratagem"),
    ("The onset of troops is like the rush of a tor-\nrent which will even roll stones along "
     "in its course.", "hyphenation", WAR, "V: Energy"),
    ("Faites en sorte que tous ceux que vous devez commander soient persuades que votre "
     "principale attention est de les preserver de tout dommage.", "accents", WAR,
     "Preface by Lionel Giles"),
]

# (quotation, book it must be checked against — None: the whole library)
NOT_FOUND: list[tuple[str, str | None]] = [
    ("It is a truth universally acknowledged, that a single man in possession of a good "
     "fortune, must be in want of a wife.", None),
    ("To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer "
     "the slings and arrows of outrageous fortune.", None),
    ("The supreme art of war is to subdue the enemy without fighting.", None),
    ("Elementary, my dear Watson, the answer was in the tobacco ash all along.", None),
    ("The R language was designed by Guido van Rossum as a successor to the S language "
     "developed at Bell Laboratories.", None),
    ("The quick brown fox jumps over the lazy dog while the sun sets behind the hills.", None),
    ("All warfare is based on deception.", HOLMES),
    ("You see, but you do not observe. The distinction is clear.", R_INTRO),
    ("Use the R program, terminating with the q() command at the end of the session.", WAR),
    ("Data frames are always stored column by column on a remote server so that Holmes can "
     "deduce their contents.", None),
]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    root = tmp_path_factory.mktemp("bench-quotes")
    lib = Library.open(config=fake_config(root), embedder=FakeEmbedder())
    for name in ("R-intro.pdf", "arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub",
                 "sun-tzu_the-art-of-war_lionel-giles.epub"):
        lib.ingest(BOOKS / name)
    yield lib
    lib.close()


@pytest.mark.parametrize(("quote", "kind", "book", "where"), FOUND,
                         ids=[f"{i}-{q[1]}" for i, q in enumerate(FOUND)])
def test_altered_bench_quotations_are_found_at_the_right_place(
        bench: Library, quote: str, kind: str, book: str, where: int | str) -> None:
    result = bench.verify_quote(quote)
    assert result.found, (kind, result.to_dict())
    passage = result.passage
    assert passage is not None and passage.slug == book
    if isinstance(where, int):
        assert (passage.page_start, passage.page_end) == (where, where)
    else:
        assert passage.chapter == where


@pytest.mark.parametrize(("quote", "book"), NOT_FOUND, ids=[str(i) for i in range(10)])
def test_invented_and_wrong_book_quotations_are_not_found(
        bench: Library, quote: str, book: str | None) -> None:
    result = bench.verify_quote(quote, book=book)
    assert not result.found, result.to_dict()
    assert result.verdict == "not_found"
    if book is not None:  # it is in the library, just not in that book
        assert result.note is not None and "but it is in" in result.note


# Short quotations whose every distinctive word was broken at a line end when re-typed: the
# keyword index knows only the whole words, so the halves alone find nothing.
HYPHENATED = [
    ("All war-\nfare is based on de-\nception.", WAR),
    ("To Sher-\nlock Holmes she is al-\nways the wo-\nman.", HOLMES),
]


@pytest.mark.parametrize(("quote", "book"), HYPHENATED)
def test_short_quotations_hyphenated_at_line_ends_are_found(
        bench: Library, quote: str, book: str) -> None:
    result = bench.verify_quote(quote)
    assert result.verdict == "exact", result.to_dict()
    assert result.passage is not None and result.passage.slug == book


@pytest.mark.parametrize("quote", ["a", "eneraliz", "arfare is based on deceptio",
                                   "herlock Holme"])
def test_exact_means_the_book_has_these_words(bench: Library, quote: str) -> None:
    result = bench.verify_quote(quote)
    if result.verdict == "exact":  # the same letters, not a longer word around them
        assert result.passage is not None
        assert fold(result.passage.text) == fold(quote), result.to_dict()


def test_a_clipped_word_is_a_close_match_that_says_so(bench: Library) -> None:
    clipped = bench.verify_quote("arfare is based on deceptio", book=WAR)
    assert clipped.verdict == "close", clipped.to_dict()
    assert clipped.passage is not None
    assert clipped.passage.text == "warfare is based on deception"
    assert clipped.differences
