"""A library on read-only media: reading commands and the MCP server work, writes say why not.

End to end, the library's folder is made truly read-only: a read-only bind mount in a
private mount namespace (``unshare -m``, which works as root — where file permissions stop
nothing — whenever the kernel lets this process mount), else, as a normal user, folder and
file permissions. The three states a library can be found in are covered: closed cleanly
(only the main file: opened ``immutable=1``), left by a killed writer (``-wal`` and ``-shm``
beside it: opened ``mode=ro``, and the writes in the WAL are seen), and a ``-wal`` without
its ``-shm`` (unreadable there: a clear error rather than silently stale data).

The same decisions are also tested in-process on every machine, with the one function that
asks the OS whether a path is writable answering "no".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from db_state import snapshot
from grimoire_beholder.errors import ReadOnlyLibraryError, StorageError
from grimoire_beholder.library import Library
from grimoire_beholder.store import connection
from helpers import write_markdown_book
from mcp_helpers import cli_command, structured, text, write_config

pytestmark = pytest.mark.slow  # read-only mounts and CLI subprocesses

_MOUNT_RO = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", _MOUNT_RO, "sh", "/tmp", "true"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@contextmanager
def read_only(folder: Path) -> Iterator[Callable[[list[str]], list[str]]]:
    """Yield a function that turns a command into one that sees ``folder`` read-only."""
    if _can_mount():
        yield lambda cmd: ["unshare", "-m", "sh", "-c", _MOUNT_RO, "sh", str(folder), *cmd]
        return
    if os.geteuid() == 0:
        pytest.skip("running as root without the right to mount: nothing is read-only to us")
    files = [p for p in folder.iterdir() if p.is_file()]
    for p in files:
        p.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield lambda cmd: cmd
    finally:
        folder.chmod(0o755)
        for p in files:
            p.chmod(0o644)


def book_text(n: int) -> dict[str, dict[str, str]]:
    return {f"Part {c}": {f"Piece {s}": " ".join(
        f"Story {n}.{c}.{s}.{i} of kelp, tide pools and the rocky shore." for i in range(12))
        for s in range(2)} for c in range(2)}


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    """Two books, closed cleanly: only book.db is left (its WAL folded in)."""
    folder = tmp_path / "lib"
    folder.mkdir()
    config = write_config(folder)
    with Library.open(config) as lib:
        for n in (1, 2):
            lib.ingest(write_markdown_book(folder / f"book{n}.md", f"Book {n}", book_text(n)))
    assert not (folder / "book.db-wal").exists()
    return folder


def kill_a_writer_after_deleting_book_2(folder: Path) -> None:
    """Delete a book in a process that dies without closing: the deletion lives only in
    ``book.db-wal`` (``-shm`` beside it), exactly as after a crash."""
    code = ("import os, sys; from grimoire_beholder.library import Library; "
            "lib = Library.open(sys.argv[1]); "
            "lib.conn.execute('PRAGMA wal_autocheckpoint = 0'); lib.delete('book-2'); "
            "os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(folder / "config.toml")], check=True,
                   timeout=60)
    assert (folder / "book.db-wal").stat().st_size > 0 and (folder / "book.db-shm").exists()


def run(wrap: Callable[[list[str]], list[str]], folder: Path,
        *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "10000"}
    return subprocess.run(wrap([*cli_command(), *args]), cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)


def slugs(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0, proc.stderr
    return sorted(b["slug"] for b in json.loads(proc.stdout))


WRITES = (("ingest", "book1.md"), ("ingest", "."), ("delete", "book-1", "--yes"),
          ("reindex-fts",), ("sync",))


def assert_refused_as_read_only(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("warning")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "read-only" in lines[0] and "FTS5" not in lines[0], lines[0]


@pytest.mark.parametrize("state", ["closed cleanly", "left by a killed writer"])
def test_reading_works_and_writing_is_refused_on_read_only_media(library_dir: Path,
                                                                 state: str) -> None:
    expected = ["book-1", "book-2"]
    if state == "left by a killed writer":
        kill_a_writer_after_deleting_book_2(library_dir)
        expected = ["book-1"]  # the deletion is only in the WAL, and must be seen
    before = {p.name: p.read_bytes() for p in library_dir.iterdir() if p.is_file()}
    with read_only(library_dir) as wrap:
        assert slugs(run(wrap, library_dir, "list", "--json")) == expected
        status = run(wrap, library_dir, "status", "--json")
        assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
        found = run(wrap, library_dir, "query", "kelp tide pools", "--json")
        assert found.returncode == 0, found.stderr
        assert {r["slug"] for r in json.loads(found.stdout)["results"]} <= set(expected)
        checked = run(wrap, library_dir, "check", "--json")
        assert checked.returncode == 0 and json.loads(checked.stdout)["ok"], checked.stdout
        for args in WRITES:
            assert_refused_as_read_only(run(wrap, library_dir, *args))
    after = {p.name: p.read_bytes() for p in library_dir.iterdir() if p.is_file()}
    assert after == before


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_server_serves_from_read_only_media(library_dir: Path,
                                                      anyio_backend: str) -> None:
    with read_only(library_dir) as wrap:
        command, *args = wrap([*cli_command(), "serve-mcp"])
        params = StdioServerParameters(command=command, args=args, cwd=str(library_dir),
                                       env=dict(os.environ))
        async with Client(params) as client:
            books = structured(await client.call_tool("list_books", {}))
            hits = await client.call_tool("search_book", {"question": "kelp tide pools"})
    assert len(books["books"]) == 2
    assert not hits.is_error and "Story" in text(hits)


def test_a_wal_without_its_index_on_read_only_media_is_one_clear_line(
        library_dir: Path) -> None:
    kill_a_writer_after_deleting_book_2(library_dir)
    (library_dir / "book.db-shm").unlink()
    with read_only(library_dir) as wrap:
        proc = run(wrap, library_dir, "list")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "book.db-wal" in lines[0] and "copy" in lines[0], proc.stderr


# -- the same decisions in-process, on any machine ------------------------------------
@pytest.fixture
def unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process may write nothing (as on a read-only mount), whatever SQLite could."""
    monkeypatch.setattr(connection, "may_write", lambda path: False)


