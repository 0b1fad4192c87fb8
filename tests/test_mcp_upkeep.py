"""Upkeep over MCP: sync_library, add_book inside allowed folders, remove_book — opt-in only.

Driven by the SDK's real client, in memory and over stdio against ``serve-mcp --allow-…``;
every refusal is checked to leave the database exactly as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from db_state import snapshot
from grimoire_beholder.cli.entry import app
from grimoire_beholder.ingest.lock import writer_lock
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.allowed import AllowedFolders, Upkeep
from grimoire_beholder.mcp_server.server import TOOLS
from mcp_helpers import call, cli_command, connect, folder_library, structured, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

READ_TOOLS = {fn.__name__ for fn, _title in TOOLS}
NEW_TEXT = ("Moor the zeppelin to the mast with a brass windlass before the gale; "
            "slack the bow lines as the envelope warms. ") * 4


def edit_runbook(base: Path) -> None:
    path = base / "wiki" / "ops" / "runbook.md"
    old = path.read_text(encoding="utf-8")
    start = old.index("Rolling back")
    path.write_text(old[:start] + NEW_TEXT + "\n", encoding="utf-8")


def db_bytes(base: Path) -> tuple[bytes, bytes]:
    """The database file and its WAL's content (SQLite may create an empty WAL beside a
    read-only reader): a read-only session must not change a byte of either."""
    wal = base / "book.db-wal"
    return (base / "book.db").read_bytes(), wal.read_bytes() if wal.exists() else b""


def sync_lines(data: dict[str, Any]) -> tuple[Any, ...]:
    """What must agree between the CLI's ``sync --json`` and the MCP tool."""
    changed = sorted((f["action"], f["path"]) for f in data["files"]
                     if f["action"] != "unchanged")
    return data["counts"], data["chunks_embedded"], data["chunks_reused"], changed


# ------------------------------------------------------------------------ off by default
@pytest.mark.slow  # serve-mcp as a real subprocess
async def test_without_flags_only_read_only_tools_and_the_file_is_untouched(
        tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    before = db_bytes(tmp_path)
    command, *args = cli_command()
    off = {"GRIMOIRE_BEHOLDER_ALLOW_SYNC": "false", "GRIMOIRE_BEHOLDER_ALLOW_ADD": "",
           "GRIMOIRE_BEHOLDER_ALLOW_REMOVE": "false"}  # what a bundle sends, settings off
    params = StdioServerParameters(command=command, args=[*args, "serve-mcp"],
                                   cwd=str(tmp_path), env={**os.environ, **off})
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        found = structured(await call(client, "search_book", question="canary host rollout"))
        missing = await call(client, "sync_library")
        await call(client, "book_status")
    assert {t.name for t in tools} == READ_TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in tools)
    assert found["results"] and missing.is_error
    assert db_bytes(tmp_path) == before
    async with connect(config) as client:  # in memory too: no upkeep, no upkeep tools
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS


async def test_annotations_tell_the_truth(tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([tmp_path]), remove=True)
    async with connect(config, upkeep=upkeep) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        instructions = client.instructions or ""
    assert set(tools) == READ_TOOLS | {"sync_library", "add_book", "remove_book"}
    hints = {name: (t.annotations.read_only_hint, t.annotations.destructive_hint,
                    t.annotations.idempotent_hint)
             for name, t in tools.items() if t.annotations and name not in READ_TOOLS}
    assert hints == {"sync_library": (False, True, True), "add_book": (False, False, True),
                     "remove_book": (False, True, False)}
    assert "REMOVED" in (tools["sync_library"].description or "")
    assert str(tmp_path.resolve()) in instructions and "Nothing here can add" not in instructions


