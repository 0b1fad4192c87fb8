"""``sync --watch`` when the watched folder itself goes: deleted and made again (a fresh
clone, a restore), or deleted and back later. The watcher was bound to the old folder; it
must keep following the new one, not go blind while saying nothing."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import watching


def _note(path: Path, title: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\nA note called {title} about harbours and lanterns.\n",
                    encoding="utf-8")


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_a_watched_folder_deleted_and_made_again_is_still_followed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _note(root / "first.md", "First")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
    with watching(config) as watch:
        has = watch.has
        shutil.rmtree(root)  # a fresh clone in its place
        _note(root / "cloned.md", "Cloned")
        assert has("cloned")
        _note(root / "later.md", "Later")  # written into the new folder
        assert has("later")
        shutil.rmtree(root)  # gone a while: its books are kept
        time.sleep(1)
        _note(root / "back.md", "Back")
        assert has("back")
        _note(root / "after.md", "After")
        assert has("after")
    with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as lib:
        assert sorted(b.slug for b in lib.list_books()) == ["after", "back"]
        assert lib.check().ok


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_a_watch_started_while_its_folder_is_away_waits_for_it(tmp_path: Path) -> None:
    root = tmp_path / "drive" / "notes"
    _note(root / "first.md", "First")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
    away = tmp_path / "unplugged"
    root.rename(away)  # the drive is not mounted when the watch starts
    with watching(config) as watch:
        has = watch.has
        away.rename(root)
        _note(root / "plugged.md", "Plugged")
        assert has("plugged") and has("first")
