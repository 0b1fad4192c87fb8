"""The keyword arm: hostile input never reaches FTS5 syntax; accents, stop words, CJK."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.search import keyword
from grimoire_beholder.search.engine import MAX_QUERY_CHARS
from grimoire_beholder.store import hit_queries as store_search
from helpers import add_book, engine_for, open_library

HOSTILE = [
    '"', '""', '"""', 'foo"bar', '"unbalanced quote', "it's", "-", "-dragon", "dragon -fire",
    "text:dragon", "context:", "{text context}:dragon", "dragon*", "*", "^dragon", "NEAR",
    "NEAR(dragon fire)", "dragon NEAR/2 fire", "AND", "OR", "NOT", "dragon AND fire OR NOT x",
    "(dragon", "dragon)", "((()))", "(((", "dragon + fire", "🐉", "🐉 dragon 🔥", "\U0001f600" * 50,
    "'; DROP TABLE books; --", "1=1 OR 'a'='a'", "SELECT * FROM chunks", "%_%", "\\", ".", ",;",
    "\x00", "\x00dragon\x01\x1f\x7f", "\ud800 lone surrogate", "dragon\u200bfire", "_", "__a__",
    "d" * 10_000, "dragon " * 2_000, "x" * 100_000,
]


WIDE = "the ＷＹＶＥＲＮ guards the inter\u00adnational border"  # full-width; a soft hyphen


def _random_paste(n: int, seed: int) -> str:
    rng = random.Random(seed)
    alphabet = "abcdefghij \"'-:*()^{}+.,;\\%_éüß猫である🐉\t\n\x00"
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.fixture
def library(tmp_path: Path) -> sqlite3.Connection:
    conn = open_library(tmp_path)
    add_book(conn, "bestiary", [
        ("Dragons", "Fire", ["the dragon breathes fire over the café", "NEAR the AND gate"]),
        ("Dragons", "Ice", ["a naïve frost wyrm sleeps"]),
        ("Dragons", "Wide", [WIDE]),
        ("Words", "Stop", ["to be or not to be"]),
    ], name="The Bestiary", context=True)
    add_book(conn, "neko", [("第一章", "", [
        "吾輩は猫である。名前はまだ無い。", "どこで生れたかとんと見当がつかぬ。"])],
        name="吾輩は猫である")
    return conn


@pytest.mark.parametrize("query", [*HOSTILE, _random_paste(10_000, 1), _random_paste(100_000, 2)])
def test_hostile_queries_never_raise(library: sqlite3.Connection, query: str) -> None:
    built = keyword.build_query(query)
    for expr in (built.word, built.trigram):
        assert expr is None or expr.count('"') % 2 == 0
    results = keyword.search(library, query, 10)
    assert isinstance(results, list)
    assert all(isinstance(cid, int) and score > 0 for cid, score in results)
    if len(query.strip()) > MAX_QUERY_CHARS:  # a question, not a document: refused in words
        with pytest.raises(GrimoireError, match="characters long; ask it in at most"):
            engine_for(library).search(query)
    else:
        engine_for(library).search(query if query.strip() else "x")
    assert library.execute("SELECT count(*) FROM books").fetchone()[0] == 2


def test_operator_words_are_plain_words(library: sqlite3.Connection) -> None:
    assert keyword.build_query("NEAR AND").word == '"near"'
    hits = keyword.search(library, "NEAR gate", 5)
    assert hits and len(hits) == 1


def test_query_shape_stop_words_and_cap() -> None:
    assert keyword.build_query("the history OF dragons").word == '"history" OR "dragons"'
    assert keyword.build_query("to be or not").word == '"to" OR "be" OR "or" OR "not"'
    assert keyword.build_query("!!! ...").empty
    many = " ".join(f"w{i:03d}" + "x" * (i % 7) for i in range(300))
    word = keyword.build_query(many).word or ""
    assert word.count(" OR ") == keyword.MAX_TOKENS - 1
    assert '"w006xxxxxx"' in word and '"w000"' not in word  # longest tokens kept


def test_all_stop_word_query_still_finds(library: sqlite3.Connection) -> None:
    ids = [cid for cid, _ in keyword.search(library, "To be, or not to be", 5)]
    texts = [store_search.hit_rows(library, ids)[i].text for i in ids]
    assert texts[0] == "to be or not to be"


