"""Token-savings counters: recorded beside the library, also from a read-only library."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fakes import FakeEmbedder
from grimoire_beholder.cli.entry import app
from grimoire_beholder.library import Library
from grimoire_beholder.store.stat_queries import stats_path
from helpers import fake_config


def test_searches_add_up(tmp_path: Path, sample_book: Path) -> None:
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
        assert lib.savings().searches == 0
        first = lib.search("slugs and copper tape", top_k=2)
        lib.search("nothing matches zzzzqqq", mode="keyword")  # no hits: not counted
        served = sum(len(h.text) + len(h.context or "") for h in first.hits)
    with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as ro:
        ro.search("aphids", top_k=1)  # the MCP path: library read-only, stats file writable
        stats = ro.savings().to_dict()
    assert stats_path(config.database_path) == tmp_path / "book.stats.db"
    assert stats["searches"] == 2
    assert stats["chars_served"] > served
    book_chars = stats["chars_books"] // 2
    assert book_chars > 4 * 6 * 80  # the whole garden book, counted once per search
    assert stats["chars_saved"] == stats["chars_books"] - stats["chars_served"]
    assert 0.0 < stats["saving_ratio"] < 1.0


def test_recording_never_breaks_a_search(tmp_path: Path, sample_book: Path) -> None:
    config = fake_config(tmp_path)
    stats_path(config.database_path).mkdir()  # a directory where the file should be
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
        assert lib.search("slugs").hits
        assert lib.search("aphids").hits
    off = fake_config(tmp_path / "off", record_stats=False)
    (tmp_path / "off").mkdir()
    with Library.open(config=off, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
        lib.search("slugs")
    assert not stats_path(off.database_path).exists()


def test_stats_command(tmp_path: Path, sample_book: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('db_path = "lib.db"\nembedding_backend = "fake"\n')
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(sample_book), "-q", "-c", str(config)]).exit_code == 0
    assert "no searches recorded" in runner.invoke(app, ["stats", "-c", str(config)]).stdout
    assert runner.invoke(app, ["query", "slugs copper", "-c", str(config)]).exit_code == 0
    out = runner.invoke(app, ["stats", "-c", str(config)]).stdout
    assert "searches:        1" in out and "tokens" in out
