"""Reading position: a search limited to chapter N never returns a hit from a later chapter
(property-tested), and the limit is applied before top-k, in both arms."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from books_gen import cli_library
from fakes import FakeEmbedder
from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import GrimoireError, NotFoundError
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book

VOCAB = ["lantern", "harbour", "storm", "keeper", "ledger", "gull", "rope", "tide", "oil",
         "signal", "wreck", "fog", "bell", "cliff", "island", "letter"]
CHAPTERS = 8


def novel(path: Path) -> Path:
    """Eight chapters of three sections, all drawing on one vocabulary (every word appears
    in every part of the book, so an unlimited search returns hits from everywhere)."""
    rng = random.Random(7)
    chapters = {}
    for c in range(CHAPTERS):
        chapters[f"Chapter {c + 1}: {VOCAB[c].title()}"] = {
            f"Part {c + 1}.{s + 1}": " ".join(
                " ".join(rng.choice(VOCAB) for _ in range(12)) + "." for _ in range(8))
            for s in range(3)}
    return write_markdown_book(path, "The Novel", chapters)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    root = tmp_path_factory.mktemp("novel")
    library = Library.open(config=fake_config(root), embedder=FakeEmbedder())
    library.ingest(novel(root / "novel.md"))
    yield library
    library.close()


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5),
       until=st.integers(0, CHAPTERS - 1), top_k=st.integers(1, 12),
       mode=st.sampled_from(["hybrid", "vector", "keyword"]), by_title=st.booleans())
def test_no_hit_comes_from_a_later_chapter(lib: Library, words: list[str], until: int,
                                           top_k: int, mode: str, by_title: bool) -> None:
    titles = [c.title for c in lib.outline("the-novel").chapters]
    limit: int | str = titles[until] if by_title else until
    results = lib.search(" ".join(words), top_k=top_k, book="the-novel", mode=mode,
                         until_chapter=limit)
    assert results.hits, "the chapters up to the limit hold every word"
    assert all(hit.chapter_index <= until for hit in results.hits)
    unlimited = lib.search(" ".join(words), top_k=top_k, book="the-novel", mode=mode)
    assert len(results.hits) >= min(len(unlimited.hits), until + 1)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_the_limit_is_applied_before_top_k(tmp_path: Path, mode: str) -> None:
    """One early mention among many later ones, and a pool of three candidates per arm:
    filtering after top-k would find nothing."""
    late = {f"Part {c}": "The lantern lantern lantern burned all night. " * 3
            for c in range(4)}
    chapters = {"Chapter 1": {"Opening": "Rain on the harbour wall; a lantern in one window."},
                **{f"Chapter {c}": dict(late) for c in range(2, 8)}}
    book = write_markdown_book(tmp_path / "book.md", "Lanterns", chapters)
    config = fake_config(tmp_path, candidate_pool_size=1)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        everything = lib.search("lantern", top_k=1, book="lanterns", mode=mode)
        assert everything.hits[0].chapter_index > 0
        early = lib.search("lantern", top_k=1, book="lanterns", mode=mode, until_chapter=0)
        assert [h.chapter_index for h in early.hits] == [0]


def test_chapter_names_and_mistakes(lib: Library) -> None:
    def chapters(until: int | str) -> set[int]:
        hits = lib.search("lantern storm", top_k=20, book="the-novel", until_chapter=until).hits
        return {h.chapter_index for h in hits}

    assert max(chapters("chapter 3")) == 2  # a title prefix, as a whole word
    assert max(chapters("3")) == 3  # digits are an index
    assert max(chapters("chapter 2: HARBOUR")) == 1  # exact title, any case
    with pytest.raises(GrimoireError, match="needs one book"):
        lib.search("lantern", until_chapter=2)
    with pytest.raises(NotFoundError, match="chapters 0–7, not 12"):
        lib.search("lantern", book="the-novel", until_chapter=12)
    novel_id = lib.book("the-novel").id  # named by its slug however it was given
    for named in ("the-novel", novel_id, str(novel_id)):
        with pytest.raises(NotFoundError, match=r"^book 'the-novel' has chapters 0–7, not 12$"):
            lib.search("lantern", book=named, until_chapter=12)
        with pytest.raises(GrimoireError, match=r"^no chapter of 'the-novel'"):
            lib.search("lantern", book=named, until_chapter="Epilogue")
    with pytest.raises(NotFoundError, match="no chapter"):
        lib.search("lantern", book="the-novel", until_chapter="Epilogue")
    with pytest.raises(GrimoireError, match="several chapters"):
        lib.search("lantern", book="the-novel", until_chapter="chapter")
    with pytest.raises(NotFoundError, match="chapters 0–7, not 9999"):  # past int()'s limit
        lib.search("lantern", book="the-novel", until_chapter="9" * 5000)
    for digit_like in ("²", "١٢"):  # digits to str.isdigit, not chapter indices
        with pytest.raises(NotFoundError, match="no chapter"):
            lib.search("lantern", book="the-novel", until_chapter=digit_like)


def test_cli_query_until(tmp_path: Path) -> None:
    config = cli_library(tmp_path, novel(tmp_path / "novel.md"))
    runner = CliRunner()
    result = runner.invoke(app, ["query", "lantern wreck", "--book", "the-novel", "--until",
                                 "Chapter 2", "--json", "-k", "10", "--config", str(config)])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["results"]
    assert hits and {h["chapter_index"] for h in hits} <= {0, 1}
    bad = runner.invoke(app, ["query", "lantern", "--until", "2", "--config", str(config)])
    assert bad.exit_code == 1 and "needs one book" in bad.output
    # the CLI user is told the options they typed, not only the MCP argument's name
    assert "--until" in bad.output and "--book" in bad.output
