"""A book an interrupted ingest left half-done whose file is now missing (its folder's drive
unplugged, its Calibre file removed by hand, the whole Calibre library away): finishing it
needs no file — its chunks and sections are stored — so ``sync`` finishes it from what is
stored, tells it as *resumed* and says, in a warning, that its file is not on disk; a dry
run counts its chunks. Real CLI processes (the ingest SIGKILLed at a kill point), real files
and SQLite. Before the fix a Calibre book so left stayed unfinished (``skipped``, or not
looked at when the library was missing), and a folder's said nothing about its file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers import write_markdown_book
from resume_helpers import TIDES
from resume_helpers import interrupt as _interrupt
from resume_helpers import json_in as _json
from resume_helpers import unfinished as _unfinished

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]  # a killed ingest, then 5 CLI runs

CALIBRE = Path(__file__).parent / "data" / "calibre" / "before"


def _finished_from_what_is_stored(lib: Path, book: dict[str, Any]) -> None:
    pending = book["chunks"] - book["status"].get("embedded", 0)
    assert pending > 0
    dry = _json(lib, "sync", "--dry-run")
    [told] = [f for f in dry["files"] if f["slug"] == book["slug"]]
    assert (told["action"], told["embedded"]) == ("resumed", pending), dry
    assert _unfinished(lib) == [book]  # the dry run wrote nothing

    report = _json(lib, "sync")
    [told] = [f for f in report["files"] if f["slug"] == book["slug"]]
    assert (told["action"], told["embedded"]) == ("resumed", pending), report
    assert report["counts"]["removed"] == 0 and report["counts"]["failed"] == 0
    assert any("on disk" in w and "finished from what is stored" in w
               and told["path"] in w for w in report["warnings"]), report["warnings"]
    assert _unfinished(lib) == []
    hits = _json(lib, "query", "tide", "--book", book["slug"], "--top-k", "20")["results"]
    assert hits and all(h["context"].startswith(book["name"]) for h in hits)
    again = _json(lib, "sync")  # nothing left to finish, nothing said about it again
    assert again["counts"]["resumed"] == 0 and again["chunks_embedded"] == 0, again
    assert not any("finished from what is stored" in w for w in again["warnings"])


@pytest.mark.parametrize("gone", ["drive unplugged", "empty mount point"])
def test_a_folder_book_whose_drive_is_away_is_finished_from_what_is_stored(
        tmp_path: Path, gone: str) -> None:
    drive = tmp_path / "drive"
    drive.mkdir()
    write_markdown_book(drive / "knots.md", "Knots", {"One": {"Bends": "A sheet bend joins "
                                                                      "two ropes. " * 3}})
    write_markdown_book(drive / "tides.md", "Tide Tables", TIDES)
    book = _interrupt(tmp_path, drive)
    assert book["name"] == "Tide Tables"
    shutil.move(drive, tmp_path / "away")
    if gone == "empty mount point":
        drive.mkdir()
    _finished_from_what_is_stored(tmp_path, book)
    assert len(_json(tmp_path, "list")) == 2  # both books kept


@pytest.mark.parametrize("gone", ["its file removed", "the library away"])
def test_a_calibre_book_whose_file_is_missing_is_finished_from_what_is_stored(
        tmp_path: Path, gone: str) -> None:
    library = tmp_path / "Calibre Library"
    shutil.copytree(CALIBRE, library)
    book = _interrupt(tmp_path, library)
    if gone == "its file removed":
        [path] = [b["source_path"] for b in _json(tmp_path, "list")
                  if b["slug"] == book["slug"]]
        Path(path).unlink()
    else:
        shutil.move(library, tmp_path / "away")
    _finished_from_what_is_stored(tmp_path, book)