# ------------------------------------------------------------------------ sync_library
async def test_sync_finds_the_edit_and_counts_like_the_cli(tmp_path: Path) -> None:
    cli_base, mcp_base = tmp_path / "cli", tmp_path / "mcp"
    cli_config, mcp_config = folder_library(cli_base), folder_library(mcp_base)
    edit_runbook(cli_base)
    edit_runbook(mcp_base)
    result = CliRunner().invoke(app, ["sync", "--json", "--config", str(cli_config)])
    assert result.exit_code == 0, result.output
    import json

    cli_data = json.loads(result.stdout)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    opened: list[Library] = []
    async with connect(mcp_config, opened, upkeep=Upkeep(sync=True)) as client:
        stale = structured(await call(client, "search_book", question="zeppelin windlass"))
        synced = await client.call_tool("sync_library", {}, progress_callback=on_progress)
        fresh = structured(await call(client, "search_book", question="zeppelin windlass"))
        again = structured(await call(client, "sync_library"))
    data = structured(synced)
    assert not any("zeppelin" in h["text"] for h in stale["results"])
    assert fresh["results"][0]["slug"] == "runbook" and "zeppelin" in fresh["results"][0]["text"]
    assert data["counts"]["changed"] == 1 and data["chunks_embedded"] > 0
    assert sync_lines(data) == sync_lines(cli_data)
    assert "changed 1" in text(synced) and "ops/runbook.md" in text(synced)
    assert progress and [p[0] for p in progress] == sorted({p[0] for p in progress})
    assert any("runbook.md" in (p[2] or "") for p in progress)
    assert again["counts"]["changed"] == 0 and again["counts"]["unchanged"] == 3
    assert opened[0].read_only  # searches never left their read-only connection


