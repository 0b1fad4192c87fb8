"""SearchEngine end to end on real SQLite libraries built through the store functions
(``helpers.add_book``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.config import Config
from grimoire_beholder.errors import BookNotFoundError, GrimoireError, ModelError
from grimoire_beholder.search import passages
from grimoire_beholder.search.engine import MAX_QUERY_CHARS, SearchEngine
from helpers import add_book, engine_for, open_library, remove_book

HIT_KEYS = ["rank", "score", "ranks", "book_id", "slug", "book", "author", "source_type",
            "source_path", "chapter_index", "chapter", "section_index", "section", "page_start",
            "page_end", "line_start", "line_end", "text", "context", "group", "role", "link",
            "relative_path", "page_label", "citation", "location"]

FILLER = ["lantern", "harbour", "compass", "orchard", "granite", "meadow", "violin", "copper"]


@pytest.fixture
def two_books(tmp_path: Path) -> sqlite3.Connection:
    """A big book that dominates "dragon fire" and a small one that mentions dragons."""
    conn = open_library(tmp_path)
    big = [("Fire", f"Part {i}", [f"dragon fire dragon fire breath {FILLER[i % 8]} {i}"])
           for i in range(40)]
    add_book(conn, "big-dragons", big, author="Ann Smaug")
    small = [("Notes", f"Note {i}", [f"a dragon seen near the {FILLER[i]} at dawn"])
             for i in range(6)]
    add_book(conn, "small-notes", small, author="Émile Zola", source_type="markdown")
    return conn


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_filters_apply_before_top_k(two_books: sqlite3.Connection, mode: str) -> None:
    engine = engine_for(two_books, candidate_pool_size=5)
    unfiltered = engine.search("dragon fire", top_k=5, mode=mode)
    assert [h.slug for h in unfiltered.hits] == ["big-dragons"] * 5
    filtered = engine.search("dragon fire", top_k=5, book="small-notes", mode=mode)
    assert len(filtered.hits) == 5
    assert {h.slug for h in filtered.hits} == {"small-notes"}
    assert [h.rank for h in filtered.hits] == [1, 2, 3, 4, 5]


def test_book_filter_by_numeric_id_and_unknown_book(two_books: sqlite3.Connection) -> None:
    engine = engine_for(two_books)
    small_id = engine.search("dragon", book="small-notes").hits[0].book_id
    assert {h.book_id for h in engine.search("dragon", book=str(small_id)).hits} == {small_id}
    assert {h.book_id for h in engine.search("dragon", book=small_id).hits} == {small_id}
    with pytest.raises(BookNotFoundError, match="small-notes"):
        engine.search("dragon", book="small-note")
    with pytest.raises(BookNotFoundError, match="big-dragons, small-notes"):
        engine.search("dragon", book="zzz")


def test_author_and_source_type_filters(two_books: sqlite3.Connection) -> None:
    engine = engine_for(two_books)
    assert {h.slug for h in engine.search("dragon", author="émile").hits} == {"small-notes"}
    assert {h.slug for h in engine.search("dragon", author="SMAUG").hits} == {"big-dragons"}
    assert {h.slug for h in engine.search("dragon", source_type="markdown").hits} == {
        "small-notes"}
    empty = engine.search("dragon", author="zola", source_type="text")
    assert empty.hits == [] and empty.note == "no book matches the filters"
    with pytest.raises(GrimoireError, match="pdf, epub, markdown, text, html, docx"):
        engine.search("dragon", source_type="mobi")


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_one_line_error(two_books: sqlite3.Connection, query: str) -> None:
    with pytest.raises(GrimoireError, match=r"^empty query$"):
        engine_for(two_books).search(query)


@pytest.mark.parametrize("top_k", [0, -1, 101])
def test_top_k_is_bounded(two_books: sqlite3.Connection, top_k: int) -> None:
    with pytest.raises(GrimoireError, match="top_k"):
        engine_for(two_books).search("dragon", top_k=top_k)


def test_empty_library_and_no_match(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    assert engine_for(conn).search("anything").note == "the library is empty"
    add_book(conn, "pending", [("C", "S", ["not embedded yet"])], embed=False)
    assert "not finished" in (engine_for(conn).search("anything").note or "")
    add_book(conn, "real", [("C", "S", ["the quick brown fox"])])
    result = engine_for(conn).search("zyzzyva", mode="keyword")
    assert result.hits == [] and result.note == (  # the book not embedded is named
        "no match; 1 book is only partly searchable: pending (0 of 1 chunk); run "
        "`grimoire-beholder ingest` again to finish it")
    assert engine_for(conn).search("zyzzyva", book="real", mode="keyword").note == "no match"


def test_without_embedder_hybrid_degrades_and_vector_raises(
        two_books: sqlite3.Connection) -> None:
    engine = engine_for(two_books, embed=False)
    result = engine.search("dragon")
    assert result.mode == "keyword" and result.hits
    assert "keyword search only" in (result.note or "")
    with pytest.raises(ModelError):
        engine.search("dragon", mode="vector")
    with pytest.raises(GrimoireError, match="unknown search mode"):
        engine.search("dragon", mode="semantic")


def test_to_dict_keys_exactly(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    add_book(conn, "keys", [("Chapter", "Sec", ["keys and locks"])], author="A", context=True)
    result = engine_for(conn).search("keys", explain=True)
    data = result.to_dict()
    assert list(data) == ["query", "mode", "fusion", "results", "note", "confidence",
                          "low_confidence", "timings_ms", "explain"]
    assert list(data["results"][0]) == HIT_KEYS
    hit = data["results"][0]
    assert hit["ranks"] == {"vector": 1, "keyword": 1}
    assert hit["section"] == "Chapter › Sec" and hit["context"] == "Context for keys."
    assert data["mode"] == "hybrid" and data["fusion"] == "convex"
    assert {"filters", "embed", "vector", "keyword", "fusion", "fetch", "total"} <= set(
        data["timings_ms"])
    assert data["explain"][0]["arms"]["keyword"]["rank"] == 1
    plain = engine_for(conn).search("keys", mode="keyword").to_dict()
    assert "explain" not in plain
    assert plain["results"][0]["ranks"] == {"vector": None, "keyword": 1}


def test_page_label_citation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each chunk here is a few words: cite the chunks themselves, not passages around them.
    monkeypatch.setattr(passages, "PASSAGE_CHARS", 0)
    conn = open_library(tmp_path)
    add_book(conn, "labelled", [("Preface", "", [("roman numerals preface", 2, 2),
                                                  ("spanning pages", 2, 3)])],
             source_type="pdf", page_labels={1: "xi", 2: "xii", 3: "1"})
    add_book(conn, "plain", [("One", "", [("unlabelled numerals", 5, 6)])], source_type="pdf")
    engine = engine_for(conn)
    hit = engine.search("roman numerals", book="labelled", mode="keyword").hits[0]
    assert (hit.page_start, hit.page_end, hit.page_label) == (2, 2, "xii")
    hit = engine.search("spanning", mode="keyword").hits[0]
    assert hit.page_label == "xii–1"
    hit = engine.search("unlabelled", mode="keyword").hits[0]
    assert (hit.page_start, hit.page_end, hit.page_label) == (5, 6, None)


def test_engine_sees_added_and_deleted_books(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    first = add_book(conn, "first", [("C", "S", ["griffin feathers and claws"])])
    engine = engine_for(conn)
    assert engine.search("griffin", mode="vector").hits[0].slug == "first"
    add_book(conn, "second", [("C", "S", ["manticore tail spikes"])])
    assert engine.search("manticore tail spikes", mode="vector").hits[0].slug == "second"
    remove_book(conn, first)
    hits = engine.search("griffin feathers", mode="hybrid").hits
    assert {h.slug for h in hits} == {"second"}


def test_convex_fusion_and_hostile_queries(two_books: sqlite3.Connection) -> None:
    engine = engine_for(two_books, fusion="convex", fusion_alpha=0.3)
    result = engine.search("dragon fire", top_k=3)
    assert result.fusion == "convex" and len(result.hits) == 3
    assert result.hits[0].score >= result.hits[1].score >= result.hits[2].score
    for query in ['"unbalanced', "NEAR(a b", "dragon -fire:*", "🐉🔥", "x" * MAX_QUERY_CHARS,
                  "'; DROP TABLE books; --", "\ud800 dragon", "\x00\x07"]:
        engine.search(query)
    with pytest.raises(GrimoireError, match="100,000 characters long; ask it in at most 2,000"):
        engine.search("x" * 100_000)  # a question, not a document
    assert engine.search("dragon").hits


def test_failing_embedder_is_not_masked(two_books: sqlite3.Connection) -> None:
    def broken(_: str) -> np.ndarray:
        raise ModelError("cannot reach Ollama")

    engine = SearchEngine(two_books, lambda: broken, Config())
    for mode in ("hybrid", "vector"):
        with pytest.raises(ModelError, match="Ollama"):
            engine.search("dragon", mode=mode)
    assert engine.search("dragon", mode="keyword").hits


def test_a_shallow_pool_fuses_like_a_deep_one(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Convex fusion adds each chunk's cosine and keyword score: a chunk the keyword arm
    pooled but the vector arm's pool did not reach counts its real cosine, not 0, so its
    fused score is the one a pool deep enough to hold it in both arms gives."""
    from grimoire_beholder.search import ranking

    monkeypatch.setattr(ranking, "PROXIMITY_WEIGHT", 0.0)  # the plain fused scores
    conn = open_library(tmp_path)
    # The fake embedder reads stop words, the keyword arm drops them: the nearest vectors
    # are the stop-word notes, the keyword arm finds only the zebras.
    add_book(conn, "notes", [("Notes", f"Note {i}", [f"in the of and a to {FILLER[i]}"])
                             for i in range(8)])
    add_book(conn, "zebras", [("Plains", f"Herd {i}", [f"zebra grazing {FILLER[i]} {i}"])
                              for i in range(8)])
    query = "zebra in the of and a to"

    def fused(pool: int, top_k: int) -> dict[int, tuple[float, int | None]]:
        result = engine_for(conn, candidate_pool_size=pool, fusion_alpha=0.3).search(
            query, top_k=top_k, explain=True)
        return {e["chunk_id"]: (e["fused"], e["arms"]["vector"]["rank"])
                for e in result.explain or []}

    shallow, deep = fused(1, 1), fused(100, 16)  # pools of 3 (3 x top_k) and all 16 chunks
    (chunk_id, (score, vector_rank)), = shallow.items()
    assert vector_rank is None and deep[chunk_id][1] is not None  # missed by a shallow pool
    assert score == pytest.approx(deep[chunk_id][0])


def test_hits_show_a_book_renamed_by_another_connection(two_books: sqlite3.Connection,
                                                        tmp_path: Path) -> None:
    """Hit rows keep what they read of each book only while the library is unchanged: a
    rename committed elsewhere (a Calibre or Zotero sync) shows in the next search."""
    from grimoire_beholder.store import db
    from grimoire_beholder.store.source_rows import rename_book
    from grimoire_beholder.store.transactions import transaction

    engine = engine_for(two_books)
    first = engine.search("dragon", book="small-notes").hits
    assert {(h.book, h.author) for h in first} == {("Small Notes", "Émile Zola")}
    other = db.connect(tmp_path / "library.db")
    with transaction(other):
        rename_book(other, first[0].book_id, "Carnets", "É. Zola")
    other.close()
    again = engine.search("dragon", book="small-notes").hits
    assert {(h.book, h.author) for h in again} == {("Carnets", "É. Zola")}
    assert again[0].citation.book == "Carnets"
