"""A PostgreSQL library's password never shows: not in a command's output or error (stdout,
stderr, ``--json``), not in an MCP tool's answer, however it is written in the URL (the user
part, a ``password=`` parameter, typed without percent-encoding). The test server trusts its
socket, so a URL may carry any password and still connect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import GARDEN_CHAPTERS, fake_config, write_markdown_book

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server and real subprocesses

SECRET = "Tr0ub4dor-Q7"


def _with_password(url: str, how: str) -> str:
    """``url`` (``postgresql://postgres:@/db?host=…``) with SECRET in it, written ``how``."""
    if how == "user part":
        return url.replace("postgres:@", f"postgres:{SECRET}@", 1)
    return url.replace("postgres:@", "postgres@", 1) + f"&password={SECRET}"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRIMOIRE_BEHOLDER_")}
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args],
                          capture_output=True, text=True, timeout=180, env=env, cwd=cwd)


@pytest.mark.parametrize("how", ["user part", "parameter"])
def test_no_command_shows_the_password(tmp_path: Path, pg_url: str, how: str) -> None:
    url = _with_password(pg_url, how)
    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    config = tmp_path / "config.toml"
    config.write_text(f'[grimoire-beholder]\ndb_path = "{url}"\nembedding_backend = "fake"\n')
    assert _cli("ingest", str(book), "--config", str(config), cwd=tmp_path).returncode == 0
    for args in (["status"], ["status", "--json"], ["check"], ["list", "--json"],
                 ["query", "compost", "--json"], ["mcp-config", "claude-desktop"]):
        done = _cli(*args, "--config", str(config), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown = done.stdout + done.stderr
        if args[0] != "mcp-config":  # it writes the URL as given (README says so)
            assert SECRET not in shown, args
        assert "no library at" not in done.stderr, args
    stats = _cli("stats", "--library", url, cwd=tmp_path)  # not kept on a server yet
    assert stats.returncode == 1 and SECRET not in stats.stdout + stats.stderr
    assert len(stats.stderr.strip().splitlines()) == 1
    assert "does not work on a library in a database server yet" in stats.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["garden.md", "config.toml"] or sorted(
        p.name for p in tmp_path.iterdir()) == ["config.toml", "garden.md"]


def test_a_password_typed_without_percent_encoding_is_refused_whole(tmp_path: Path,
                                                                    pg_url: str) -> None:
    url = pg_url.replace("postgres:@", "postgres:p@ss%w/rd:x#?@", 1)
    for args in (["list"], ["status", "--json"]):
        done = _cli(*args, "--library", url, cwd=tmp_path)
        assert done.returncode == 1
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1 and "percent-encode" in line, line
        for piece in ("ss%w", "rd:x", "p@ss"):
            assert piece not in line
        if "--json" in args:
            assert json.loads(line)["exit_code"] == 1


@pytest.mark.anyio
async def test_book_status_over_mcp_does_not_give_the_password_away(tmp_path: Path,
                                                                    pg_url: str) -> None:
    from mcp_helpers import call, connect, structured

    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    server = Library.open(config=fake_config(tmp_path, db_path=_with_password(pg_url,
                                                                              "user part")),
                          embedder=FakeEmbedder())
    try:
        server.ingest(book)
        async with connect(Path("unused"), open_lib=lambda: server) as client:
            answer = await call(client, "book_status")
            assert not answer.is_error
            assert SECRET not in json.dumps(structured(answer))
            assert all(SECRET not in getattr(c, "text", "") for c in answer.content)
    finally:
        server.close()
