"""Ctrl-C tells a command's user to rerun it only when the rerun resumes written work:
``web --no-browser`` and ``health r-intro`` said ``interrupted: committed work is kept; run
the same command to resume`` though they write nothing a rerun would finish. The CLI runs in
a fresh process as the script does; the Ctrl-C is a real SIGINT it sends itself once the
library is open, so the moment is hit every time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_cli, write_markdown_book

pytestmark = pytest.mark.slow  # a fresh interpreter per case

PROBE = (
    "import signal, sys\n"
    "from grimoire_beholder.library import Library\n"
    "opened = Library.open.__func__\n"
    "def open_then_interrupt(cls, *a, **k):\n"
    "    lib = opened(cls, *a, **k)\n"
    "    signal.raise_signal(signal.SIGINT)\n"
    "    return lib\n"
    "Library.open = classmethod(open_then_interrupt)\n"
    "sys.argv = ['grimoire-beholder', *sys.argv[1:]]\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("interrupted")
    (root / "lib").mkdir()
    (root / "lib" / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nocr = "off"\n')
    book = write_markdown_book(root / "tides.md", "Tides", {"Sea": {"Currents": "Currents."}})
    assert run_cli("ingest", str(book), "-q", "--library", str(root / "lib")).returncode == 0
    return root / "lib", book


def _interrupted(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", [["web", "--no-browser"], ["health", "tides"],
                                     ["query", "currents"], ["list"]])
def test_a_command_that_writes_nothing_says_only_interrupted(
        library: tuple[Path, Path], command: list[str]) -> None:
    run = _interrupted(*command, "--library", str(library[0]))
    assert run.returncode == 130, run.stderr
    assert run.stderr.splitlines()[-1] == "error: interrupted", run.stderr


def test_an_ingest_still_says_how_to_resume(library: tuple[Path, Path]) -> None:
    lib, book = library
    run = _interrupted("ingest", str(book), "--force", "--library", str(lib))
    assert run.returncode == 130, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "error: interrupted: committed work is kept; run the same command to resume")

