"""A folder ingest killed mid-way (the book's structure committed, its contexts and
embeddings not all done), then the book's file moved or renamed before the next ``sync``:
that one sync re-points the book *and* finishes it, so every book is searchable after it.
Real CLI processes (one SIGKILLed at a kill point, ``faults.py``), real files and SQLite.
Before the fix the sync told the move and left the book unfinished; only a second sync
resumed it."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from helpers import write_markdown_book
from mcp_helpers import write_config
from resume_helpers import TIDES
from resume_helpers import json_in as _json
from resume_helpers import run_in as _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]  # a killed ingest, then 5 CLI runs


def _book(lib: Path, name: str) -> dict[str, Any]:
    [book] = [b for b in _json(lib, "status")["books"] if b["name"] == name]
    return book


def interrupted(lib: Path) -> dict[str, Any]:
    """A library of ``shelf/`` whose ingest was killed after the tide book's second
    context: that book unfinished (the other, smaller one ingested first, complete)."""
    write_config(lib)
    shelf = lib / "shelf"
    (shelf / "sea").mkdir(parents=True)
    write_markdown_book(shelf / "a-knots.md", "Knots", {"One": {"Bends": "A sheet bend "
                                                                "joins two ropes. " * 5}})
    write_markdown_book(shelf / "sea" / "tides.md", "Tides", TIDES)
    killed = _run(lib, "ingest", "shelf", "-q", kill_at="contexts.commit:3")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    book = _book(lib, "Tides")
    assert not book["complete"] and book["chunks"] >= 3, book
    return book


@pytest.mark.parametrize("move", ["rename the file", "move its folder"])
def test_one_sync_records_the_move_and_finishes_the_interrupted_book(
        tmp_path: Path, move: str) -> None:
    book = interrupted(tmp_path)
    shelf = tmp_path / "shelf"
    if move == "rename the file":
        (shelf / "sea" / "tides.md").rename(shelf / "sea" / "tide-tables.md")
        new = "sea/tide-tables.md"
    else:
        shutil.move(shelf / "sea", shelf / "coast")
        new = "coast/tides.md"
    pending = book["chunks"] - book["status"].get("embedded", 0)

    dry = _json(tmp_path, "sync", "--dry-run")  # says what the sync will embed
    [told] = [f for f in dry["files"] if f["slug"] == book["slug"]]
    assert (told["action"], told["path"], told["embedded"]) == ("moved", new, pending), dry
    assert dry["chunks_embedded"] == pending

    report = _json(tmp_path, "sync")
    [told] = [f for f in report["files"] if f["slug"] == book["slug"]]
    assert (told["action"], told["path"], told["embedded"]) == ("moved", new, pending), report
    assert report["counts"]["moved"] == 1 and report["counts"]["resumed"] == 0
    assert report["chunks_embedded"] == pending
    after = _book(tmp_path, "Tides")
    assert after["complete"] and after["status"].get("embedded") == after["chunks"], after
    [listed] = [b for b in _json(tmp_path, "list") if b["slug"] == book["slug"]]
    assert listed["source_path"] == str(shelf / new)
    hits = _json(tmp_path, "query", "harbour moon", "--book", book["slug"],
                 "--top-k", "50")["results"]
    assert hits and all(h["context"].startswith("Tides") for h in hits)
    again = _json(tmp_path, "sync")
    assert again["counts"]["unchanged"] == 2 and again["chunks_embedded"] == 0, again
