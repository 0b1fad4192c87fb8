"""``sync --watch`` follows a Calibre library (or Zotero data folder) as it follows a folder:
with only a library ingested it refused ('nothing to watch: ingest a folder first'), and
beside a folder it never looked at the library. An edit Calibre writes into metadata.db
reaches the library within seconds."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config

DATA = Path(__file__).parent / "data" / "calibre" / "before"


def test_watch_follows_an_edit_calibre_writes(tmp_path: Path) -> None:
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA, folder)
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(folder)
    stop = threading.Event()
    reports: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with Library.open(config=config, embedder=FakeEmbedder()) as watcher:
                watcher.watch(stop_event=stop, on_report=reports.append, debounce_ms=200)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def names() -> set[str]:
        with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as lib:
            return {b.name for b in lib.list_books()}

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not reports and not errors and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not errors, errors
        time.sleep(0.5)  # let the watcher settle
        with sqlite3.connect(folder / "metadata.db") as db:  # as Calibre writes a retitle
            db.create_function("title_sort", 1, lambda title: title)
            db.execute("UPDATE books SET title = 'Tide Tables, Revised' WHERE id = 1")
        deadline = time.monotonic() + 10
        while "Tide Tables, Revised" not in names() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "Tide Tables, Revised" in names()
        told = len(reports)
        assert any(f.action == "skipped" for f in reports[0].files)  # the MOBI-only book
        with sqlite3.connect(folder / "metadata.db") as db:  # a write that changes nothing
            db.create_function("title_sort", 1, lambda title: title)
            db.execute("UPDATE books SET last_modified = '2030-01-01' WHERE id = 2")
        time.sleep(2)
        assert len(reports) == told  # the same skip is not reported on every batch
    finally:
        stop.set()
        thread.join(10)
    assert not errors, errors
