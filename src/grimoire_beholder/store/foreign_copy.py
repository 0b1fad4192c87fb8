"""Reading another application's SQLite database without ever touching it.

Calibre's ``metadata.db`` and Zotero's ``zotero.sqlite`` belong to running applications:
Zotero holds its database under an exclusive lock while it runs, and even a reader's shared
lock on Calibre's would hold up its next write. So neither is opened in place. Its bytes
are copied into a private temporary folder — the way Zotero's own tools read a locked
database — and the copy is opened ``immutable`` (SQLite then takes no lock and writes no
journal or WAL file, not even in the copy's folder). A copy is kept only when the file's
size and modification time, and those of its journal or WAL, were the same before and after
it was read, else it is taken again; the original is never opened at all. A rollback
journal beside it (a write under way, or one a crash cut short) is copied with it and rolled
back in the copy, and a WAL folded into it, before the copy is opened ``immutable`` (which
would read the database file alone): the copy is the database as last committed.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from grimoire_beholder.errors import InputFileError

ATTEMPTS = 5
_PAUSE_S = 0.2
_SIDE_FILES = ("-journal", "-wal")  # a rollback journal, or a WAL-mode database's log


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _stamps(paths: list[Path]) -> list[tuple[int, int] | None]:
    return [_stamp(p) if p.exists() else None for p in paths]


def _copy_once(source: Path, target: Path) -> bool:
    """Copy ``source`` and the journal or WAL beside it to ``target``; whether nothing
    moved meanwhile."""
    beside = [source.with_name(source.name + suffix) for suffix in _SIDE_FILES]
    before = _stamps([source, *beside])
    shutil.copyfile(source, target)
    for original in beside:
        copied = target.with_name(target.name + original.name.removeprefix(source.name))
        if original.exists():
            shutil.copyfile(original, copied)
        else:
            copied.unlink(missing_ok=True)  # an earlier attempt's
    return _stamps([source, *beside]) == before


def _roll_back(copy: Path) -> None:
    """Undo in the private copy the transaction its copied rollback journal holds: a write
    under way (or one a crash or a kill cut short, whose journal stays until the application
    opens the database again) has put some of its pages in the database file and their old
    contents in the journal. Opened for writing, SQLite finds the journal hot and puts the
    old pages back: the copy is the database as last committed. A journal that is not hot
    (emptied, or its header never written) is left unused."""
    conn = sqlite3.connect(copy)
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    finally:
        conn.close()


def _fold_wal(copy: Path) -> None:
    """Write the copied WAL's committed transactions into the private copy: opened
    ``immutable``, SQLite reads the database file alone, and a WAL-mode database keeps its
    recent writes (all of them, while the application runs) in the WAL. Only the copy is
    written."""
    conn = sqlite3.connect(copy)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        conn.execute("PRAGMA journal_mode = DELETE").fetchall()
    finally:
        conn.close()


@contextmanager
def foreign_database(path: Path, label: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a consistent private copy of the database at ``path``.

    InputFileError (naming ``label``, e.g. "Zotero database") when it cannot be read or
    was being written over every attempt. The copy is deleted on exit.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="grimoire-foreign-") as tmp:
        target = Path(tmp) / "copy.sqlite"
        try:
            for attempt in range(ATTEMPTS):
                if _copy_once(path, target):
                    break
                time.sleep(_PAUSE_S * (attempt + 1))
            else:
                raise InputFileError(f"{path}: the {label} was being written all the while "
                                     "it was read; try again in a moment")
        except OSError as exc:
            raise InputFileError(f"{path}: cannot read the {label} "
                                 f"({exc.strerror or exc})") from exc
        uri = f"file:{quote(os.fspath(target))}?mode=ro&immutable=1"
        try:
            if target.with_name(target.name + "-journal").exists():
                _roll_back(target)
            if target.with_name(target.name + "-wal").exists():
                _fold_wal(target)
        except sqlite3.DatabaseError as exc:
            raise InputFileError(f"{path}: not a readable {label} ({exc})") from exc
        conn = sqlite3.connect(uri, uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise InputFileError(f"{path}: not a readable {label} ({exc})") from exc
        try:
            yield conn
        finally:
            conn.close()
