"""A bench-only embedder that remembers every vector it has computed, by the text embedded.

Why: retrieval experiments rebuild dev libraries whenever chunking or structure changes, yet
most chunk texts (and every question) are the same as last time. Embedding is the slow part
of ingest (~20-38 chunks/s on the reference machine), so a cache keyed by the exact input
text turns a rebuild into seconds for the unchanged chunks. It wraps the configured
embedder and forwards everything else to it, so libraries built through it are identical to
libraries built without it (the identity stamp is the wrapped model's).

The cache is one SQLite file beside the cached libraries (never in the repository).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import grimoire_beholder.models
from grimoire_beholder.models.protocols import Embedder

# The code that turns a text into the embedded model's vector: a change to any of it (e.g.
# int8 calls of one sequence instead of a batch) changes vectors without changing the model's
# identity, so it is part of every key and of the dev libraries' fingerprint.
VECTOR_CODE = ("embedded.py", "bert_onnx.py", "onnx_proto.py", "graph_cache.py", "wordpiece.py",
               "lazy.py", "word_table.py", "embed_batches.py", "minilm_files.py",
               "model_folder.py")


def vector_code_digest() -> str:
    """A short hash of the files named in ``VECTOR_CODE``."""
    folder = Path(grimoire_beholder.models.__file__).parent
    digest = hashlib.sha256()
    for name in VECTOR_CODE:
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:12]


class CachingEmbedder:
    """``Embedder`` with a persistent text → vector cache (documents and queries apart)."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self._inner = inner
        self._code = vector_code_digest()
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                   timeout=120)  # two bench runs may share one cache
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, "
                         "vector BLOB NOT NULL)")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def check(self) -> None:
        self._inner.check()

    def _key(self, kind: str, text: str) -> str:
        precision = getattr(self._inner, "precision", "float32")
        tag = f"{self._inner.identity}:{precision}:{self._code}"
        raw = f"{tag}\x1f{kind}\x1f{text}".encode("utf-8", "replace")
        return hashlib.sha256(raw).hexdigest()

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, pairs: list[tuple[str, np.ndarray]]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                             [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in pairs])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key("doc", t) for t in texts]
        with self._lock:
            found = self._lookup(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = self._inner.embed_documents([texts[i] for i in missing])
            with self._lock:
                self._store([(keys[i], fresh[j]) for j, i in enumerate(missing)])
            for j, i in enumerate(missing):
                found[keys[i]] = fresh[j]
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        key = self._key("query", text)
        with self._lock:
            found = self._lookup([key])
        if key in found:
            return found[key].copy()
        vector = self._inner.embed_query(text)
        with self._lock:
            self._store([(key, vector)])
        return vector
