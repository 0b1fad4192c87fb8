"""Probe of the Windows-shaped-input class (issue 24): on a system that is not Windows, a
``--library``/``--config`` written with a drive letter or as a UNC path is no path here; it
was taken as a relative name, so ``ingest`` made a folder called ``C:\\x\\book.db`` in the
working folder and filled a new library there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from user_home import SAMPLE, run, tree


@pytest.mark.skipif(sys.platform == "win32", reason="a drive letter is a path there")
@pytest.mark.parametrize("args", [
    ("ingest", str(SAMPLE), "--library", "C:\\x\\book.db"),
    ("list", "--library", "c:/Books"),
    ("ingest", str(SAMPLE), "--library", "\\\\server\\share\\books"),
    ("status", "--config", "D:\\lib\\config.toml"),
], ids=["ingest-drive", "list-drive-slash", "ingest-unc", "status-config"])
def test_a_windows_path_is_refused_in_one_line_and_creates_nothing(
        home: Path, args: tuple[str, ...]) -> None:
    before = tree(home)
    proc = run(home, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Windows path" in proc.stderr and "Traceback" not in proc.stderr
    assert tree(home) == before
