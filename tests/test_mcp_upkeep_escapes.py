"""Hostile paths against the opt-in upkeep tools: nothing outside the allowed folders gets in,
not even later through ``sync_library``, and odd paths are clear tool errors.

A real MCP client session (in memory) against a library with ``add_book`` and
``sync_library`` allowed; after every refusal the database is exactly as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from db_state import snapshot
from grimoire_beholder.cli.entry import app
from grimoire_beholder.mcp_server.allowed import AllowedFolders
from grimoire_beholder.mcp_server.upkeep_tools import Upkeep
from mcp_helpers import call, connect, structured, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


async def test_sync_never_adds_what_add_book_skipped_as_outside(
        tmp_path: Path, allowed_setup: tuple[Path, Path, Path]) -> None:
    config, allowed, _secret = allowed_setup
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([allowed]))
    async with connect(config, upkeep=upkeep) as client:
        added = structured(await call(client, "add_book", path="shelf"))
        dry = structured(await call(client, "sync_library", dry_run=True))
        synced = structured(await call(client, "sync_library"))
        leak = structured(await call(client, "search_book", question="vault code heliotrope"))
        books = {b["slug"] for b in structured(await call(client, "list_books"))["books"]}
    assert added["counts"]["added"] == 1  # knots.md; shelf/sneaky.md leads out: skipped
    for report in (dry, synced):
        assert report["counts"]["added"] == 0, report
        assert any("sneaky.md" in w and "outside" in w for w in report["warnings"]), report
    assert "secret" not in books
    assert all(h["slug"] != "secret" for h in leak["results"])


async def test_sync_keeps_books_a_link_back_into_the_folder_reaches(
        tmp_path: Path, allowed_setup: tuple[Path, Path, Path]) -> None:
    config, allowed, _secret = allowed_setup
    (allowed / "shelf" / "back").symlink_to(allowed)  # a loop back up to the allowed folder
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([allowed]))
    async with connect(config, upkeep=upkeep) as client:
        await call(client, "add_book", path=".")
        await call(client, "add_book", path="shelf")  # a second root, nested in the first
        before = structured(await call(client, "list_books"))["books"]
        synced = structured(await call(client, "sync_library"))
        after = structured(await call(client, "list_books"))["books"]
    assert synced["counts"]["added"] == synced["counts"]["removed"] == 0, synced
    assert after == before  # kites.md stays in its own folder's group, not "back"


async def test_odd_paths_are_one_clear_tool_error(
        tmp_path: Path, allowed_setup: tuple[Path, Path, Path]) -> None:
    config, allowed, _secret = allowed_setup
    db = tmp_path / "book.db"
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([allowed]))
    async with connect(config, upkeep=upkeep) as client:
        before = snapshot(db)
        results = {
            ("add_book", "NUL"): await call(client, "add_book", path="kites\x00.md"),
            ("add_book", "empty"): await call(client, "add_book", path=""),
            ("add_book", "blank"): await call(client, "add_book", path="  "),
            ("sync_library", "NUL"): await call(client, "sync_library", path="wiki\x00/x"),
        }
        assert snapshot(db) == before
    for (tool, what), result in results.items():
        assert result.is_error, (tool, what)
        assert text(result).strip() != f"Error executing tool {tool}", (tool, what)  # a crash
        if what == "NUL":
            assert "cannot be resolved (embedded null byte)" in text(result)
    assert str(allowed.resolve()) in text(results["add_book", "empty"])
    assert "no path given" in text(results["add_book", "empty"])


def test_an_empty_allowed_folder_is_refused_not_read_as_the_working_folder(
        tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    (tmp_path / "inbox").mkdir()
    runs = [CliRunner().invoke(app, ["serve-mcp", "--config", config], env={
                "GRIMOIRE_BEHOLDER_ALLOW_ADD": value})
            for value in (f"{tmp_path / 'inbox'}{os.pathsep}", os.pathsep)]
    runs.append(CliRunner().invoke(app, ["serve-mcp", "--allow-add", "", "--config", config]))
    for run in runs:
        assert run.exit_code == 2 and run.stdout == "", run.output
        assert run.stderr.startswith("error: an allowed folder is empty"), run.stderr
