"""Deterministic, dependency-free models for the tests and the benches.

The fake embedder hashes each word (lower-cased, accents kept) into one of ``dimension``
buckets, so texts that share words get similar vectors: good enough for search tests to
mean something, and identical on every machine.

In-process tests inject them (``Library.open(embedder=FakeEmbedder())``). Tests that run the
CLI or the MCP server as a subprocess write ``embedding_backend = "fake"`` (or
``llm_backend = "fake"``) in a config instead: ``tests/fakes_plugin`` registers
:func:`fake_embedder` and :func:`fake_generator` under that name as backend entry points, and
it is installed only in the dev environment, so no installed copy of the package knows "fake".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


def _bucket(word: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, 1.0 if (value >> 32) & 1 else -1.0


class FakeEmbedder:
    """Hashed bag-of-words vectors, L2-normalised."""

    def __init__(self, dimension: int = 64, name: str = "fake-embedder") -> None:
        self._dimension = dimension
        self._name = name
        self.calls: list[int] = []  # batch sizes seen, for tests
        self.windowed = 0  # bag-of-words has no input limit: nothing is ever windowed

    @property
    def identity(self) -> str:
        return f"fake:{self._name}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def check(self) -> None:
        return None

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self._dimension, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            index, sign = _bucket(word, self._dimension)
            vec[index] += sign
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


class FakeGenerator:
    """Echoes a short, deterministic 'summary': the first words of the prompt's last line."""

    def __init__(self, name: str = "fake-llm") -> None:
        self._name = name
        self.prompts: list[str] = []

    @property
    def identity(self) -> str:
        return f"fake:{self._name}"

    def check(self) -> None:
        return None

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256) -> str:
        self.prompts.append(prompt)
        lines = [ln for ln in prompt.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else ""
        return "Context: " + " ".join(last.split()[:20])


def fake_embedder(config: Any) -> FakeEmbedder:
    """The ``fake`` embedding backend (entry point; the config is not needed)."""
    return FakeEmbedder()


def fake_generator(config: Any) -> FakeGenerator:
    """The ``fake`` LLM backend (entry point; the config is not needed)."""
    return FakeGenerator()
