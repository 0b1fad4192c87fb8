"""Hostile input, round three: names and terminals the CLI had never met.

A file name that is not UTF-8 (``caf\\xe9.txt``, as a Latin-1 system writes it), a stdout
that cannot write ``·`` (``PYTHONIOENCODING=ascii``, a C locale), NFC/NFD spellings of one
name and case-only renames. The real CLI, as a subprocess, on real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from pathlib import Path

import pytest

from mcp_helpers import cli_command, write_config

TEXT = "The keeper trimmed the wick at dusk and logged the storm at dawn. " * 8


def run(lib: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, text=True,
                          errors="replace", timeout=120, env={**os.environ, **(env or {})})


def books(lib: Path) -> list[dict[str, object]]:
    listed = run(lib, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    write_config(tmp_path)
    (tmp_path / "books").mkdir()
    return tmp_path


@pytest.mark.slow  # CLI subprocesses
def test_a_name_that_is_not_utf8_is_refused_clearly(lib: Path) -> None:
    """It can be neither stored nor cited: skipped with a warning naming it; the rest of
    the folder is ingested and synced, and ``ingest FILE`` refuses it in one line."""
    latin1 = os.path.join(os.fsencode(lib / "books"), b"caf\xe9.txt")
    with open(latin1, "wb") as handle:
        handle.write(TEXT.encode())
    (lib / "books" / "plain.txt").write_text(TEXT.replace("keeper", "warden"), encoding="utf-8")
    done = run(lib, "ingest", "books")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr
    assert "caf\\xe9.txt: the file name is not valid" in done.stderr, done.stderr
    assert len(books(lib)) == 1
    synced = run(lib, "sync", "--json")
    assert synced.returncode == 0 and "UnicodeEncodeError" not in synced.stderr, synced.stderr
    assert json.loads(synced.stdout)["counts"]["unchanged"] == 1
    before = (lib / "book.db").read_bytes()
    single = run(lib, "ingest", os.fsdecode(latin1))
    assert single.returncode != 0 and "Traceback" not in single.stderr, single.stderr
    assert len(single.stderr.strip().splitlines()) == 1, single.stderr
    assert (lib / "book.db").read_bytes() == before


@pytest.mark.slow  # CLI subprocesses
@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"},
                                 {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}])
def test_a_stdout_that_cannot_write_the_middle_dot(lib: Path, env: dict[str, str]) -> None:
    for name in ("one", "two", "three"):
        (lib / "books" / f"{name}.md").write_text(f"# {name} · café\n\n{TEXT}\n",
                                                       encoding="utf-8")
    done = run(lib, "ingest", "books", env=env)
    assert done.returncode == 0, done.stderr
    assert "UnicodeEncodeError" not in done.stderr, done.stderr
    assert len(books(lib)) == 3
    hits = run(lib, "query", "trimmed the wick", env=env)
    assert hits.returncode == 0 and "caf" in hits.stdout, hits.stderr


@pytest.mark.slow  # CLI subprocesses
def test_nfd_and_case_only_renames_keep_the_book(lib: Path) -> None:
    nfc = unicodedata.normalize("NFC", "Café.txt")
    (lib / "books" / nfc).write_text(TEXT, encoding="utf-8")
    assert run(lib, "ingest", "books").returncode == 0
    [before] = books(lib)
    (lib / "books" / nfc).rename(lib / "books" / unicodedata.normalize("NFD", "Café.txt"))
    synced = run(lib, "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    counts = json.loads(synced.stdout)["counts"]
    assert counts["removed"] == 0 and counts["added"] == 0, counts
    (lib / "books" / unicodedata.normalize("NFD", "Café.txt")).rename(lib / "books" / "CAFÉ.txt")
    synced = run(lib, "sync", "--json")
    counts = json.loads(synced.stdout)["counts"]
    assert counts["removed"] == 0 and counts["added"] == 0 and counts["moved"] == 1, counts
    [after] = books(lib)
    assert after["id"] == before["id"]
