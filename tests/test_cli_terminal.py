"""What a person sees in a real terminal: the CLI runs under a pseudo-terminal and its bytes
go through a terminal emulator (pyte), whose screen is what is checked.

* ``ingest`` and ``sync`` draw their progress bars with real control codes (no literal
  ``\\u001b`` or ``\\u000d`` text), and the last frame and the result line are readable;
* a file name holding an escape sequence is still shown escaped, bars or not;
* at 80 columns the lines of ``query``, ``outline``, ``status`` and ``show`` fit, so the
  terminal never breaks a word.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pyte
import pytest

from mcp_helpers import cli_command, write_config

pytestmark = pytest.mark.slow  # each test starts the CLI under a pty, a few seconds each

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "lighthouse-keepers-handbook.md"
RED = "\x1b[31m"
COLUMNS, ROWS = 80, 200
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def under_pty(cwd: Path, *args: str, columns: int = COLUMNS) -> bytes:
    """Every byte the CLI writes to a pseudo-terminal of ``columns`` × ROWS (stdout and
    stderr both, as in a terminal)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm-256color")
    proc = subprocess.Popen([*cli_command(), *args], cwd=cwd, stdin=follower, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
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
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks)


def screen_of(raw: bytes, columns: int = COLUMNS) -> list[str]:
    """The lines a terminal of ``columns`` shows after ``raw`` (trailing blanks cut)."""
    screen = pyte.Screen(columns, ROWS)
    pyte.Stream(screen).feed(raw.decode("utf-8", errors="replace"))
    return [line.rstrip() for line in screen.display if line.strip()]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tty")
    write_config(root)
    (root / "notes").mkdir()
    (root / "notes" / "handbook.md").write_bytes(SAMPLE.read_bytes())
    (root / "notes" / f"fog{RED}horn.md").write_text(
        "# Fog signals\n\nThe fog horn sounds every thirty seconds when the keeper cannot "
        "see the far buoy from the gallery.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ingested(lib: Path) -> bytes:
    return under_pty(lib, "ingest", "notes")


def test_ingest_bars_are_drawn_not_printed(ingested: bytes) -> None:
    assert b"\\u000d" not in ingested and b"\\u001b[2K" not in ingested
    assert b"\x1b[2K" in ingested  # the bar redraws itself with real control codes
    shown = "\n".join(screen_of(ingested))
    assert "\\u000d" not in shown and "[2K" not in shown
    assert "added 2" in shown  # the result line
    final = re.search(r"chunks\s.*?(\d+)/\1\b", shown)  # the final frame: all done
    assert final, shown
    summary = re.search(r"— (\d+)\s+chunks? embedded", " ".join(screen_of(ingested)))
    assert summary and summary[1] == final[1], shown  # it counted the real chunks


def test_an_escape_in_a_file_name_is_still_shown_escaped(ingested: bytes) -> None:
    shown = "\n".join(screen_of(ingested))
    assert "fog\\u001b[31mhorn.md" in shown  # the per-file line, while the bar runs
    assert b"fog\x1b[31mhorn" not in ingested


def test_sync_draws_its_bar_too(lib: Path, ingested: bytes) -> None:
    (lib / "notes" / "new.md").write_text(
        "# Lamp rooms\n\nThe lamp room is swept every morning before the lens is polished "
        "with soft linen.\n", encoding="utf-8")
    raw = under_pty(lib, "sync")
    assert b"\\u000d" not in raw and b"\\u001b" not in raw
    shown = "\n".join(screen_of(raw))
    assert "added 1 ·" in shown and re.search(r"added\s+new\.md", shown)


@pytest.mark.parametrize("args", [
    ("query", "how often were the wicks trimmed"),
    ("query", "fog horn", "--expand"),
    ("outline", "the-lighthouse-keepers-handbook"),
    ("status",),
    ("show", "the-lighthouse-keepers-handbook", "1", "0"),  # its summary and its text too
])
def test_lines_fit_80_columns(lib: Path, ingested: bytes, args: tuple[str, ...]) -> None:
    raw = under_pty(lib, *args)
    lines = ANSI.sub("", raw.decode("utf-8")).replace("\r\n", "\n").split("\n")
    too_long = [line for line in lines
                if len(line) > COLUMNS and any(len(w) <= COLUMNS for w in line.split())]
    assert not too_long, too_long
    assert len(lines) > 3


def test_the_hit_names_the_command_that_opens_it(lib: Path, ingested: bytes) -> None:
    raw = under_pty(lib, "query", "how often were the wicks trimmed", "-k", "1")
    command = re.search(r"read it: grimoire-beholder show (\S+)\s+(\d+) (\d+)",
                        ANSI.sub("", raw.decode()).replace("\r\n", " "))
    assert command is not None, raw
    slug, chapter, section = command.groups()
    shown = subprocess.run([*cli_command(), "show", slug, chapter, section], cwd=lib,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "trimmed the wicks" in shown.stdout


def test_a_40_column_bar_still_shows_its_count(tmp_path: Path) -> None:
    """Squeezed into 40 columns, every column of the bar was cut: the count to '…' and the
    elapsed time to '0…'. A narrow terminal gets the stage, the bar, the count and the ETA."""
    write_config(tmp_path)
    (tmp_path / "handbook.md").write_bytes(SAMPLE.read_bytes())
    raw = under_pty(tmp_path, "ingest", "handbook.md", columns=40)
    bars = [line for line in screen_of(raw, 40) if line.startswith("embeddings")]
    assert bars, screen_of(raw, 40)
    assert "…" not in bars[-1] and re.search(r"\b(\d+)/\1 eta 0:00:00$", bars[-1]), bars
