"""``serve-mcp`` started by hand in a terminal (stdin a TTY) printed nothing and waited, so
it looked hung: now one stderr line says it waits for an MCP client. Started by an
assistant (stdin a pipe) nothing changes: stderr holds no such line, stdout stays pure
protocol. Both the plain form (no parser) and a form the parser reads are run."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import run_cli, write_markdown_book

pytestmark = pytest.mark.slow  # a fresh interpreter, and the MCP SDK imported, per case

WAITING = "waiting for an MCP client on stdin"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("by-hand")
    (root / "lib").mkdir()
    (root / "lib" / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nocr = "off"\n')
    book = write_markdown_book(root / "tides.md", "Tides", {"Sea": {"Currents": "Currents."}})
    assert run_cli("ingest", str(book), "-q", "--library", str(root / "lib")).returncode == 0
    return root / "lib"


def _forms(library: Path) -> list[list[str]]:
    return [["serve-mcp", "--library", str(library)],
            ["serve-mcp", "--allow-add", str(library.parent), "--library", str(library)]]


@pytest.mark.parametrize("form", [0, 1])
def test_on_a_terminal_it_says_it_waits(library: Path, form: int) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "grimoire_beholder", *_forms(library)[form]],
                            stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        seen, deadline = b"", time.monotonic() + 60
        assert proc.stderr is not None
        while WAITING.encode() not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
        assert seen.decode().splitlines()[0].startswith(WAITING), seen
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert out == b""
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)


@pytest.mark.parametrize("form", [0, 1])
def test_from_a_pipe_nothing_changes(library: Path, form: int) -> None:
    run = subprocess.run([sys.executable, "-m", "grimoire_beholder", *_forms(library)[form]],
                         input="", capture_output=True, text=True, timeout=120)
    assert WAITING not in run.stderr
    assert run.stdout == ""
