"""A dumb terminal (``TERM=dumb``: Emacs' shell, some IDE consoles) cannot redraw a bar, and
rich's bars there showed nothing until the run ended — minutes of silence for a large book.
There each stage is a plain line as it starts, now and then, and when it is done."""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.cli import rendering
from helpers import run_cli, write_markdown_book

# TTY_COMPATIBLE=1 makes rich treat the captured stderr as the terminal it would be
DUMB = {"TTY_COMPATIBLE": "1", "TERM": "dumb", "NO_COLOR": "1"}


def _library(tmp_path: Path) -> Path:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        "chunk_size = 120\nchunk_overlap = 20\n")
    return folder


def test_a_folder_shows_its_stage_before_its_first_file_is_done(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("tides", "dunes"):
        write_markdown_book(notes / f"{name}.md", name.title(), {
            "Sea": {"Currents": f"The {name} run along the coast. " * 30}})
    run = run_cli("ingest", str(notes), "--library", str(_library(tmp_path)), env=DUMB)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    added = next(i for i, line in enumerate(lines) if line.startswith("added "))
    assert any(line.startswith("chunks ") for line in lines[:added]), lines
    assert "\x1b" not in run.stderr and "\r" not in run.stderr, run.stderr


def test_a_long_stage_says_how_far_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.setattr(rendering, "DUMB_EVERY", 0.0)  # a line at every step
    book = write_markdown_book(tmp_path / "tides.md", "Tides", {
        "Sea": {f"Part {i}": f"Tide {i} turns at the harbour wall. " * 40 for i in range(6)}})
    run = run_cli("ingest", str(book), "--library", str(_library(tmp_path)), env=DUMB)
    assert run.returncode == 0, run.stderr
    embedding = [line.split() for line in run.stderr.splitlines()
                 if line.startswith("embeddings ")]
    assert embedding[0][1].startswith("0/"), run.stderr
    total = embedding[0][1].split("/")[1]
    assert embedding[-1][1] == f"{total}/{total}" and embedding[-1][-2] == "eta", run.stderr
    assert "tides: added" in run.stdout + run.stderr
