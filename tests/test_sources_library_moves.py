"""A Calibre library moved or renamed between syncs: ingested where it is now, its books
follow it (moved, nothing embedded again, links renamed, deleted books still left out)
instead of each being added a second time beside the old ones, with a warning about the old
folder on every later sync. A copy made while the original is still there is a library of
its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data" / "calibre" / "before"


def _run(config: str, *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [*args, "--config", config, "--json"])
    return result.exit_code, json.loads(result.stdout or "{}"), result.stderr


def _books(config: str) -> dict[str, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    return {b["slug"]: b for b in json.loads(result.stdout)}


def test_a_moved_calibre_library_is_followed_not_added_again(tmp_path: Path) -> None:
    old = tmp_path / "Calibre Library"
    shutil.copytree(DATA, old)
    config = str(write_config(tmp_path))
    assert _run(config, "ingest", str(old))[0] == 0
    assert _run(config, "delete", "orchard-pruning", "--yes")[0] == 0
    before = _books(config)
    assert set(before) == {"tide-tables-of-the-north", "signal-lamps-at-night"}

    new = tmp_path / "disk2" / "Books"
    new.parent.mkdir()
    old.rename(new)
    code, report, _ = _run(config, "sync")
    assert code == 0 and "moved? `ingest` it where it is now" in report["warnings"][0]
    code, report, stderr = _run(config, "ingest", str(new))
    assert code == 0, stderr
    assert f"{new.resolve()} is the Calibre library that was at {old}" in stderr
    assert report["counts"]["moved"] == 2 and report["counts"]["added"] == 0
    assert report["chunks_embedded"] == 0
    after = _books(config)
    assert set(after) == set(before)  # no second copy; orchard-pruning stays deleted
    assert {b["id"] for b in after.values()} == {b["id"] for b in before.values()}
    tides = after["tide-tables-of-the-north"]
    assert tides["link"] == "calibre://show-book/_hex_-426F6F6B73/1"  # named by "Books"
    assert tides["tags"] == ["navigation", "sea"]
    code, report, stderr = _run(config, "sync")
    assert code == 0 and report["warnings"] == [] and report["counts"]["unchanged"] == 2


def test_a_copy_beside_the_original_is_a_library_of_its_own(tmp_path: Path) -> None:
    original = tmp_path / "Calibre Library"
    shutil.copytree(DATA, original)
    config = str(write_config(tmp_path))
    assert _run(config, "ingest", str(original))[0] == 0
    copy = tmp_path / "Backup"
    shutil.copytree(original, copy)
    code, report, _ = _run(config, "ingest", str(copy))
    assert code == 0 and report["counts"]["added"] == 3 and report["counts"]["moved"] == 0
    assert len(_books(config)) == 6


def test_sync_of_a_mistyped_path_inside_a_library_is_an_error(tmp_path: Path) -> None:
    """As for a folder (a typo said 'unchanged 0', exit 0): it synced the whole library."""
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA, folder)
    config = str(write_config(tmp_path))
    assert _run(config, "ingest", str(folder))[0] == 0
    result = CliRunner().invoke(app, ["sync", str(folder / "Mara Quil"), "--config", config])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {folder / 'Mara Quil'}: no such file or folder"
    inside = CliRunner().invoke(app, ["sync", str(folder / "Mara Quill"), "--config", config])
    assert inside.exit_code == 0, inside.output


def test_unfollow_a_calibre_library(tmp_path: Path) -> None:
    """`unfollow` took only folders of files ('not a followed folder; followed: none'): a
    library could be stopped only by deleting each of its books, and sync still read it."""
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA, folder)
    config = str(write_config(tmp_path))
    assert _run(config, "ingest", str(folder))[0] == 0
    assert _run(config, "delete", "orchard-pruning", "--yes")[0] == 0
    code, report, stderr = _run(config, "unfollow", str(folder))
    assert code == 0, stderr
    assert report["folder"] == str(folder.resolve()) and len(report["books"]) == 2
    books = _books(config)
    assert set(books) == {"tide-tables-of-the-north", "signal-lamps-at-night"}
    assert all(b["link"] is None and b["tags"] == [] for b in books.values())
    code, report, _ = _run(config, "sync")  # its books are single files now
    assert code == 0 and report["counts"]["unchanged"] == 2 and report["warnings"] == []
    assert _run(config, "unfollow", str(folder))[0] == 1  # not followed any more

    code, report, _ = _run(config, "ingest", str(folder))  # followed again: the books it
    assert code == 0 and report["counts"]["updated"] == 2  # left are its items' books again
    assert report["counts"]["added"] == 1 and report["chunks_embedded"] == 2  # + orchard
    again = _books(config)
    assert {b["id"] for b in again.values()} >= {b["id"] for b in books.values()}
    assert again["tide-tables-of-the-north"]["tags"] == ["navigation", "sea"]
    code, report, _ = _run(config, "unfollow", str(folder), "--delete-books")
    assert code == 0 and report["books_deleted"] is True and _books(config) == {}


def test_a_file_ingested_alone_is_adopted_by_its_library(tmp_path: Path) -> None:
    """A book file of a Calibre library ingested on its own, then the library: the book
    becomes the library's (its title, tags and link written onto it, nothing embedded
    again) instead of one file becoming two books."""
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA, folder)
    config = str(write_config(tmp_path))
    orchard = folder / "Ivy Stone" / "Orchard Pruning (3)" / "Orchard Pruning - Ivy Stone.epub"
    assert _run(config, "ingest", str(orchard), "--name", "My Orchard")[0] == 0
    code, report, _ = _run(config, "ingest", str(folder))
    assert code == 0 and report["counts"]["updated"] == 1 and report["counts"]["added"] == 2
    books = _books(config)
    assert len(books) == 3
    mine = books["my-orchard"]  # its slug kept; the library's title and labels
    assert (mine["name"], mine["tags"]) == ("Orchard Pruning", ["garden"])
    assert mine["link"].endswith("/3")


def test_a_partial_copy_made_while_the_original_is_unplugged_deletes_none_of_its_books(
        tmp_path: Path) -> None:
    """A travel copy with a book left out, ingested while the original's drive is away, was
    taken for the original moved: its books were re-pointed, the book not in the copy was
    removed, and the original, plugged back in, was no longer followed — the book gone."""
    import sqlite3

    drive = tmp_path / "drive"
    original = drive / "Calibre Library"
    shutil.copytree(DATA, original)
    config = str(write_config(tmp_path))
    assert _run(config, "ingest", str(original))[0] == 0
    travel = tmp_path / "Travel"
    shutil.copytree(original, travel)
    shutil.rmtree(travel / "Ivy Stone")
    with sqlite3.connect(travel / "metadata.db") as db:
        for name in ("title_sort", "uuid4", "books_list_filter"):
            db.create_function(name, -1, lambda *a: a[0] if a else "")
        db.execute("DELETE FROM books WHERE id = 3")
    drive.rename(tmp_path / "unplugged")
    code, report, stderr = _run(config, "ingest", str(travel))
    assert code == 0, stderr
    assert report["counts"]["removed"] == 0
    assert "orchard-pruning" in _books(config)
    (tmp_path / "unplugged").rename(drive)
    code, report, _ = _run(config, "sync")
    assert code == 0 and "orchard-pruning" in _books(config)