def test_decision_opens_immutable_only_when_the_file_alone_is_the_library(
        library_dir: Path, unwritable: None) -> None:
    db = library_dir / "book.db"
    assert connection.needs_immutable(db)  # closed cleanly: no -wal, no -shm
    assert connection.unwritable_reason(db) is not None
    kill_a_writer_after_deleting_book_2(library_dir)
    assert not connection.needs_immutable(db)  # the -shm is there: mode=ro reads the WAL
    (library_dir / "book.db-shm").unlink()
    with pytest.raises(StorageError, match=r"book\.db-wal"):
        connection.needs_immutable(db)


@pytest.mark.parametrize("state", ["closed cleanly", "left by a killed writer"])
def test_library_api_reads_and_refuses_writes_when_it_cannot_write(
        library_dir: Path, unwritable: None, state: str) -> None:
    if state == "left by a killed writer":
        kill_a_writer_after_deleting_book_2(library_dir)
    db = library_dir / "book.db"
    before = snapshot(db) if state == "closed cleanly" else None
    with Library.open(library_dir / "config.toml") as lib:  # a write open was asked for
        assert lib.read_only
        expected = {"book-1", "book-2"} if state == "closed cleanly" else {"book-1"}
        assert {b.slug for b in lib.list_books()} == expected
        assert lib.search("kelp tide pools").hits and lib.check().ok
        for attempt in (lambda: lib.ingest(library_dir / "book1.md"),
                        lambda: lib.delete("book-1"), lambda: lib.reindex_fts(),
                        lambda: lib.sync()):
            with pytest.raises(ReadOnlyLibraryError, match="read-only"):
                attempt()
    if before is not None:
        assert snapshot(db) == before
