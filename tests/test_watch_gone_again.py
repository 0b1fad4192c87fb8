"""``sync --watch`` over two folders, one of which goes away, comes back and goes away again
(a drive unplugged twice): its "folder not found; its books are kept" is said once while it
stays away, whatever the other folder's batches, and said again when it goes away a second
time. Meanwhile a search run by another process (``query``, with a persisted search index)
finds what each batch added, as soon as the batch is reported, from the persisted index: the
watch folds each batch into it, as ``sync`` does at its end (before, it was left as a delta
every search re-read until 2,000 chunks had gathered). The real CLI in subprocesses, real
files and SQLite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import CLI_CONFIG, CliWatch, cli_watching

pytestmark = [pytest.mark.slow,  # real subprocesses and real waiting
              pytest.mark.timeout(180)]


def _said(watch: CliWatch, text: str) -> int:
    return sum(1 for line in watch.err if text in line)


def _found(config: Path, word: str) -> set[str]:
    """The books a ``query`` run by another process finds for ``word``."""
    done = subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", "query", word,
                           "--json", "--config", str(config)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {hit["book"]["slug"] if isinstance(hit.get("book"), dict) else hit["slug"]
            for hit in json.loads(done.stdout)["results"]}


def test_a_folder_gone_twice_is_said_twice_and_searches_see_each_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIMOIRE_BEHOLDER_INDEX_MIN_ROWS", "1")  # a persisted index, always
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        for name in ("home", "work"):
            (tmp_path / name).mkdir()
            (tmp_path / name / f"{name}.md").write_text(
                f"# {name}\n\nA note about {name} tides.\n", encoding="utf-8")
            if name == "home":  # enough chunks that a batch's few are a delta to fold
                (tmp_path / name / "almanac.md").write_text("".join(
                    f"## Day {n}\n\nOn day {n} the tide turned at hour {n % 12} and the "
                    f"harbour master logged boat {n}.\n\n" for n in range(40)),
                    encoding="utf-8")
            lib.ingest_folder(tmp_path / name)
    config = tmp_path / "config.toml"
    config.write_text(CLI_CONFIG, encoding="utf-8")
    home, work = tmp_path / "home", tmp_path / "work"
    assert (tmp_path / "book.db.search").is_dir()

    with cli_watching(config) as watch:
        shutil.move(work, tmp_path / "unplugged")  # gone: said once
        assert watch.until(lambda: _said(watch, "folder not found") == 1), watch.err
        watch.edit(home / "home.md", "Neap tides")
        watch.edit(home / "home.md", "Spring tides")
        assert _said(watch, "folder not found") == 1, watch.err

        reports = len(watch.out)  # a batch adds a book: another process's search finds it
        (home / "lamps.md").write_text("# Lamps\n\nThe keeper trims the brasswick at dusk.\n",
                                       encoding="utf-8")
        assert watch.until(lambda: len(watch.out) > reports), watch.err
        assert "lamps" in _found(config, "brasswick")
        # ... from the persisted index itself, folded as a sync folds it at its end: left
        # as a delta, every search (each `query` process) read it from the database again
        with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
            assert lib.update_search_index(force=False) == "fresh"

        shutil.move(tmp_path / "unplugged", work)  # back, then gone again: said again
        assert watch.until(lambda: _said(watch, "watching it again") >= 1), watch.err
        watch.edit(work / "work.md", "Ebb tides")
        shutil.move(work, tmp_path / "unplugged")
        assert watch.until(lambda: _said(watch, "folder not found") == 2), watch.err
        watch.edit(home / "home.md", "Slack water")
        assert _said(watch, "folder not found") == 2, watch.err
        assert os.path.isdir(tmp_path / "unplugged")
