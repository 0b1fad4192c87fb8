"""Ingest through the real CLI in a subprocess, and the promise a hostile input must keep
(for the test_reliability_* input tests; the library they ingest into is conftest's ``seeded``).

The subprocess runs under a 3 GB address-space limit and a timeout, so a memory blow-up or a
hang fails the test instead of the machine. An input must end in success with a sensible
structure (a book whose chunks all got embedded), or exactly one ``error: …`` line on stderr
that names the file, a non-zero exit, no traceback, and a library byte-for-byte unchanged (a
dump of every table, FTS shadow tables included).
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from db_state import snapshot
from grimoire_beholder.library import Library

CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "none"
chunk_size = 400
chunk_overlap = 40
"""
MEMORY_LIMIT = 3 * 1024**3
TIMEOUT = 120
# The 20 MB one-line file makes ~26,000 chunks since a chunk holds at most 1,200 characters
# (the hit bound): minutes of honest work on 2 busy cores, still bounded.
HUGE_TIMEOUT = 270


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(lib_dir: Path, *args: str, wide: bool = True, timeout: float = TIMEOUT,
            wrapper: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """The real CLI, memory-capped and time-boxed; ``wrapper`` is a command it runs under
    (``setpriv …``).

    ``wide`` sets COLUMNS so rich does not wrap a long error line (see
    test_reliability_input_paths.py: test_long_error_line_is_not_wrapped for that bug on its
    own).
    """
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    env.pop("COLUMNS", None)
    if wide:
        env["COLUMNS"] = "10000"
    return subprocess.run([*wrapper, sys.executable, "-m", "grimoire_beholder.cli.entry", *args],
                          cwd=lib_dir, env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limit_memory)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], name: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    if lines[0].startswith("{"):  # under --json the error is one JSON object
        import json

        error = json.loads(lines[0])
        assert error["exit_code"] == proc.returncode and name in error["error"], proc.stderr
        return
    assert lines[0].startswith("error: "), proc.stderr
    assert name in lines[0], proc.stderr


def check_outcome(lib: Path, path: Path, expect: str, wrapper: Sequence[str] = ()) -> str:
    """Run ingest on ``path`` (under ``wrapper``, see ``run_cli``) and check the promise;
    returns "ok" or "error"."""
    db = lib / "book.db"
    before = snapshot(db)
    big = path.is_file() and path.stat().st_size > 10 << 20  # a missing path or a loop: no
    timeout = HUGE_TIMEOUT if big else TIMEOUT
    proc = run_cli(lib, "ingest", str(path), "-q", "--json", timeout=timeout, wrapper=wrapper)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1, 2), (proc.returncode, proc.stderr)
    if proc.returncode == 0:
        assert expect in ("ok", "either"), f"expected an error, got success: {proc.stdout}"
        import json

        report = json.loads(proc.stdout)
        assert report["chunks"] > 0 and report["embedded"] == report["chunks"]
        assert report["chapters"] >= 1 and report["sections"] >= 1
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
        with Library.open(lib / "config.toml") as library:  # in-process: faster than the CLI
            library.delete(report["slug"])
        return "ok"
    assert expect in ("error", "either"), f"expected success, got: {proc.stderr}"
    assert_one_line_error(proc, path.name)
    assert snapshot(db) == before
    return "error"
