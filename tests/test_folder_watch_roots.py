"""``sync --watch`` when the watched folder itself goes: deleted and made again (a fresh
clone, a restore), or deleted and back later. The watcher was bound to the old folder; it
must keep following the new one, not go blind while saying nothing."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from helpers import fake_config


def _note(path: Path, title: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\nA note called {title} about harbours and lanterns.\n",
                    encoding="utf-8")


@contextmanager
def _watching(config: Config) -> Iterator[Callable[[str], bool]]:
    """A watch running in a thread; yields ``has(slug)``: whether that book is in the
    library, fully embedded, within ten seconds."""
    stop = threading.Event()
    reports: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with Library.open(config=config, embedder=FakeEmbedder()) as watcher:
                watcher.watch(stop_event=stop, on_report=reports.append, debounce_ms=200)
        except BaseException as exc:  # surfaced by the assertions below
            errors.append(exc)

    def has(slug: str) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as lib:
                if any(b.slug == slug and b.status["embedded"] == b.chunks > 0
                       for b in lib.list_books()):
                    return True
            time.sleep(0.1)
        return False

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not reports and time.monotonic() < deadline:  # the initial sync is done
            time.sleep(0.05)
        time.sleep(0.5)  # let the watcher settle before the change
        yield has
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive() and not errors, errors


def test_a_watched_folder_deleted_and_made_again_is_still_followed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _note(root / "first.md", "First")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
    with _watching(config) as has:
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


def test_a_watch_started_while_its_folder_is_away_waits_for_it(tmp_path: Path) -> None:
    root = tmp_path / "drive" / "notes"
    _note(root / "first.md", "First")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
    away = tmp_path / "unplugged"
    root.rename(away)  # the drive is not mounted when the watch starts
    with _watching(config) as has:
        away.rename(root)
        _note(root / "plugged.md", "Plugged")
        assert has("plugged") and has("first")
