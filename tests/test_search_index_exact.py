"""The persisted index is exact on near-duplicate-heavy libraries, as the README says.

A library whose chunks are near-copies of one paragraph (one word changed in each) puts
thousands of chunks within the int8 codes' rounding error of each other: re-scoring only
the best few hundred estimates missed most of the true top 10. The library here is a real
ingest of a Markdown file through ``Library`` with a dense embedder (every word a fixed
pseudo-random 384-d direction, summed: one changed word moves a chunk's vector a little, as
with a real sentence embedder), forced onto the persisted index; its vector-mode answers
must equal the exact arms' answers once the index folder is removed.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.library import Library
from grimoire_beholder.search import index_writer
from grimoire_beholder.search.segment_files import folder_for
from helpers import fake_config

PARAGRAPH = (
    "The keeper climbed the narrow stair each evening before dusk, trimmed the wick, polished "
    "the great lens until no smear of salt remained, and wound the clockwork that turned the "
    "light through the long winter night while the storm drove waves against the rock below "
    "and the fishing boats of the harbour waited for the beam to guide them past the reef "
    "where so many ships had broken in the years before the tower was built by the men of "
    "the northern coast who carried every stone up from the shore on their backs. "
) * 2  # one chunk (a chunk holds <= 1,200 characters); one changed word moves ~5e-4 of cosine
COPIES = 2400


class DenseEmbedder:
    """Sum of fixed pseudo-random unit directions of the words, L2-normalised."""

    dimension = 384
    identity = "fake:dense-words"
    windowed = 0

    def check(self) -> None:
        return None

    @staticmethod
    @functools.lru_cache(maxsize=100_000)
    def _word(word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vec = np.random.default_rng(seed).standard_normal(384)
        return vec / np.linalg.norm(vec)

    def _one(self, text: str) -> np.ndarray:
        words = re.findall(r"\w+", text.lower())
        total = np.sum([self._word(w) for w in words], axis=0) if words else np.zeros(384)
        return np.asarray(total / (np.linalg.norm(total) or 1.0), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 384))

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


def _near_copies(path: Path) -> Path:
    """One section per copy of PARAGRAPH (the same heading each time), its n-th word
    (cycling) replaced by a word of its own."""
    words = PARAGRAPH.split()
    lines = ["# The lighthouse", ""]
    for i in range(COPIES):
        copy = list(words)
        copy[i % len(words)] = f"variant{i}"
        lines += ["## Copy", "", " ".join(copy), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _answers(lib: Library, queries: list[str]) -> list[list[int]]:
    return [[h.chunk_id for h in lib.search(q, top_k=10, mode="vector").hits] for q in queries]


@pytest.mark.slow
def test_near_copies_get_the_exact_arms_top_10(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "100")
    config = fake_config(tmp_path, chunk_size=2000, chunk_overlap=0)
    embedder = DenseEmbedder()
    with Library.open(config=config, embedder=embedder) as lib:  # type: ignore[arg-type]
        lib.ingest(_near_copies(tmp_path / "lighthouse.md"))
        assert lib.status().chunks["embedded"] == COPIES
    folder = folder_for(config.database_path)
    assert (folder / "manifest.json").is_file()
    words = PARAGRAPH.split()
    queries = [" ".join(words[:300]), "the keeper polished the lens",
               "storm waves against the rock", " ".join(words[:200]), " ".join(words[90:380]),
               "variant7 keeper " + " ".join(words[40:300])]
    with Library.open(config=config, embedder=embedder,  # type: ignore[arg-type]
                      read_only=True) as lib:
        persisted = _answers(lib, queries)
        index = lib._search_engine().vector_index
        assert index.persisted
        rng = np.random.default_rng(3)
        base = embedder.embed_query(PARAGRAPH)
        probes = [base + 0.02 * rng.standard_normal(384).astype(np.float32) for _ in range(20)]
        arm = [index.search(p, 10) for p in probes]
    shutil.rmtree(folder)
    with Library.open(config=config, embedder=embedder,  # type: ignore[arg-type]
                      read_only=True) as lib:
        index = lib._search_engine().vector_index
        assert _answers(lib, queries) == persisted
        assert not index.persisted
        for probe, got in zip(probes, arm, strict=True):
            want = index.search(probe, 10)
            assert [c for c, _ in got] == [c for c, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def _segment_meta(folder: Path) -> list[Path]:
    return sorted(folder.glob("seg-*/segment.json"))


def test_the_recorded_rounding_bound_is_checked_and_older_segments_stay_exact(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` calls a segment whose recorded residual is too small damaged (searches on
    it would not be exact); a segment written before the residual was recorded searches
    with the worst-case bound and still gives the exact arms' answers."""
    import json

    from grimoire_beholder.search import index_check
    from grimoire_beholder.search.index import SearchIndex
    from grimoire_beholder.search.vector import VectorIndex
    from index_helpers import random_library

    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "0")
    conn, path, _ = random_library(tmp_path, n_books=4)
    assert index_writer.update(conn, path) == "built"
    folder = folder_for(path)
    metas = _segment_meta(folder)
    assert metas and all(json.loads(m.read_text())["residual"] > 0 for m in metas)
    assert index_check.inspect(conn, path)[0].startswith("in use")
    for meta in metas:  # an older segment: no residual recorded
        data = json.loads(meta.read_text())
        del data["residual"]
        meta.write_text(json.dumps(data))
    index = SearchIndex(path)
    assert index.refresh(conn) == "persisted"
    exact = VectorIndex()
    exact.refresh(conn)
    rng = np.random.default_rng(11)
    for _ in range(20):
        probe = rng.standard_normal(exact.dimension).astype(np.float32)
        assert ([c for c, _ in index.search(probe, 10)]
                == [c for c, _ in exact.search(probe, 10)])
    data = json.loads(metas[0].read_text())
    data["residual"] = 0.0  # claims codes equal to the vectors: not true
    metas[0].write_text(json.dumps(data))
    state, problems = index_check.inspect(conn, path)
    assert state == "damaged" and "segment.json" in problems[0]
