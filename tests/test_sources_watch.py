"""``sync --watch`` follows a Calibre library (or Zotero data folder) as it follows a folder:
with only a library ingested it refused ('nothing to watch: ingest a folder first'), and
beside a folder it never looked at the library. An edit Calibre writes into metadata.db
reaches the library within seconds."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import watching

DATA = Path(__file__).parent / "data" / "calibre" / "before"


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_watch_follows_an_edit_calibre_writes(tmp_path: Path) -> None:
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA, folder)
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(folder)
    with watching(config) as watch:
        def names() -> set[str]:
            with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as lib:
                return {b.name for b in lib.list_books()}

        with sqlite3.connect(folder / "metadata.db") as db:  # as Calibre writes a retitle
            db.create_function("title_sort", 1, lambda title: title)
            db.execute("UPDATE books SET title = 'Tide Tables, Revised' WHERE id = 1")
        assert watch.until(lambda: "Tide Tables, Revised" in names())
        reports = watch.reports  # the retitled book is read again: its report comes after
        assert watch.until(lambda: any(f.action == "updated" for r in reports for f in r.files))
        told = len(reports)
        assert any(f.action == "skipped" for f in reports[0].files)  # the MOBI-only book
        with sqlite3.connect(folder / "metadata.db") as db:  # a write that changes nothing
            db.create_function("title_sort", 1, lambda title: title)
            db.execute("UPDATE books SET last_modified = '2030-01-01' WHERE id = 2")
        time.sleep(2)
        assert len(reports) == told  # the same skip is not reported on every batch
