"""One writer per library: an advisory file lock beside the database.

SQLite serialises individual transactions, but two ingests of one library would interleave
their stages and race on the same pending rows. The second one refuses at once with a clear
message instead (the lock dies with its process, so a killed ingest never leaves it stuck).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from grimoire_beholder.errors import LibraryBusyError, StorageError


@contextmanager
def writer_lock(db_path: Path) -> Iterator[None]:
    lock_path = db_path.with_name(db_path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StorageError(f"cannot create lock file {lock_path}: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise LibraryBusyError(
                f"another ingest/sync/delete is writing to {db_path} (pid {holder}); "
                "wait for it to finish and run this again"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
