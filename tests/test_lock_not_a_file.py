"""Probe of the damaged-storage class (issue 24): ``book.db.lock`` replaced by a named pipe
gave every writing command an ``OSError: Invalid argument`` traceback (the owner written
into it with ``ftruncate``). A lock file that is not a regular file is one clear error, and
the library is unchanged."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from grimoire_beholder.errors import StorageError
from grimoire_beholder.portable import exclusive
from helpers import run_cli
from mcp_helpers import folder_library

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


def test_a_named_pipe_as_lock_file_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "book.db.lock"
    os.mkfifo(lock)
    with pytest.raises(StorageError, match="not a regular file"), exclusive(lock, owner="1"):
        pass


@pytest.mark.timeout(120)
def test_sync_with_a_named_pipe_as_lock_file_fails_in_one_line(tmp_path: Path) -> None:
    config = folder_library(tmp_path)
    db = tmp_path / "book.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    lock = tmp_path / "book.db.lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    proc = run_cli("sync", "--config", str(config), cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "not a regular file" in proc.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
