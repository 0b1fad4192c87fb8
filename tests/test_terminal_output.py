"""No control character from a book or a file name reaches the terminal raw.

A file name, a heading or a line can carry terminal escape sequences (clear the screen,
retitle the window, overwrite the line). The real CLI runs as a subprocess here, and every
byte it writes to stdout and stderr is checked; ``--json`` must still give the exact text.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcp_helpers import cli_command, write_config

pytestmark = pytest.mark.slow  # every command as a real subprocess, bytes checked

CLEAR, TITLE, RED, CSI = "\x1b[2J", "\x1b]0;pwned\x07", "\x1b[31m", "\x9b2J"
RAW = [b"\x1b", b"\x07", b"\r", "\x9b".encode()]
BODY = f"The lighthouse keeper {RED}logged storms {CSI} at dawn and dusk."


def run(lib: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("escapes")
    write_config(root)
    folder = root / "books"
    folder.mkdir()
    (folder / f"log{CLEAR}.md").write_text(
        f"# Keeper {TITLE} log\n\n## Night {CLEAR} watch\n\n{BODY}\n", encoding="utf-8",
        newline="")
    ingest = run(root, "ingest", "books")
    assert ingest.returncode == 0, ingest.stderr
    assert not any(raw in ingest.stdout + ingest.stderr for raw in RAW), ingest
    return root


@pytest.mark.parametrize("args", [
    ("list",), ("status",), ("query", "lighthouse keeper storms"),
    ("query", "lighthouse keeper storms", "--expand"), ("sync", "--dry-run"),
    ("query", "storms", "--book", f"no{CLEAR}such"), ("delete", f"x{TITLE}", "--yes"),
])
def test_terminal_output_has_no_raw_control_characters(lib: Path, args: tuple[str, ...]
                                                       ) -> None:
    proc = run(lib, *args)
    written = proc.stdout + proc.stderr
    assert not any(raw in written for raw in RAW), written
    assert b"Traceback" not in written


def test_the_escapes_are_shown_not_dropped(lib: Path) -> None:
    listed = run(lib, "query", "lighthouse keeper storms").stdout.decode()
    assert "\\u001b[2J" in listed and "\\u001b]0;pwned\\u0007" in listed
    assert "\\u001b[31mlogged" in listed and "\\u009b2J" in listed


def test_json_output_keeps_the_exact_text(lib: Path) -> None:
    hits = json.loads(run(lib, "query", "lighthouse keeper storms", "--json").stdout)
    top = hits["results"][0]
    assert top["text"] == BODY
    assert top["chapter"] == f"Keeper {TITLE} log" and CLEAR in top["location"]
    books = json.loads(run(lib, "list", "--json").stdout)
    assert books[0]["name"] == f"Keeper {TITLE} log"
