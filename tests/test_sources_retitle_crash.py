"""A Calibre retitle killed mid-way: ``sync`` reads a retitled book again under its new
title (external._Applier.update → the in-place re-cut), so a kill can land inside that
re-read. The fixture library (tests/data/calibre, made by calibredb: ``before/``, then
``after/`` book 1 retitled "Tide Tables of the Far North" and book 2 removed) is synced by a
real CLI process that SIGKILLs itself at a chosen point (faults.py). Whatever the point, the
library stays consistent and shows the book under one title; the next sync finishes it.
Before the fix the next sync took the half-read book for ``unchanged`` (its origin was
already saved under the new title) and left it unsearchable for good."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import run_cli
from mcp_helpers import FAKE_CONFIG, cli_command

pytestmark = pytest.mark.slow  # a real sync process SIGKILLed, then four more CLI runs

DATA = Path(__file__).parent / "data" / "calibre"
OLD, NEW = "Tide Tables of the North", "Tide Tables of the Far North"


def _cli(config: Path, *args: str) -> Any:
    run = run_cli(*args, "--json", "--config", str(config))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _books(config: Path) -> dict[str, dict[str, Any]]:
    return {b["name"]: b for b in _cli(config, "status")["books"]}


def _contexts(config: Path, slug: str) -> list[str]:
    hits = _cli(config, "query", "tide", "--book", slug, "--top-k", "100")["results"]
    return [h["context"] for h in hits]


# Inside the replacing transaction; after the first summary; after the second context;
# inside the first embedding transaction.
@pytest.mark.parametrize("kill_at", ["structure.before_commit:1", "summaries.commit:1",
                                     "contexts.commit:2", "embeddings.before_commit:1"])
def test_a_retitle_killed_mid_reread_shows_one_title_and_the_next_sync_finishes_it(
        tmp_path: Path, kill_at: str) -> None:
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA / "before", folder)
    config = tmp_path / "config.toml"  # small chunks: the book has several
    config.write_text(FAKE_CONFIG.replace("chunk_size = 120", "chunk_size = 60"))
    assert run_cli("ingest", str(folder), "-q", "--config", str(config)).returncode == 0
    chunks = _books(config)[OLD]["chunks"]
    assert chunks >= 3  # enough for a kill between two of its contexts

    shutil.rmtree(folder)  # Calibre retitles book 1 (renaming its folder), removes book 2
    shutil.copytree(DATA / "after", folder)
    killed = subprocess.run([*cli_command(), "sync", "-q", "--config", str(config)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "GRIMOIRE_BEHOLDER_KILL_AT": kill_at})
    assert killed.returncode == -signal.SIGKILL, killed.stderr  # the point was reached

    # What a user sees now: a sound library, the book under one title, never both.
    assert _cli(config, "check")["ok"]
    listed = {b["name"] for b in _cli(config, "list")}
    assert listed == {"Orchard Pruning", "Signal Lamps at Night", OLD if kill_at.startswith(
        "structure") else NEW}  # the removal never ran; the title is committed or not
    [(title, book)] = [(n, b) for n, b in _books(config).items() if n in (OLD, NEW)]
    assert all(c.startswith(title) for c in _contexts(config, book["slug"]))
    if title == OLD:
        assert book["complete"]  # the replacing transaction never committed
    else:
        assert not book["complete"]  # the re-read is unfinished, and a dry run says so
        dry = _cli(config, "sync", "--dry-run")
        [told] = [f for f in dry["files"] if f["slug"] == book["slug"]]
        pending = book["chunks"] - book["status"].get("embedded", 0)
        assert (told["action"], told["embedded"]) == ("resumed", pending)

    report = _cli(config, "sync")
    assert report["counts"]["failed"] == 0 and report["counts"]["removed"] == 1
    [told] = [f for f in report["files"] if f["slug"] == book["slug"]]
    assert told["action"] == ("updated" if title == OLD else "resumed")
    books = _books(config)
    assert set(books) == {"Orchard Pruning", NEW}
    renamed = books[NEW]
    assert (renamed["slug"], renamed["complete"]) == (book["slug"], True)
    assert renamed["status"].get("embedded") == renamed["chunks"] == chunks
    contexts = _contexts(config, renamed["slug"])
    assert contexts and all(c.startswith(NEW) for c in contexts)
    assert _cli(config, "check")["ok"]
    assert _cli(config, "sync")["counts"] == {**report["counts"], "unchanged": 2,
                                              "updated": 0, "resumed": 0, "removed": 0}
