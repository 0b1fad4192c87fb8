"""Input paths that are not plain readable files, through the real CLI in a subprocess:
a missing path, symlink loops, a symlink to a folder and a folder that links into itself, a
good file behind a symlink, an unreadable file, and an error line too long for the terminal.

Each keeps the promise of ``hostile_cli.check_outcome``: success, or one ``error: …`` line
naming the file, no traceback, and the library byte-for-byte unchanged.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from db_state import snapshot
from helpers import write_markdown_book
from hostile_cli import assert_one_line_error, check_outcome, run_cli

pytestmark = pytest.mark.slow  # each path through a real CLI subprocess


def test_missing_path_and_symlink_loop(seeded: Path, tmp_path: Path) -> None:
    loop_a, loop_b = tmp_path / "loop_a.md", tmp_path / "loop_b.md"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    for path in (loop_a, tmp_path / "never-existed.md"):
        check_outcome(seeded, path, "error")


def test_symlink_to_directory_and_a_folder_that_loops_into_itself(seeded: Path,
                                                                   tmp_path: Path) -> None:
    """A folder path means folder ingest; a symlink cycle inside it must not hang the walk."""
    folder = tmp_path / "shelf"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "again").symlink_to(folder, target_is_directory=True)
    (folder / "self").symlink_to(folder, target_is_directory=True)
    (folder / "x.md").symlink_to(folder / "y.md")
    (folder / "y.md").symlink_to(folder / "x.md")
    (folder / "note.md").write_text("# Note\n\nA short note on buoys and beacons.\n")
    to_dir = tmp_path / "dirlink.md"
    to_dir.symlink_to(folder, target_is_directory=True)
    for path in (to_dir, folder):
        before = snapshot(seeded / "book.db")
        proc = run_cli(seeded, "ingest", str(path), "-q")
        assert "Traceback" not in proc.stderr, proc.stderr
        if proc.returncode != 0:
            assert_one_line_error(proc, path.name)
            assert snapshot(seeded / "book.db") == before
        conn = sqlite3.connect(seeded / "book.db")
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            slugs = [r[0] for r in conn.execute("SELECT slug FROM books")]
        finally:
            conn.close()
        assert slugs.count("note") <= 1  # the loop never ingested the same file twice
        if "note" in slugs:
            assert run_cli(seeded, "delete", "note", "--yes").returncode == 0


def test_good_file_through_a_symlink_is_fine(seeded: Path, tmp_path: Path) -> None:
    real = write_markdown_book(tmp_path / "real.md", "Linked Book",
                               {"One": {"Two": "Sails and rigging words. " * 20}})
    link = tmp_path / "link.md"
    link.symlink_to(real)
    check_outcome(seeded, link, "ok")


def test_unreadable_file_is_a_one_line_error(seeded: Path, tmp_path: Path) -> None:
    """Root reads a file whatever its mode, so as root (CI) the CLI runs without the
    capabilities that let it: ``setpriv`` drops them from its bounding set."""
    path = write_markdown_book(tmp_path / "secret.md", "Secret", {"A": {"B": "words " * 50}})
    path.chmod(0)
    wrapper: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop the capability to read any file")
        wrapper = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]
        reads = subprocess.run([*wrapper, "cat", str(path)], capture_output=True).returncode == 0
        if subprocess.run([*wrapper, "true"]).returncode != 0 or reads:
            pytest.skip("running as root and cannot drop the capability to read any file")
    check_outcome(seeded, path, "error", wrapper=wrapper)


def test_long_error_line_is_not_wrapped(seeded: Path, tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 3)
    deep.mkdir()
    path = deep / "a-file-name-that-is-long-enough-to-wrap-the-error-line.pdf"
    path.write_bytes(b"")
    proc = run_cli(seeded, "ingest", str(path), wide=False)
    assert_one_line_error(proc, path.name)
