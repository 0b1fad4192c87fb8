"""A first run that goes wrong leaves nothing behind and says so in the form asked for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcp_helpers import cli_command

pytestmark = pytest.mark.slow  # each test starts the CLI two or three times


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_a_refused_first_file_leaves_no_library(tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf\n")
    library = tmp_path / "shelf" / "books"
    for target in ("scan.pdf", "missing.pdf"):
        proc = run(tmp_path, "ingest", target, "--library", str(library))
        assert proc.returncode != 0 and proc.stderr.startswith("error:"), proc.stderr
        assert not (tmp_path / "shelf").exists()  # no empty library, no folder made for it


def test_a_refused_file_leaves_an_existing_library_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf\n")
    (tmp_path / "notes.md").write_text("# Notes\n\nThe keeper wound the clockwork at dusk.\n")
    (tmp_path / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    assert run(tmp_path, "ingest", "notes.md", "-q").returncode == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    assert run(tmp_path, "ingest", "scan.pdf").returncode != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert run(tmp_path, "list").returncode == 0


def test_errors_under_json_are_one_json_object_on_stderr(tmp_path: Path) -> None:
    cases = [(("list", "--json", "--library", str(tmp_path / "none")), 1, "no library"),
             (("query", "x", "--mode", "fuzzy", "--json"), 2, "'hybrid'"),
             (("status", "--json", "--library", ""), 2, "is empty")]
    for args, code, said in cases:
        proc = run(tmp_path, *args)
        assert proc.returncode == code and proc.stdout == "", proc
        error = json.loads(proc.stderr)
        assert error["exit_code"] == code and said in error["error"], error
    plain = run(tmp_path, "list", "--library", str(tmp_path / "none"))
    assert plain.stderr.startswith("error: no library")
