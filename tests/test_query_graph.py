"""A query runs the query graph (the encoder without its word table, fed the rows of the
query's tokens from the weights file): its vector must be the one the documents' graph gives
the same text, whatever the text, and a search must load only that smaller graph."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.embedded import EmbeddedEmbedder
from grimoire_beholder.models.minilm_files import find_model_dir
from grimoire_beholder.models.word_table import TABLE

SAMPLE = Path(__file__).parents[1] / "samples" / "lighthouse-keepers-handbook.md"
ODD = [
    "", "   ", "\n\t", "?", "a", "x" * 300, "[SEP] [CLS] [MASK] [UNK]", "\u200b\x00\ufffd",
    "Ünïcödé façade naïve café — “quotes”", "日本語のテキストを検索する", "😀🔦🌊 emoji only",
    "مرحبا بالعالم", "Ελληνικά κείμενα και ερωτήσεις", "e = mc^2; 3.14159 ≈ π, 1,234,567.89",
    "def beam(range_km: float) -> float: return range_km ** 0.5  # code?",
    "HOW FAR CAN A LIGHTHOUSE BEAM REACH AT NIGHT?!",
]


def _queries() -> list[str]:
    """Odd texts, sentences of the sample book and random runs of its words."""
    text = SAMPLE.read_text(encoding="utf-8")
    sentences = [s.strip() for s in text.replace("\n", " ").split(". ") if s.strip()]
    words = text.split()
    rng = random.Random(7)
    runs = [" ".join(rng.sample(words, rng.randint(1, 120))) for _ in range(25)]
    return ODD + sentences[:25] + runs


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float32"])
def test_query_vectors_are_the_documents_graph_vectors(int8: bool) -> None:
    embedder = EmbeddedEmbedder(int8=int8, threads=1)
    queries = [q for q in _queries() if embedder.token_count(q) <= embedder.max_seq_length]
    assert len(queries) >= 60
    reference = embedder.embed_documents(queries)  # the full graph, one window each
    for query, expected in zip(queries, reference, strict=True):
        vector = embedder.embed_query(query)
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        assert float(vector @ expected) >= 0.9999, query


def test_a_long_query_is_its_first_window() -> None:
    """Truncated at 256 pieces: the vector the documents' graph gives its first 254 words
    (each one word piece) alone."""
    embedder = EmbeddedEmbedder(int8=True, threads=1)
    vocab = [w for w in ("lighthouse", "keeper", "lamp", "oil", "night", "sea", "storm",
                         "ship", "light", "tower", "harbour", "coast", "wind", "rock")
             if embedder.count_pieces(w) == 1]
    assert len(vocab) >= 8
    rng = random.Random(3)
    words = [rng.choice(vocab) for _ in range(400)]
    first = embedder.embed_documents([" ".join(words[:254])])[0]
    assert float(embedder.embed_query(" ".join(words)) @ first) >= 0.9999


@pytest.mark.slow  # a fresh interpreter builds the query graph
def test_a_search_loads_only_the_query_graph(tmp_path: Path) -> None:
    code = ("from grimoire_beholder.models.embedded import EmbeddedEmbedder as E; "
            "E(int8=True).embed_query('how far can a lighthouse beam reach?')")
    env = {**os.environ, "GRIMOIRE_BEHOLDER_CACHE": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    [graph] = (tmp_path / "models").iterdir()
    assert graph.name.startswith("query-int8-")
    assert graph.stat().st_size < 15_000_000  # no word table: the documents' graph is 35 MB


def _model_copy(folder: Path) -> tuple[Path, bytes]:
    """A copy of the embedded model in ``folder`` and its weights' bytes."""
    folder.mkdir()
    for item in find_model_dir().iterdir():
        if item.is_file():
            (folder / item.name).write_bytes(item.read_bytes())
    return folder, (folder / "model.safetensors").read_bytes()


def _split(weights: bytes) -> tuple[dict[str, Any], int, bytes]:
    """A safetensors file's header, the header's length and the data after it."""
    (size,) = struct.unpack("<Q", weights[:8])
    return json.loads(weights[8:8 + size]), size, weights[8 + size:]


def _join(header: dict[str, Any], data: bytes, size: int | None = None) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((size or len(text) + 7 & ~7) - len(text))
    return struct.pack("<Q", len(text)) + text + data


def _damaged(weights: bytes) -> list[bytes]:
    header, _, data = _split(weights)
    no_table = {k: v for k, v in header.items() if k != TABLE}
    start, end = header[TABLE]["data_offsets"]
    only_table = {TABLE: {**header[TABLE], "data_offsets": [0, end - start]}}
    return [b"\x10\x00\x00\x00\x00\x00\x00\x00{not json", weights[:len(weights) // 2],
            _join({**header, TABLE: {**header[TABLE], "dtype": "I8"}}, data),
            _join(no_table, data), _join(only_table, data[start:end])]


def test_damaged_weights_are_a_model_error(tmp_path: Path) -> None:
    """Truncated, not safetensors, another dtype, no word table, nothing but a word table:
    one clear error."""
    folder, weights = _model_copy(tmp_path / "model")
    for damaged in _damaged(weights):
        (folder / "model.safetensors").write_bytes(damaged)
        with pytest.raises(ModelError, match="cannot load the embedded model"):
            EmbeddedEmbedder(model_dir=folder).embed_query("a question")


def test_weights_replaced_or_lying_under_a_cached_graph(tmp_path: Path) -> None:
    """A weights file replaced while a process runs (a reinstall under a server) is read
    as the new file, whatever its header's length; a header edited in place to point the
    word table elsewhere, size and time kept (so the cached graph is reused), is refused."""
    folder, weights = _model_copy(tmp_path / "model")
    path = folder / "model.safetensors"
    embedder = EmbeddedEmbedder(model_dir=folder, int8=False, threads=1)
    vocab = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    ids = [vocab["lamp"], vocab["oil"]]
    oil = embedder.embed_query("oil")
    header, size, data = _split(weights)
    start, _ = header[TABLE]["data_offsets"]
    table = np.frombuffer(data, "<f2", count=header[TABLE]["shape"][0] * 384,
                          offset=start).reshape(-1, 384).copy()
    table[ids] = table[ids[::-1]]  # "lamp" now reads "oil"'s row
    swapped = bytearray(data)
    swapped[start:start + table.nbytes] = table.tobytes()
    (folder / "new").write_bytes(_join(header, bytes(swapped), size + 8))  # offsets move
    os.replace(folder / "new", path)
    assert float(embedder.embed_query("lamp") @ oil) > 0.9999
    fresh = EmbeddedEmbedder(model_dir=folder, int8=False, threads=1)  # its graph is cached
    assert float(fresh.embed_query("lamp") @ oil) > 0.9999

    stat = path.stat()
    header, size, data = _split(path.read_bytes())
    header[TABLE]["data_offsets"] = [n + 768 for n in header[TABLE]["data_offsets"]]
    with path.open("r+b") as file:
        file.write(_join(header, b"", size))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ModelError, match="not a whole safetensors file"):
        EmbeddedEmbedder(model_dir=folder, int8=False, threads=1).embed_query("lamp")
