"""Books ingested one file at a time are never deleted by ``sync`` because their file is not
where it was: a folder not found (a drive not mounted) or a deleted file keeps the book —
still searchable — with a warning saying how to delete or re-point it, and a file renamed
in its own folder is re-pointed keeping its book id. ``sync --dry-run`` says the same. The
real CLI on a real SQLite library (until session 20 such books were removed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from db_state import snapshot
from helpers import write_markdown_book
from mcp_helpers import cli_command, write_config

pytestmark = pytest.mark.timeout(120)


def run(lib: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, text=True,
                          timeout=120)


def books(lib: Path) -> dict[str, dict[str, object]]:
    done = run(lib, "list", "--json")
    assert done.returncode == 0, done.stderr
    return {b["slug"]: b for b in json.loads(done.stdout)}


@pytest.fixture
def drive(tmp_path: Path) -> tuple[Path, Path]:
    """A library of two books ingested one file at a time from ``drive/``."""
    write_config(tmp_path)
    drive = tmp_path / "drive"
    drive.mkdir()
    write_markdown_book(drive / "manual.md", "Pump Manual", {
        "Valves": {"Seals": "The pump's seals are replaced every spring. " * 12}})
    (drive / "note.md").write_text("# N\n\nnote about owls, barn owls and tawny owls\n",
                                   encoding="utf-8")
    for name in ("manual.md", "note.md"):
        done = run(tmp_path, "ingest", str(drive / name))
        assert done.returncode == 0, done.stderr
    return tmp_path, drive


def test_a_missing_folder_keeps_both_books_and_they_are_still_found(
        drive: tuple[Path, Path]) -> None:
    lib, folder = drive
    before = books(lib)
    shutil.move(folder, lib / "drive.unmounted")  # the drive is not mounted
    for args in (["sync", "--dry-run"], ["sync"]):
        done = run(lib, *args)
        assert done.returncode == 0, done.stderr
        assert "removed" not in done.stderr.replace("0 removed", ""), done.stderr
        [warning] = [line for line in done.stderr.splitlines() if "warning:" in line]
        assert str(folder) in warning and "folder not found" in warning, done.stderr
        assert "manual.md" in done.stderr and "note.md" in done.stderr, done.stderr
        assert "are kept" in done.stderr and "delete" in done.stderr, done.stderr
    assert books(lib).keys() == before.keys()
    found = json.loads(run(lib, "query", "barn owls", "--json").stdout)
    assert any("owls" in hit["text"] for hit in found["results"]), found
    found = json.loads(run(lib, "query", "pump seals spring", "--json").stdout)
    assert found["results"] and found["results"][0]["book"] == "Pump Manual", found


def test_a_deleted_single_file_keeps_its_book_with_a_warning_under_json_too(
        drive: tuple[Path, Path]) -> None:
    lib, folder = drive
    (folder / "note.md").unlink()
    db_before = snapshot(lib / "book.db")
    dry = run(lib, "sync", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert snapshot(lib / "book.db") == db_before
    done = run(lib, "sync", "--json")
    assert done.returncode == 0, done.stderr
    for report in (json.loads(dry.stdout), json.loads(done.stdout)):
        assert report["counts"]["removed"] == 0, report
        [warning] = report["warnings"]
        assert warning.startswith(f"{folder / 'note.md'}: file not found; its book '"), warning
        assert "is kept" in warning and "grimoire-beholder delete n --yes" in warning, warning
        assert "--force if it changed" in warning, warning
        assert "ingest" in warning, warning
    assert len(books(lib)) == 2
    plain = run(lib, "sync")
    assert plain.returncode == 0 and "file not found" in plain.stderr, plain.stderr
    found = json.loads(run(lib, "query", "barn owls", "--json").stdout)
    assert found["results"], found


def test_a_file_renamed_in_place_keeps_its_book_id_and_shows_its_new_path(
        drive: tuple[Path, Path]) -> None:
    lib, folder = drive
    before = books(lib)
    [(slug, book)] = [(s, b) for s, b in before.items() if b["name"] == "Pump Manual"]
    (folder / "manual.md").rename(folder / "pump-manual.md")
    (folder / "other.md").write_text("# Other\n\nsomething else entirely\n", encoding="utf-8")
    dry = json.loads(run(lib, "sync", "--dry-run", "--json").stdout)
    assert dry["counts"]["moved"] == 1 and dry["counts"]["removed"] == 0, dry
    assert dry["warnings"] == [], dry
    assert books(lib)[slug]["id"] == book["id"]
    done = run(lib, "sync")
    assert done.returncode == 0, done.stderr
    assert "moved" in done.stdout + done.stderr and "removed" not in done.stderr, done
    after = books(lib)
    assert after.keys() == before.keys()  # other.md is not in a synced folder: not added
    assert after[slug]["id"] == book["id"]
    listed = run(lib, "list", "--json").stdout
    assert str(folder / "pump-manual.md") in listed and str(folder / "manual.md") not in listed
    status = run(lib, "status", "--json")
    assert status.returncode == 0, status.stderr
    [shown] = [b for b in json.loads(status.stdout)["books"] if b["slug"] == slug]
    assert shown["id"] == book["id"] and shown["complete"], shown  # nothing to re-embed
    again = json.loads(run(lib, "sync", "--json").stdout)
    assert again["counts"]["unchanged"] == 2 and again["warnings"] == [], again
