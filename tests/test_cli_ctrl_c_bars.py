"""Ctrl-C during ``ingest BOOK`` in a real 80-column terminal printed the top progress bar
twice ("summaries ━━━ 8/8" above itself): the terminal echoes ``^C`` at the cursor, the end
of the last bar line, and on a line of the full width that echo wrapped to a new line, so
rich's redraw (up by the lines it drew) left the top bar behind once more.

The CLI runs under a pseudo-terminal that is its controlling terminal; the test types the
Ctrl-C byte into it, so the terminal driver echoes ``^C`` and sends SIGINT as it does for a
person. A probe holds the ingest inside its second stage until then. The screen is read
through a terminal emulator (pyte)."""

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

pytestmark = pytest.mark.slow  # a fresh CLI under a pty per width

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "lighthouse-keepers-handbook.md"
ROWS = 50
PROBE = (
    "import os, sys, time\n"
    "from grimoire_beholder.cli import rendering\n"
    "stage, calls = rendering.RichProgress.stage, []\n"
    "def held(self, name, total):\n"
    "    stage(self, name, total)\n"
    "    calls.append(name)\n"
    "    if len(calls) == 2:\n"
    "        self.advance(1)\n"
    "        os.write(int(os.environ['PROBE_FD']), b'x')  # the bars are up\n"
    "        time.sleep(600)  # until Ctrl-C\n"
    "rendering.RichProgress.stage = held\n"
    "sys.argv = ['grimoire-beholder', *sys.argv[1:]]\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _ctrl_c_screen(cwd: Path, columns: int, *args: str) -> tuple[int, list[str]]:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    told, tell = os.pipe()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm-256color", PROBE_FD=str(tell))
    proc = subprocess.Popen([sys.executable, "-c", PROBE, *args], cwd=cwd, stdin=follower,
                            stdout=follower, stderr=follower, env=env, pass_fds=(tell,),
                            start_new_session=True, preexec_fn=_take_terminal)
    os.close(follower)
    os.close(tell)
    chunks: list[bytes] = []
    pressed = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader] if pressed else [leader, told], [], [], 0.5)
        if told in ready:
            os.read(told, 1)
            os.write(leader, b"\x03")  # Ctrl-C, typed
            pressed = True
        if leader in ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif not ready and proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    os.close(told)
    screen = pyte.Screen(columns, ROWS)
    pyte.Stream(screen).feed(b"".join(chunks).decode("utf-8", errors="replace"))
    return proc.returncode, [line.rstrip() for line in screen.display if line.strip()]


@pytest.mark.parametrize("columns", [80, 100, 60])
def test_ctrl_c_leaves_each_bar_once(tmp_path: Path, columns: int) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nocr = "off"\n')
    (tmp_path / "handbook.md").write_bytes(SAMPLE.read_bytes())
    code, lines = _ctrl_c_screen(tmp_path, columns, "ingest", "handbook.md",
                                 "--library", "lib")
    assert code == 130, "\n".join(lines)
    bars = [line.split()[0] for line in lines if "━" in line]
    assert bars == ["summaries", "contexts"], "\n".join(lines)
    assert any(line.startswith("error: interrupted") for line in lines)
