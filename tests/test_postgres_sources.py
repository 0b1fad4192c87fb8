"""Calibre libraries on a library in a real PostgreSQL server: one moved between syncs is
followed when ingested where it is now (its books re-pointed, nothing embedded again), and
one unfollowed lets its books go as single files — the PostgreSQL branch of
``source_rows.forget_library`` (tests/test_sources_library_moves.py holds the SQLite one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server

DATA = Path(__file__).parent / "data" / "calibre" / "before"


def test_a_moved_then_unfollowed_calibre_library(tmp_path: Path, pg_url: str) -> None:
    old = tmp_path / "Calibre Library"
    shutil.copytree(DATA, old)
    with Library.open(config=fake_config(tmp_path, db_path=pg_url),
                      embedder=FakeEmbedder()) as lib:
        assert lib.ingest_folder(old).counts()["added"] == 3
        ids = {b.slug: b.id for b in lib.list_books()}
        new = tmp_path / "Books"
        old.rename(new)
        report = lib.ingest_folder(new)
        assert report.counts()["moved"] == 3 and report.embedded == 0
        assert {b.slug: b.id for b in lib.list_books()} == ids
        assert all(b.link and "_hex_-426F6F6B73" in b.link for b in lib.list_books())
        assert lib.sync().warnings == []
        folder, books = lib.unfollow(new)
        assert folder == str(new.resolve()) and len(books) == 3
        assert all(b.link is None and b.tags == [] for b in lib.list_books())
        assert lib.ingest_folder(new).counts()["updated"] == 3  # adopted again, no copies
        assert {b.slug: b.id for b in lib.list_books()} == ids
