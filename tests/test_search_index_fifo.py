"""Probe of the damaged-index-shape class (issue 24): a file of the persisted index replaced
by a FIFO (a named pipe) made ``query`` and ``check`` wait forever on opening it. A file of
the index that is not a regular file is damage like any other: searches use the exact arms,
``check`` says so, a writing command rebuilds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grimoire_beholder.search import segment_files as seg
from test_search_index_damage import _cli, _index_small_libraries, library  # noqa: F401

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")]


@pytest.mark.parametrize("victim", ["term_hash.npy", "vectors.npy", "segment.json",
                                    "manifest.json"])
def test_a_named_pipe_in_the_index_is_damage_not_a_hang(library: Path,  # noqa: F811
                                                        victim: str) -> None:
    folder = seg.folder_for(library.parent / "book.db")
    manifest = seg.read_manifest(folder)
    assert manifest is not None
    path = folder / victim if victim == "manifest.json" else \
        folder / manifest["segments"][0]["name"] / victim
    path.unlink()
    os.mkfifo(path)
    found = _cli(library, "query", "lantern fog", "--json")
    assert found.exit_code == 0, found.output
    assert "lantern" in found.stdout
    _cli(library, "check")  # answers (damaged or not), without waiting on the pipe
    assert _cli(library, "reindex-fts").exit_code == 0
    assert _cli(library, "query", "storm", "--json").exit_code == 0
