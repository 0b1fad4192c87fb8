"""The real CLI run in a library folder, killed at a named point or not, for the tests of a
sync finishing what an interrupted ingest left half-done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from mcp_helpers import FAKE_CONFIG, cli_command

# A three-chapter Markdown book, long enough for its chapters to be several chunks.
TIDES = {f"Chapter {n}": {f"Part {n}": f"Tides rise twice a day at harbour {n}, pulled by "
                                       "the moon and by the sun. " * 8} for n in range(1, 4)}


def run_in(lib: Path, *args: str, kill_at: str | None = None
           ) -> subprocess.CompletedProcess[str]:
    """The CLI with ``args`` in ``lib``; with ``kill_at``, it kills itself at that point
    (``GRIMOIRE_BEHOLDER_KILL_AT``), as a crash there would end it."""
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    if kill_at:
        env["GRIMOIRE_BEHOLDER_KILL_AT"] = kill_at
    return subprocess.run([*cli_command(), *args], cwd=lib, capture_output=True, text=True,
                          timeout=120, env=env)


def json_in(lib: Path, *args: str) -> Any:
    """The CLI's ``--json`` result for ``args`` in ``lib``, which must succeed."""
    done = run_in(lib, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def unfinished(lib: Path) -> list[dict[str, Any]]:
    """The books ``status`` in ``lib`` shows incomplete."""
    return [b for b in json_in(lib, "status")["books"] if not b["complete"]]


def interrupt(lib: Path, folder: Path) -> dict[str, Any]:
    """``ingest folder`` killed after its third context: the one book it left unfinished."""
    (lib / "config.toml").write_text(FAKE_CONFIG.replace("chunk_size = 120",
                                                         "chunk_size = 60"))
    killed = run_in(lib, "ingest", str(folder), "-q", kill_at="contexts.commit:3")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [book] = unfinished(lib)
    return book
