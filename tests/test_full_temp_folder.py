"""A full temporary folder is not a full library disk: ``reindex-fts`` with ``TMPDIR`` on a
tiny full volume (a 64 kB tmpfs, mounted where the machine allows) says the temporary folder
ran out of space, names the library's own free space and what to set, exits 1 in one line,
and leaves the library as it was; with TMPDIR pointed beside the library it then works."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from db_state import snapshot
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book
from mcp_helpers import cli_command, write_config

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


@pytest.fixture
def tiny_tmp(tmp_path: Path) -> Iterator[Path]:
    point = tmp_path / "tiny-tmp"
    point.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "none", str(point)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)


def test_reindex_with_a_full_tmpdir_names_the_temporary_folder(
        tmp_path: Path, tiny_tmp: Path) -> None:
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    write_config(lib_dir)
    rng = random.Random(4)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 9)))
             for _ in range(5000)]
    write_markdown_book(tmp_path / "big.md", "Big", {"Part": {
        f"S{i}": " ".join(rng.choice(words) for _ in range(600)) for i in range(60)}})
    lib = Library.open(config=fake_config(lib_dir))
    try:
        lib.ingest(tmp_path / "big.md")
    finally:
        lib.close()
    before = snapshot(lib_dir / "book.db")
    env = {**os.environ, "TMPDIR": str(tiny_tmp)}
    env.pop("SQLITE_TMPDIR", None)
    done = subprocess.run([*cli_command(), "reindex-fts"], cwd=lib_dir, env=env,
                          capture_output=True, text=True, timeout=150)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert f"the temporary folder {tiny_tmp}" in done.stderr, done.stderr
    assert "not the library's disk" in done.stderr and "TMPDIR=" in done.stderr
    assert snapshot(lib_dir / "book.db") == before
    env["TMPDIR"] = str(lib_dir)  # what the message says to do
    again = subprocess.run([*cli_command(), "reindex-fts"], cwd=lib_dir, env=env,
                           capture_output=True, text=True, timeout=150)
    assert again.returncode == 0, again.stderr
