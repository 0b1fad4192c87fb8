"""A synced folder that suddenly holds none of its files is a drive not mounted (its empty
mount point remains), not every book deleted: ``sync``, ``sync --dry-run`` and MCP
``sync_library`` keep the books (and their embeddings) and say so. The real CLI and a real
MCP client session."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from db_state import snapshot
from grimoire_beholder.mcp_server.upkeep_tools import Upkeep
from helpers import write_markdown_book
from mcp_helpers import cli_command, connect, structured, write_config

pytestmark = pytest.mark.timeout(120)


def run(lib: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def mounted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A library of a folder of three books ("the drive"), and a place to unmount it to."""
    write_config(tmp_path)
    drive = tmp_path / "drive"
    drive.mkdir()
    for name in ("tides", "knots", "stars"):
        write_markdown_book(drive / f"{name}.md", name.title(), {
            "One": {"Two": f"All about {name}, told slowly and at length. " * 10}})
    done = run(tmp_path, "ingest", "drive")
    assert done.returncode == 0, done.stderr
    away = tmp_path / "unmounted"
    shutil.move(drive, away)
    drive.mkdir()  # the empty mount point stays
    return tmp_path, drive, away


@pytest.mark.slow  # several CLI runs, a dry run and a sync
def test_sync_and_dry_run_keep_the_books_of_an_empty_mount_point(
        mounted: tuple[Path, Path, Path]) -> None:
    lib, drive, away = mounted
    before = snapshot(lib / "book.db")
    for args in (["sync", "--dry-run", "--json"], ["sync", "--json"]):
        done = run(lib, *args)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["counts"]["removed"] == 0, report
        assert any("none of its 3 book file(s)" in w for w in report["warnings"]), report
    assert snapshot(lib / "book.db") == before
    drive.rmdir()
    shutil.move(away, drive)  # mounted again: all there, nothing to redo
    back = json.loads(run(lib, "sync", "--json").stdout)
    assert back["counts"]["unchanged"] == 3 and back["counts"]["removed"] == 0, back


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_a_folder_with_some_files_left_still_loses_the_deleted_ones(
        mounted: tuple[Path, Path, Path]) -> None:
    lib, drive, away = mounted
    shutil.move(away / "tides.md", drive / "tides.md")
    report = json.loads(run(lib, "sync", "--json").stdout)
    assert report["counts"]["removed"] == 2 and report["counts"]["unchanged"] == 1, report


@pytest.mark.anyio
async def test_mcp_sync_library_keeps_them_too(mounted: tuple[Path, Path, Path]) -> None:
    lib, _drive, _away = mounted
    before = snapshot(lib / "book.db")
    async with connect(lib / "config.toml", upkeep=Upkeep(sync=True)) as client:
        report = structured(await client.call_tool("sync_library", {}))
        [folder] = structured(await client.call_tool("list_books", {}))["folders"]
    assert report["counts"]["removed"] == 0 and folder["files"] == 3, report
    assert snapshot(lib / "book.db") == before


@pytest.mark.slow  # several CLI runs
def test_a_drive_mounted_inside_a_synced_folder_keeps_its_books(tmp_path: Path) -> None:
    # ~/Books synced, a USB stick mounted at ~/Books/stick and unplugged: its books stay
    write_config(tmp_path)
    books = tmp_path / "books"
    (books / "stick" / "deep").mkdir(parents=True)
    write_markdown_book(books / "home.md", "Home", {"One": {"Two": "Kept at home. " * 10}})
    for name in ("tides", "knots"):
        write_markdown_book(books / "stick" / "deep" / f"{name}.md", name.title(), {
            "One": {"Two": f"All about {name}, told slowly. " * 10}})
    assert run(tmp_path, "ingest", "books").returncode == 0
    shutil.rmtree(books / "stick")
    (books / "stick").mkdir()  # the empty mount point
    before = snapshot(tmp_path / "book.db")
    for args in (["sync", "--dry-run", "--json"], ["sync", "--json"]):
        report = json.loads(run(tmp_path, *args).stdout)
        assert report["counts"]["removed"] == 0, report
        assert any("stick" in w and "2 book file(s)" in w for w in report["warnings"]), report
    assert snapshot(tmp_path / "book.db") == before
    (books / "stick").rmdir()  # a folder really deleted: its books go
    gone = json.loads(run(tmp_path, "sync", "--json").stdout)
    assert gone["counts"]["removed"] == 2, gone
