"""The label filters (``--tag/--collection/--series``) on labels as people name them in
Zotero and Calibre: outside ASCII ('Ökologie', asked for as 'ökologie') and with a stray
space at the end of the name. Case-insensitive in every script, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config

pytest_plugins = ["pg_server"]  # the pg_url fixture

DATA = Path(__file__).parent / "data" / "zotero"
PAPER = "Tidal Friction and the Length of the Day"


def _zotero(tmp_path: Path) -> Path:
    folder = tmp_path / "Zotero"
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("*.py", "*.md"))
    with sqlite3.connect(folder / "zotero.sqlite") as db:
        db.execute("UPDATE collections SET collectionName = 'Ökologie ' "
                   "WHERE collectionName = 'Ocean Physics'")
        db.execute("UPDATE tags SET name = 'GEZEITEN' WHERE name = 'tides'")
    return folder


def _labels_found(lib: Library, folder: Path) -> None:
    lib.ingest_folder(folder)
    for labels in ({"collection": "ökologie"}, {"collection": " ÖKOLOGIE "},
                   {"tag": "gezeiten"}, {"collection": "Ökologie "}):
        hits = lib.search("how fast is the moon receding", **labels).hits  # type: ignore[arg-type]
        assert hits and {h.book for h in hits} == {PAPER}, labels


def test_labels_match_in_any_case_and_without_stray_spaces(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        _labels_found(lib, _zotero(tmp_path))


@pytest.mark.slow
def test_labels_match_so_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    with Library.open(config=fake_config(tmp_path, db_path=pg_url),
                      embedder=FakeEmbedder()) as lib:
        _labels_found(lib, _zotero(tmp_path))