@pytest.mark.parametrize(("query", "expected"), [
    ("cafe", "the dragon breathes fire over the café"),
    ("CAFÉ", "the dragon breathes fire over the café"),
    ("naive", "a naïve frost wyrm sleeps"),
    ("naïve wyrms", "a naïve frost wyrm sleeps"),  # stemming too
    ("wyvern", WIDE), ("ＷＹＶＥＲＮ", WIDE), ("international", WIDE),  # both sides NFKC-folded
    ("inter\u00adnational", WIDE),
])
def test_accents_fold(library: sqlite3.Connection, query: str, expected: str) -> None:
    ids = [cid for cid, _ in keyword.search(library, query, 5)]
    assert ids and store_search.hit_rows(library, ids[:1])[ids[0]].text == expected


def test_a_word_table_written_before_folding_still_finds_what_it_found(
        library: sqlite3.Connection) -> None:
    """A library indexed before the folding keeps its text as written until `reindex-fts`:
    a query typed the same way still finds it."""
    chunk = library.execute("SELECT id FROM chunks WHERE text = ?", (WIDE,)).fetchone()[0]
    library.execute("UPDATE chunks_fts SET text = ? WHERE rowid = ?", (WIDE, chunk))
    assert [cid for cid, _ in keyword.search(library, "ＷＹＶＥＲＮ", 5)] == [chunk]
    assert keyword.search(library, "international", 5) == []


@pytest.mark.parametrize(("query", "expected"), [
    ("猫である", "吾輩は猫である。名前はまだ無い。"),
    ("見当がつかぬ", "どこで生れたかとんと見当がつかぬ。"),
    ("名前はまだ", "吾輩は猫である。名前はまだ無い。"),
    ("吾輩", "吾輩は猫である。名前はまだ無い。"),  # 2 chars: prefix of an indexed run
    ("猫である dragon", "吾輩は猫である。名前はまだ無い。"),
])
def test_japanese_text_is_found(library: sqlite3.Connection, query: str, expected: str) -> None:
    ids = [cid for cid, _ in keyword.search(library, query, 5)]
    rows = store_search.hit_rows(library, ids)
    assert expected in [rows[i].text for i in ids]


def test_cjk_query_shapes() -> None:
    built = keyword.build_query("猫である")
    assert built.trigram == '"猫であ" OR "である"' and built.word is None
    assert keyword.build_query("名前").word == '"名前"*'
    mixed = keyword.build_query("dragon 猫である")
    assert mixed.word == '"dragon"' and mixed.trigram is not None
    assert (keyword.build_query("猫" * 10_000).trigram or "").count('"') == 2


def test_mixed_query_merges_both_tables(library: sqlite3.Connection) -> None:
    ids = [cid for cid, _ in keyword.search(library, "猫である dragon", 10)]
    slugs = {r.slug for r in store_search.hit_rows(library, ids).values()}
    assert slugs == {"bestiary", "neko"}


def test_english_query_does_not_hit_japanese(library: sqlite3.Connection) -> None:
    ids = [cid for cid, _ in keyword.search(library, "dragon", 10)]
    assert {r.slug for r in store_search.hit_rows(library, ids).values()} == {"bestiary"}


def test_text_outweighs_titles(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    add_book(conn, "lore", [("Dragon Lore", "Dragon Kinds", [
        "on the breeding of wyverns in the northern hills of the old kingdom"])],
        name="Dragon Lore")
    add_book(conn, "tales", [("Tales", "Misc", [
        "a dragon appeared in the village square one morning and the people ran away"])])
    add_book(conn, "filler", [("Misc", f"S{i}", [f"filler text {i} about gardens and kitchens"])
                              for i in range(20)])
    ids = [cid for cid, _ in keyword.search(conn, "dragon", 5)]
    rows = store_search.hit_rows(conn, ids)
    assert [rows[i].slug for i in ids] == ["tales", "lore"]  # both found, text first


def test_book_filter_inside_the_match(library: sqlite3.Connection) -> None:
    neko = library.execute("SELECT id FROM books WHERE slug = 'neko'").fetchone()[0]
    assert keyword.search(library, "dragon", 5, book_ids=[neko]) == []
    assert keyword.search(library, "dragon", 5, book_ids=[]) == []
    assert keyword.search(library, "猫である", 5, book_ids=[neko])
