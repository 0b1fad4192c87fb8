"""One writer per library: an exclusive file lock beside the database.

SQLite serialises individual transactions, but two ingests of one library would interleave
their stages and race on the same pending rows. The second one refuses at once with a clear
message instead (the lock dies with its process, so a killed ingest never leaves it stuck).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from grimoire_beholder import portable
from grimoire_beholder.errors import LibraryBusyError


@contextmanager
def writer_lock(db_path: Path) -> Iterator[None]:
    """Hold the library's writer lock for the block; LibraryBusyError, naming the holder's
    pid, when another process holds it (StorageError when the lock file cannot be made)."""
    lock_path = db_path.with_name(db_path.name + ".lock")
    with portable.exclusive(lock_path, owner=str(os.getpid())) as held:
        if not held:
            raise LibraryBusyError(
                f"another ingest/sync/delete is writing to {db_path} "
                f"(pid {portable.lock_owner(lock_path)}); wait for it to finish and run this again"
            )
        yield
