"""At a narrow terminal the per-file lines of ``ingest DIR`` and ``sync`` broke mid-word
(``added     renamed.md (2 chunks: 2 embedd`` / ``ed)``) while the summary line wrapped at
words with an indent: now they wrap the same way. The CLI runs under a pseudo-terminal of
40 columns; its screen is read through a terminal emulator (pyte)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte
import pytest

pytestmark = pytest.mark.slow  # the CLI under a pty, twice

COLUMNS, ROWS = 40, 60


def _screen(cwd: Path, *args: str) -> list[str]:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm-256color")
    proc = subprocess.Popen([sys.executable, "-m", "grimoire_beholder", *args], cwd=cwd,
                            stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    screen = pyte.Screen(COLUMNS, ROWS)
    pyte.Stream(screen).feed(b"".join(chunks).decode("utf-8", errors="replace"))
    return [line.rstrip() for line in screen.display if line.strip()]


def _words(lines: list[str]) -> set[str]:
    return {word for line in lines for word in line.split()}


def test_per_file_lines_wrap_at_words(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nocr = "off"\n')
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "lighthouse.md").write_text(
        "# Lamps\n\nThe keeper trims the wicks at dusk and again at midnight.\n")
    (notes / "empty-notebook.md").write_text("")
    lines = _screen(tmp_path, "ingest", "notes", "--library", "lib")
    words = _words(lines)
    for word in ("added", "lighthouse.md", "embedded)", "skipped", "empty-notebook.md:",
                 "empty"):
        assert word in words, "\n".join(lines)
    (notes / "lighthouse.md").write_text(
        "# Lamps\n\nThe keeper trims the wicks at dusk, at midnight and before dawn.\n")
    lines = _screen(tmp_path, "sync", "--library", "lib")
    assert {"changed", "lighthouse.md", "embedded)"} <= _words(lines), "\n".join(lines)
