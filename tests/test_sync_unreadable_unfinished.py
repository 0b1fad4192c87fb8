"""A book an interrupted ingest left half-done whose file is there but fails now — it cannot
be read (permission denied: the file, or the folder holding it) or is damaged (a download cut
short) — in a synced folder, a Calibre library or a Zotero data folder: ``sync`` tells it
once, as *failed* (exit 1), as every sync does until the file can be read, and finishes the
book from what is stored (that needs no file), saying so in a warning; a dry run counts the
chunks it would embed. Once the file is mended the next sync finds it unchanged.

Real CLI processes (the ingest SIGKILLed at a kill point), real files and SQLite. A file's
mode does not bind root, so under root the CLI runs with no capabilities (``setpriv``), as
an ordinary user meets the file. Before the fix a synced folder's unreadable book was told
twice, *failed* and *resumed* (three outcomes for two files), and a damaged one, or any
such Calibre or Zotero book, stayed unfinished through every sync."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from helpers import make_epub, write_markdown_book
from mcp_helpers import cli_command
from resume_helpers import TIDES, interrupt, json_in, unfinished

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240),  # a killed ingest, then 6 CLI runs
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")]

DATA = Path(__file__).parent / "data"


def _as_user(how: str) -> list[str]:
    """What runs the CLI as a user a file's mode binds: nothing when not root (or when the
    file is damaged, not locked); root without capabilities (which then reads no file its
    mode forbids) under root."""
    if how == "file damaged" or os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: a file's mode does not bind root")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all"]


def _sync(lib: Path, how: str, *args: str, code: int) -> dict[str, Any]:
    """``sync --json`` in ``lib`` as :func:`_as_user` runs it, exiting with ``code``."""
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    done = subprocess.run([*_as_user(how), *cli_command(), "sync", *args, "--json"],
                          cwd=lib, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == code, (done.stdout, done.stderr)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _told(report: dict[str, Any], slug: str) -> list[tuple[str, int]]:
    return [(f["action"], f["embedded"]) for f in report["files"] if f["slug"] == slug]


@contextmanager
def _broken(path: Path, how: str) -> Iterator[None]:
    """``path`` unreadable (its mode, or its folder's) or damaged for the block; mended
    after it. A locked file gets a new mtime too, so the sync must read it."""
    original = path.read_bytes()
    locked = path.parent if how == "folder unreadable" else path
    if how == "file damaged":
        path.write_bytes(b"PK a download cut short " * 50)
    else:
        if how == "file unreadable":
            st = path.stat()
            os.utime(path, (st.st_atime, st.st_mtime + 60))
        locked.chmod(0)
    try:
        yield
    finally:
        if how == "file damaged":
            path.write_bytes(original)
        else:
            locked.chmod(0o755 if locked.is_dir() else 0o644)


def _source(tmp_path: Path, source: str) -> Path:
    """The folder to ingest: a synced folder (a short Markdown book and a longer EPUB),
    the Calibre fixture or the Zotero fixture, copied."""
    folder = tmp_path / source
    if source == "calibre":
        shutil.copytree(DATA / "calibre" / "before", folder)
    elif source == "zotero":
        shutil.copytree(DATA / "zotero", folder,
                        ignore=shutil.ignore_patterns("*.py", "*.md", "__pycache__"))
    else:
        (folder / "sea").mkdir(parents=True)
        write_markdown_book(folder / "knots.md", "Knots",
                            {"One": {"Bends": "A sheet bend joins two ropes. " * 3}})
        docs = {f"c{n}.xhtml": f"<h1>{chapter}</h1><p>{text}</p>"
                for n, (chapter, parts) in enumerate(TIDES.items(), 1)
                for text in parts.values()}
        make_epub(folder / "sea" / "tides.epub", docs,
                  [(f"Chapter {n}", f"c{n}.xhtml") for n in range(1, len(docs) + 1)],
                  title="Tide Tables")
    return folder


@pytest.mark.parametrize("how", ["file unreadable", "folder unreadable", "file damaged"])
@pytest.mark.parametrize("source", ["folder", "calibre", "zotero"])
def test_a_half_done_book_whose_file_fails_is_failed_once_and_finished(
        tmp_path: Path, source: str, how: str) -> None:
    _as_user(how)
    book = interrupt(tmp_path, _source(tmp_path, source))
    pending = book["chunks"] - book["status"].get("embedded", 0)
    assert pending > 0
    [path] = [Path(b["source_path"]) for b in json_in(tmp_path, "list")
              if b["slug"] == book["slug"]]
    with _broken(path, how):
        dry = _sync(tmp_path, how, "--dry-run", code=1)
        assert _told(dry, book["slug"]) == [("failed", pending)], dry
        assert any("would be finished from what is stored" in w for w in dry["warnings"])
        assert unfinished(tmp_path) == [book]  # the dry run wrote nothing

        report = _sync(tmp_path, how, code=1)
        assert _told(report, book["slug"]) == [("failed", pending)], report
        assert report["counts"]["resumed"] == 0 and report["counts"]["removed"] == 0
        [told] = [f for f in report["files"] if f["slug"] == book["slug"]]
        assert ("Permission denied" in told["error"]) == (how != "file damaged"), told
        assert any(w.startswith(told["path"]) and "finished from what is stored" in w
                   and told["error"] in w for w in report["warnings"]), report["warnings"]
        assert unfinished(tmp_path) == []
        hits = json_in(tmp_path, "query", "tide", "--book", book["slug"], "--top-k", "20")
        assert hits["results"] and all(h["context"].startswith(book["name"])
                                       for h in hits["results"])

        again = _sync(tmp_path, how, code=1)  # failing still; nothing to finish or to say
        assert _told(again, book["slug"]) == [("failed", 0)], again
        assert not any("finished from what is stored" in w for w in again["warnings"])
    mended = _sync(tmp_path, how, code=0)
    assert _told(mended, book["slug"]) == [("unchanged", 0)], mended


def test_a_calibre_library_that_may_not_be_searched_keeps_its_books_and_says_why(
        tmp_path: Path) -> None:
    how = "folder unreadable"
    _as_user(how)
    library = _source(tmp_path, "calibre")
    book = interrupt(tmp_path, library)
    pending = book["chunks"] - book["status"].get("embedded", 0)
    kept = [b["slug"] for b in json_in(tmp_path, "list")]
    with _broken(library / "metadata.db", how):  # the library's own folder locked
        report = _sync(tmp_path, how, code=0)
        assert any(w == f"{library}: the Calibre library cannot be read (Permission "
                   "denied); its books are kept" for w in report["warnings"]), report
        assert not any("moved?" in w for w in report["warnings"])  # it was not
        assert _told(report, book["slug"]) == [("resumed", pending)], report
        assert any("finished from what is stored" in w and "Permission denied" in w
                   for w in report["warnings"])
    assert [b["slug"] for b in json_in(tmp_path, "list")] == kept
    assert unfinished(tmp_path) == []
