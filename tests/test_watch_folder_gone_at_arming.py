"""A watched folder that disappears in the instant between the watch noticing it is there
and its watcher starting (an unplugged drive, a folder deleted mid-batch): the watcher's
start then finds no such path. The watch goes on with the folders still there, and says
the gone one is waited for, instead of ending in a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.ingest import watch as watch_module
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import watching

pytestmark = pytest.mark.slow  # real watcher, real waiting


def _note(folder: Path, name: str, words: str) -> None:
    (folder / f"{name}.md").write_text(f"# {name}\n\n{words}\n", encoding="utf-8")


def test_a_folder_gone_as_the_watcher_starts_is_waited_for_and_the_others_watched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept, unplugged = tmp_path / "kept", tmp_path / "unplugged"
    for folder in (kept, unplugged):
        folder.mkdir()
        _note(folder, f"{folder.name}-tides", "Tides and harbours of the northern coast.")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        for folder in (kept, unplugged):
            lib.ingest_folder(folder)

    real_identity = watch_module._identity
    pulled: list[str] = []

    def identity_then_unplugged(path: str) -> tuple[int, int] | None:
        """The folder is there when looked at, and gone right after, once."""
        seen = real_identity(path)
        if path == str(unplugged.resolve()) and seen is not None and not pulled:
            shutil.rmtree(path)
            pulled.append(path)
        return seen

    monkeypatch.setattr(watch_module, "_identity", identity_then_unplugged)
    with watching(config) as seen:
        assert seen.until(lambda: bool(pulled))
        _note(kept, "kept-lamps", "Lamps, wicks and colza oil burned in the lantern.")
        assert seen.has("kept-lamps"), seen.reports
    assert not seen.errors
    with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as lib:
        slugs = {book.slug for book in lib.list_books()}
    assert {"kept-tides", "kept-lamps", "unplugged-tides"} <= slugs  # the gone folder's kept
