"""A damaged library file: one line naming the file and what to do, never a traceback.

Pages of a real library are overwritten in the middle of the file (the schema on page 1
stays readable, so the damage is only met while a command reads), or the file is cut short,
or its header is wiped. Every command — reading or writing — must then end in one
``error:`` line saying the file is damaged, the MCP server must answer with tool errors
and stay up, and ``check`` must list the damage. Nothing may touch the file.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grimoire_beholder.errors import LibraryDamagedError
from grimoire_beholder.library import Library
from helpers import write_markdown_book
from mcp_helpers import connect, text, write_config

pytestmark = pytest.mark.slow  # every command as a subprocess on a damaged file

PAGE = 4096


def run_cli(lib: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    env["COLUMNS"] = "10000"
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args], cwd=lib,
                          env=env, capture_output=True, text=True, timeout=120)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode not in (0, None), proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    """A library of two books, its WAL folded into the file (as after a clean exit)."""
    config = write_config(tmp_path)
    for n in (1, 2):
        book = write_markdown_book(tmp_path / f"book{n}.md", f"Book {n}", {
            f"Part {c}": {f"Piece {s}": " ".join(
                f"Story {n}.{c}.{s}.{i} of kelp, tide pools and the rocky shore."
                for i in range(30)) for s in range(6)} for c in range(5)})
        with Library.open(config) as lib:
            lib.ingest(book)
    assert not (tmp_path / "book.db-wal").exists()
    return tmp_path


def scribble_mid_pages(db: Path) -> None:
    """Overwrite part of every third page of the file's later two thirds."""
    rng = random.Random(17)
    pages = db.stat().st_size // PAGE
    with db.open("r+b") as fh:
        for page in range(pages // 3, pages, 3):
            fh.seek(page * PAGE + 100)
            fh.write(rng.randbytes(1500))


def cut_in_half(db: Path) -> None:
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // PAGE // 2 * PAGE)


def wipe_header(db: Path) -> None:
    with db.open("r+b") as fh:
        fh.write(b"\0" * 100)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "mid-file pages overwritten": scribble_mid_pages,
    "file cut in half": cut_in_half,
    "header wiped": wipe_header,
}
COMMANDS = (("list",), ("status",), ("query", "kelp tide pools"), ("ingest", "book1.md"),
            ("delete", "book-1", "--yes"), ("reindex-fts",), ("sync",), ("check",))


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_every_command_says_the_file_is_damaged(library_dir: Path, damage: str) -> None:
    db = library_dir / "book.db"
    DAMAGE[damage](db)
    before = db.read_bytes()
    for args in COMMANDS:
        proc = run_cli(library_dir, *args)
        if args == ("check",) and proc.returncode == 1 and proc.stdout:
            assert "problem: " in proc.stdout and "Traceback" not in proc.stderr
            continue  # check reports the damage it can see on stdout
        if args[0] == "ingest" and proc.returncode == 0:
            # An unchanged book is recognised from its own rows alone (read through the
            # book_id indexes, never the whole library); when those pages are sound there
            # is nothing to see and nothing to write — the byte check below holds it to that.
            assert "already in the library" in proc.stdout, proc.stdout
            continue
        line = one_error_line(proc)
        assert str(db) in line and "damaged" in line, (args, line)
        assert "backup" in line or "ingest" in line, line
        # check is named where it can show the damage: not when the file does not open as a
        # database at all (its header wiped), where check fails the same way
        assert ("`grimoire-beholder check`" in line) == (damage != "header wiped"), line
    assert db.read_bytes() == before  # no command wrote to the damaged file
    # A folder ingest reports each file it could not add; the damage is named, and no
    # file is tried after it was seen (the folder itself may be remembered before that).
    proc = run_cli(library_dir, "ingest", ".")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "damaged" in proc.stderr and str(db) in proc.stderr, proc.stderr


def test_check_lists_the_damage_and_passes_a_sound_library(library_dir: Path) -> None:
    proc = run_cli(library_dir, "check", "--json")
    assert proc.returncode == 0, proc.stderr
    sound = json.loads(proc.stdout)
    assert sound["ok"] and sound["problems"] == []
    figures = sound["figures"]
    assert figures["books"] == 2 and figures["chunks"] > 100
    assert (figures["embedded_chunks"] == figures["vectors"] == figures["fts_rows"]
            == figures["trigram_rows"] == figures["chunks"])
    scribble_mid_pages(library_dir / "book.db")
    proc = run_cli(library_dir, "check", "--json")
    assert proc.returncode == 1, proc.stderr
    damaged = json.loads(proc.stdout)
    assert not damaged["ok"]
    assert any(p.startswith("SQLite integrity check") for p in damaged["problems"])


def test_check_finds_rows_out_of_step(library_dir: Path) -> None:
    """The consistency rules of the crash tests: a missing keyword row or vector and a
    vector of the wrong size are each named."""
    conn = sqlite3.connect(library_dir / "book.db")
    with conn:
        conn.execute("DELETE FROM chunks_fts WHERE rowid = (SELECT min(id) FROM chunks)")
        conn.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT max(id) FROM chunks)")
        conn.execute("UPDATE embeddings SET vector = x'00' WHERE chunk_id = "
                     "(SELECT min(id) FROM chunks)")
    conn.close()
    with Library.open(library_dir / "config.toml") as lib:
        result = lib.check()
    assert not result.ok
    found = "\n".join(result.problems)
    assert "1 embedded chunks missing from the keyword index" in found
    assert "1 embedded chunks without a vector" in found
    assert "1 vectors whose size is not the stamped" in found


def test_library_api_raises_the_damage_error(library_dir: Path) -> None:
    scribble_mid_pages(library_dir / "book.db")
    with Library.open(library_dir / "config.toml", read_only=True) as lib:
        with pytest.raises(LibraryDamagedError, match="damaged"):
            lib.status()
        with pytest.raises(LibraryDamagedError, match="damaged"):
            lib.search("kelp tide pools")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_server_reports_damage_as_tool_errors_and_stays_up(
        library_dir: Path, anyio_backend: str) -> None:
    scribble_mid_pages(library_dir / "book.db")
    async with connect(library_dir / "config.toml") as client:
        for _ in range(2):  # still answering after the first error
            for tool, args in (("search_book", {"question": "kelp tide pools"}),
                               ("book_status", {}), ("get_book_outline", {"book_id": 1})):
                result = await client.call_tool(tool, args)
                if result.is_error:
                    assert "damaged" in text(result) and "book.db" in text(result)
        result = await client.call_tool("search_book", {"question": "kelp tide pools"})
        assert result.is_error and "damaged" in text(result)
