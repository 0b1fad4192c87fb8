"""Attacks on the partitioned persisted index: near-copies, deleted books, one-book filters.

Every search the index calls proven must give the exact arms' top 10 (same database, the
index folder removed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.search import index_partition, index_writer, persisted
from grimoire_beholder.search import segment_files as seg
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.search.vector import VectorIndex
from helpers import EMBEDDER, add_book, open_library, remove_book

PARAGRAPH = [
    "the", "keeper", "trimmed", "the", "wick", "and", "polished", "the", "lens", "before", "the",
    "fog", "came", "in", "from", "the", "north", "coast", "while", "gulls", "circled", "the",
    "rock", "and", "the", "storm", "signal", "rose",
]
SPARE = ["lantern", "harbour", "tide", "beacon", "rope", "winter", "cliff", "wave", "oil",
         "glass", "ship", "light", "lamp", "cafe", "bell", "horn", "mist", "spray"]


@pytest.fixture(autouse=True)
def _small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "1")
    monkeypatch.setattr(index_partition, "PARTITION_MIN_ROWS", 500)
    monkeypatch.setattr(index_partition, "ROWS_PER_LIST", 16)
    monkeypatch.setattr(persisted, "EXACT_FILTER_ROWS", 50)  # a one-book filter reads lists


def _near_copies(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = list(PARAGRAPH)
        words[int(rng.integers(len(words)))] = str(rng.choice(SPARE))
        out.append(" ".join(words))
    return out


def test_near_copies_deleted_books_and_filters_match_the_exact_arms(tmp_path: Path) -> None:
    conn = open_library(tmp_path)
    ids = []
    for b in range(4):
        texts = _near_copies(b, 400)
        specs = [(f"Chapter {c}", f"Part {c}", texts[c * 8:(c + 1) * 8]) for c in range(50)]
        ids.append(add_book(conn, f"book-{b}", specs))
    path = tmp_path / "library.db"
    assert index_writer.update(conn, path) == "built"
    manifest = seg.read_manifest(seg.folder_for(path))
    assert manifest is not None
    assert seg.load_segment(seg.folder_for(path), manifest["segments"][0]["name"]).lists > 0
    remove_book(conn, ids[1])
    index_writer.update(conn, path)
    index = SearchIndex(path)
    assert index.refresh(conn) == "persisted"
    exact = VectorIndex()
    exact.refresh(conn)
    rng = np.random.default_rng(3)
    probes = [EMBEDDER.embed_query(" ".join(_near_copies(s, 1))) for s in range(20)]
    probes += [EMBEDDER.embed_query(str(rng.choice(SPARE))) for _ in range(5)]
    proven = 0
    for probe in probes:
        got = index.search(probe, 10)
        want = exact.search(probe, 10)
        assert index._persisted is not None
        assert {c for c, _ in got} <= {c for c, _ in exact.search(probe, 2000)}  # no dead row
        if index._persisted.last_proven:
            proven += 1
            assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in want]
        for book in (ids[0], ids[2]):
            filtered = index.search(probe, 10, [book])
            if not index._persisted.last_proven:
                continue
            assert ([round(s, 5) for _, s in filtered]
                    == [round(s, 5) for _, s in exact.search(probe, 10, [book])])
        assert index.search(probe, 10, [ids[1]]) == []  # a deleted book has no hits
    assert proven > 0
    # the index folder removed: the exact arms answer the same
    shutil.rmtree(seg.folder_for(path))
    again = SearchIndex(path)
    assert again.refresh(conn) != "persisted"
    for probe in probes[:5]:
        assert ([c for c, _ in again.search(probe, 10)]
                == [c for c, _ in exact.search(probe, 10)])