async def test_sync_path_narrows_dry_run_writes_nothing(tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    edit_runbook(tmp_path)
    (tmp_path / "wiki" / "bread.md").unlink()
    db = tmp_path / "book.db"
    async with connect(config, upkeep=Upkeep(sync=True)) as client:
        before = snapshot(db)
        dry = structured(await call(client, "sync_library", dry_run=True))
        outside = await call(client, "sync_library", path="/usr")
        assert snapshot(db) == before
        ops = structured(await call(client, "sync_library",
                                    path=str(tmp_path / "wiki" / "ops")))
        books = {b["slug"] for b in structured(await call(client, "list_books",
                                                          folder="wiki"))["books"]}
        bread = structured(await call(client, "sync_library",
                                      path=str(tmp_path / "wiki" / "bread.md")))
        above = structured(await call(client, "sync_library", path=str(tmp_path)))
    assert dry["dry_run"] and dry["counts"]["changed"] == 1 and dry["counts"]["removed"] == 1
    assert outside.is_error and "nothing in the library" in text(outside)
    assert str((tmp_path / "wiki").resolve()) in text(outside)
    assert ops["counts"]["changed"] == 1 and sum(ops["counts"].values()) == 1
    assert "bread-at-home" in books  # outside the path: untouched
    assert bread["counts"]["removed"] == 1 and sum(bread["counts"].values()) == 1
    assert above["counts"]["unchanged"] == 2 and sum(above["counts"].values()) == 2


async def test_a_second_writer_is_an_immediate_tool_error(tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    edit_runbook(tmp_path)
    db = tmp_path / "book.db"
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([tmp_path / "wiki"]), remove=True)
    async with connect(config, upkeep=upkeep) as client:
        before = snapshot(db)
        with writer_lock(db):  # another ingest/sync is running
            busy = [await call(client, "sync_library"),
                    await call(client, "add_book", path="garden.md"),
                    await call(client, "remove_book", book_id="bread-at-home")]
        assert snapshot(db) == before
        after = structured(await call(client, "sync_library"))
    assert all(r.is_error and "another ingest/sync/delete" in text(r) for r in busy)
    assert after["counts"]["changed"] == 1


# ------------------------------------------------------------------------ add_book
async def test_add_book_only_inside_the_allowed_folders(
        tmp_path: Path, allowed_setup: tuple[Path, Path, Path]) -> None:
    config, allowed, secret = allowed_setup
    os.mkfifo(allowed / "pipe.md")
    db = tmp_path / "book.db"
    refused = [str(secret), str(allowed / ".." / "outside" / "secret.md"),
               "../outside/secret.md", str(allowed / "link.md"), "link.md", "/dev/null",
               "pipe.md", str(tmp_path / "wiki"), "nope.md", "~/"]
    upkeep = Upkeep(add=AllowedFolders.of([allowed]))
    async with connect(config, upkeep=upkeep) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        for path in refused:
            before = snapshot(db)
            result = await call(client, "add_book", path=path)
            assert result.is_error, path
            assert str(allowed.resolve()) in text(result), (path, text(result))
            assert snapshot(db) == before, path
        added = structured(await call(client, "add_book", path=str(allowed / "kites.md")))
        found = structured(await call(client, "search_book", question="launch the kite"))
        twice = structured(await call(client, "add_book", path="kites.md"))
        folder = structured(await call(client, "add_book", path="shelf"))
        knots = structured(await call(client, "search_book", question="bowline loop"))
        leak = structured(await call(client, "search_book", question="vault code heliotrope"))
        named = await call(client, "add_book", path="shelf", name="Shelf")
    assert tools == READ_TOOLS | {"add_book"}
    assert added["counts"]["added"] == 1 and added["files"][0]["slug"] == "kites"
    assert found["results"][0]["slug"] == "kites"
    assert twice["counts"]["unchanged"] == 1 and twice["chunks_embedded"] == 0
    assert folder["counts"]["added"] == 1  # knots.md; the link out is skipped
    assert any("sneaky.md" in w and "outside the allowed" in w for w in folder["warnings"])
    assert knots["results"][0]["slug"] == "knots"
    assert all(h["slug"] != "secret" for h in leak["results"])
    assert named.is_error and "single file" in text(named)


def test_allowed_folders_are_checked_at_start(tmp_path: Path) -> None:
    from grimoire_beholder.errors import ConfigError

    (tmp_path / "file.md").write_text("x")
    for bad in (tmp_path / "missing", tmp_path / "file.md"):
        with pytest.raises(ConfigError, match="allowed folder"):
            AllowedFolders.of([bad])
    config = str(write_config(tmp_path))
    flag = CliRunner().invoke(app, ["serve-mcp", "--allow-add", str(tmp_path / "missing"),
                                    "--config", config])
    env = CliRunner().invoke(app, ["serve-mcp", "--config", config], env={
        "GRIMOIRE_BEHOLDER_ALLOW_ADD": f"{tmp_path}{os.pathsep}{tmp_path / 'missing'}"})
    for proc in (flag, env):
        assert proc.exit_code == 2 and proc.stdout == ""
        assert proc.stderr.startswith("error: allowed folder") and "missing" in proc.stderr


# ------------------------------------------------------------------------ remove_book
async def test_remove_book(tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    async with connect(config, upkeep=Upkeep(remove=True)) as client:
        removed = structured(await call(client, "remove_book", book_id="bread-at-home"))
        books = {b["slug"] for b in structured(await call(client, "list_books",
                                                          folder="wiki"))["books"]}
        gone = await call(client, "remove_book", book_id="bread-at-home")
    assert removed["slug"] == "bread-at-home" and "sync_library" in (removed["note"] or "")
    assert books == {"the-garden-book", "runbook"}
    assert gone.is_error and "no book 'bread-at-home'" in text(gone)


# ------------------------------------------------------------------------ over stdio
@pytest.mark.slow  # serve-mcp as a real subprocess
async def test_stdio_sync_and_add(tmp_path: Path,
                                  allowed_setup: tuple[Path, Path, Path]) -> None:
    _config, _allowed, secret = allowed_setup
    command, *args = cli_command()
    params = StdioServerParameters(  # sync from the environment, as a bundle turns it on
        command=command, args=[*args, "serve-mcp", "--allow-add", "allowed"],
        cwd=str(tmp_path), env={**os.environ, "GRIMOIRE_BEHOLDER_ALLOW_SYNC": "true"})
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    db = tmp_path / "book.db"
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        edit_runbook(tmp_path)
        synced = structured(await client.call_tool("sync_library", {},
                                                   progress_callback=on_progress))
        fresh = structured(await call(client, "search_book", question="zeppelin windlass"))
        before = snapshot(db)
        outs = [await call(client, "add_book", path=p)
                for p in (str(secret), "../outside/secret.md", "link.md")]
        assert snapshot(db) == before
        added = structured(await call(client, "add_book", path="kites.md"))
        kites = structured(await call(client, "search_book", question="launch the kite"))
    assert tools == READ_TOOLS | {"sync_library", "add_book"}
    assert synced["counts"]["changed"] == 1 and progress
    assert fresh["results"][0]["slug"] == "runbook"
    assert all(r.is_error and "allowed folders" in text(r) for r in outs)
    assert added["counts"]["added"] == 1 and kites["results"][0]["slug"] == "kites"
