"""``ingest --force --name NEW`` on a book already in the library renames it in place: its
chunks' situating contexts (``Book › Chapter › Section. …``, which the keyword index and the
embedder both read) are made again under the new name, so a search finds the renamed book
exactly as it finds a book first ingested under that name, and the old name is gone from
every context. They were carried over from the old book, so searches kept matching the old
name and the vectors kept the old one in."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import GARDEN_CHAPTERS, run_cli, write_markdown_book
from mcp_helpers import cli_command

OLD, NEW = "Kitchen Garden Manual", "Heron Almanac"


def _library(folder: Path) -> list[str]:
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        "chunk_size = 120\nchunk_overlap = 20\n")
    return ["--library", str(folder)]


def _hits(lib: list[str], question: str, *options: str) -> list[dict[str, Any]]:
    run = run_cli("query", question, "--top-k", "100", "--json", *options, *lib)
    assert run.returncode == 0, run.stderr
    return list(json.loads(run.stdout)["results"])


def _seen(hits: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a reader sees of each hit, in order."""
    return [(h["slug"], h["book"], h["section"], h["context"], h["text"], h["score"],
             h["ranks"]) for h in hits]


def test_force_name_renames_contexts_as_a_fresh_ingest_would(tmp_path: Path) -> None:
    book = write_markdown_book(tmp_path / "garden.md", OLD, GARDEN_CHAPTERS)
    renamed, fresh = _library(tmp_path / "renamed"), _library(tmp_path / "fresh")
    assert run_cli("ingest", str(book), "-q", *renamed).returncode == 0
    assert all(h["context"].startswith(OLD) for h in _hits(renamed, "compost heap"))

    forced = run_cli("ingest", str(book), "--force", "--name", NEW, "--json", *renamed)
    assert forced.returncode == 0, forced.stderr
    report = json.loads(forced.stdout)
    assert (report["slug"], report["name"]) == ("heron-almanac", NEW)
    assert report["embedded"] == report["chunks"]  # every context named the old book
    assert run_cli("ingest", str(book), "--name", NEW, "-q", *fresh).returncode == 0

    for question in (NEW.lower(), "slugs at night"):
        after = _hits(renamed, question)
        assert len({h["section"] for h in after}) == 4  # every section of the book
        assert not [h["context"] for h in after if OLD in h["context"]]
        assert _seen(after) == _seen(_hits(fresh, question))
    assert _hits(renamed, "manual", "--mode", "keyword") == []  # a word of the old name only


@pytest.mark.slow  # three CLI processes, two of them killed
@pytest.mark.parametrize("kill_at", ["structure.before_commit:1", "contexts.commit:3"])
def test_a_rename_killed_midway_is_the_old_book_or_finishes_under_the_new_name(
        tmp_path: Path, kill_at: str) -> None:
    """Killed inside the replacing transaction, the book is as it was (old name, complete);
    killed while the new name's contexts are written, it is the renamed book, unfinished, and
    running the same command again finishes it with no trace of the old name."""
    book = write_markdown_book(tmp_path / "garden.md", OLD, GARDEN_CHAPTERS)
    lib = _library(tmp_path / "lib")
    assert run_cli("ingest", str(book), "-q", *lib).returncode == 0
    rename = ["ingest", str(book), "--force", "--name", NEW, "-q", *lib]
    killed = subprocess.run([*cli_command(), *rename], capture_output=True, text=True,
                            env={**os.environ, "GRIMOIRE_BEHOLDER_KILL_AT": kill_at},
                            timeout=120)
    assert killed.returncode != 0
    [state] = json.loads(run_cli("status", "--json", *lib).stdout)["books"]
    if kill_at.startswith("structure"):
        assert (state["name"], state["complete"]) == (OLD, True)
        assert all(h["context"].startswith(OLD) for h in _hits(lib, "compost heap"))
        return
    assert (state["name"], state["complete"]) == (NEW, False)
    assert run_cli(*rename).returncode == 0
    [state] = json.loads(run_cli("status", "--json", *lib).stdout)["books"]
    assert (state["name"], state["complete"]) == (NEW, True)
    contexts = [h["context"] for h in _hits(lib, "compost heap")]
    assert contexts and all(c.startswith(NEW) for c in contexts)
