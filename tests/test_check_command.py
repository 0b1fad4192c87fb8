"""``check``: a sound library says ok; a broken invariant or a damaged file is named, with
what to do, in lines, not a traceback; and checking changes nothing."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import GARDEN_CHAPTERS, write_markdown_book
from db_state import snapshot
from mcp_helpers import cli_command, write_config


def run(lib: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    write_config(tmp_path)
    write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    assert run(tmp_path, "ingest", "garden.md", "-q").returncode == 0
    return tmp_path


def test_a_sound_library_is_ok_and_unchanged(lib: Path) -> None:
    before = snapshot(lib / "book.db")
    proc = run(lib, "check")
    assert proc.returncode == 0 and proc.stdout.startswith(f"{lib / 'book.db'}: ok")
    data = json.loads(run(lib, "check", "--json").stdout)
    assert data["ok"] and data["problems"] == [] and data["integrity_check"] == "ok"
    assert data["embedded_chunks"] == data["vectors"] == data["fts_rows"] > 0
    assert snapshot(lib / "book.db") == before


def test_a_broken_invariant_is_named(lib: Path) -> None:
    conn = sqlite3.connect(lib / "book.db")
    with conn:
        conn.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT min(id) FROM chunks)")
    conn.close()
    proc = run(lib, "check")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "problem: 1 embedded chunks without a vector" in proc.stderr
    assert "1 problem(s)" in proc.stderr and "backup" in proc.stderr


def test_a_damaged_file_is_a_problem_not_a_traceback(lib: Path) -> None:
    assert run(lib, "list").returncode == 0  # checkpoint the WAL into the file
    db = lib / "book.db"
    data = bytearray(db.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = b"\xff" * 4096
    db.write_bytes(bytes(data))
    proc = run(lib, "check")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and proc.stderr.strip()
