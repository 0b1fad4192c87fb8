"""Ollama backends: an :class:`Embedder` and a :class:`Generator` over the ``ollama`` client.

Design points, each of which exists because the obvious version loses data silently:

* Ollama truncates long embedding inputs unless told not to, so we send ``truncate=False``
  and split over-long texts ourselves into windows (``ollama_inputs.split_windows``) whose
  vectors are averaged; the number of texts split is counted
  (:attr:`OllamaEmbedder.windowed`) so the pipeline can report it.
* Every response is validated (count, dimension, finite values) before it can reach the
  database; a vector of the wrong dimension is an error, never stored.
* Transient trouble (daemon restarting, HTTP 5xx, timeouts, garbled JSON) is retried with
  exponential backoff; after ``retries`` it becomes a one-line :class:`ModelError` so the
  pipeline stops with resumable state. A model that disappears is reported with the exact
  ``ollama pull`` command. We never pull on the user's behalf (``ollama_client``, the half
  both backends share).

The ``ollama`` package (and httpx/pydantic behind it) is imported in the constructors, so
importing this module stays cheap for users of the embedded backend.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.ollama_client import (
    DEFAULT_HOST,
    Malformed,
    OllamaBackend,
    TooLong,
    info_value,
)
from grimoire_beholder.models.ollama_inputs import (
    EmbeddingModelSpec,
    conservative_tokens,
    embedding_model_spec,
    split_windows,
)

if TYPE_CHECKING:
    from grimoire_beholder.config import Config

FALLBACK_MAX_TOKENS = 512


class OllamaEmbedder(OllamaBackend):
    """Embeddings from an Ollama model via ``/api/embed``, batched, validated, normalised."""

    def __init__(self, model: str, host: str = DEFAULT_HOST, timeout: float = 120.0,
                 retries: int = 3, batch_size: int = 32, *, backoff: float = 0.5,
                 max_tokens: int | None = None, keep_alive: str | float = "10m") -> None:
        """``max_tokens`` overrides the input limit from the table or ``/api/show``."""
        super().__init__(model, host, timeout, retries, backoff)
        self.batch_size = max(1, int(batch_size))
        self.keep_alive = keep_alive
        self.spec = embedding_model_spec(model) or EmbeddingModelSpec(0)
        self._max_tokens = max_tokens
        self._dimension: int | None = None
        self._windowed = 0
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: Config) -> OllamaEmbedder:
        """The embedder the configuration asks for (``embedding_model`` on ``ollama_host``)."""
        return cls(cfg.embedding_model_name, cfg.ollama_host, cfg.ollama_timeout,
                   cfg.ollama_retries, cfg.embed_batch_size)

    @property
    def windowed(self) -> int:
        """How many texts so far were too long for the model and embedded in windows."""
        with self._lock:
            return self._windowed

    @property
    def max_tokens(self) -> int:
        """The input limit in tokens, resolved once.

        The smaller of the table's trained length and the context ``/api/show`` reports (a
        tag may ship a shorter context than the family); unknown models use the latter.
        """
        with self._lock:
            if self._max_tokens is not None:
                return self._max_tokens
        context = info_value(self._model_info(), ".context_length")
        limits = [n for n in (self.spec.max_tokens, context) if n]
        found = min(limits) if limits else FALLBACK_MAX_TOKENS
        with self._lock:
            self._max_tokens = found
        return found

    @property
    def dimension(self) -> int:
        """The vector length, learnt from the model's first answer (a probe if need be)."""
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None
        return self._dimension

    def check(self) -> None:
        """Daemon up, model installed, and it really returns usable vectors."""
        self._check_installed()
        _ = self.max_tokens
        _ = self.dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for passages, with the model's document prefix."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._embed(list(texts), self.spec.document_prefix)

    def embed_query(self, text: str) -> np.ndarray:
        """A unit vector for a search query, with the model's query prefix."""
        return self._embed([text], self.spec.query_prefix)[0]

    # internals ------------------------------------------------------------------------
    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        limit = self.max_tokens
        budget = max(8, limit - conservative_tokens(prefix) - 4 - limit // 16)
        while True:
            try:
                vectors, split = self._embed_windows(texts, prefix, budget, limit)
            except TooLong:
                if budget <= 8:
                    break
                budget = max(8, budget // 2)  # our estimate was optimistic: halve and redo
                continue
            with self._lock:
                self._windowed += split
            return vectors
        raise ModelError(f"Ollama model '{self.model}' keeps refusing inputs as longer than its "
                         f"context even when split to {budget} estimated tokens")

    def _embed_windows(self, texts: list[str], prefix: str, budget: int,
                       limit: int) -> tuple[np.ndarray, int]:
        owners: list[int] = []
        inputs: list[str] = []
        weights: list[float] = []
        split = 0
        for i, text in enumerate(texts):
            windows = split_windows(text, budget)
            split += len(windows) > 1
            for window in windows:
                owners.append(i)
                inputs.append(prefix + window)
                weights.append(float(max(1, conservative_tokens(window))))
        parts = [self._embed_batch(inputs[start:start + self.batch_size], limit)
                 for start in range(0, len(inputs), self.batch_size)]
        raw = np.concatenate(parts, axis=0)
        dim = raw.shape[1]
        sums = np.zeros((len(texts), dim), dtype=np.float64)
        np.add.at(sums, np.asarray(owners), raw * np.asarray(weights)[:, None])
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise ModelError(f"Ollama model '{self.model}' returned vectors that cancel out")
        return (sums / norms).astype(np.float32), split

    def _embed_batch(self, batch: list[str], limit: int) -> np.ndarray:
        def request() -> np.ndarray:
            response = self._client.embed(model=self.model, input=batch, truncate=False,
                                          options={"num_ctx": limit},
                                          keep_alive=self.keep_alive)
            return self._validated(response.embeddings, len(batch))

        return self._call("embedding", request)

    def _validated(self, embeddings: Sequence[Sequence[float]], expected: int) -> np.ndarray:
        """Unit float64 rows, or raise: Malformed (retried) or ModelError (wrong dimension)."""
        if len(embeddings) != expected:
            raise Malformed(f"{len(embeddings)} vectors for {expected} inputs")
        dims = {len(v) for v in embeddings}
        with self._lock:
            want = self._dimension
        got = dims.pop() if len(dims) == 1 else None
        if got is None or got == 0 or (want is not None and got != want):
            shown = sorted({len(v) for v in embeddings})
            raise ModelError(
                f"Ollama model '{self.model}' returned vectors of dimension "
                f"{', '.join(map(str, shown))}, expected {want or 'one consistent size'} — "
                f"was the model replaced? Pin a model tag or re-embed the library")
        arr = np.asarray(embeddings, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise Malformed("non-finite values in embedding")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise Malformed("all-zero embedding")
        with self._lock:
            if self._dimension is None:
                self._dimension = got
        return arr / norms


_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


class OllamaGenerator(OllamaBackend):
    """Completions via ``/api/generate``: greedy, bounded, with the model kept loaded.

    ``num_ctx`` stays fixed for the generator's life: a different value per call would make
    Ollama reload the model and drop the KV cache that makes repeated section prefixes cheap.
    """

    def __init__(self, model: str, host: str = DEFAULT_HOST, timeout: float = 120.0,
                 retries: int = 3, *, backoff: float = 0.5, num_ctx: int = 8192,
                 keep_alive: str | float = "30m") -> None:
        super().__init__(model, host, timeout, retries, backoff)
        self.num_ctx = num_ctx
        self.keep_alive = keep_alive

    @classmethod
    def from_config(cls, cfg: Config) -> OllamaGenerator:
        """The generator the configuration asks for (``llm_model`` on ``ollama_host``)."""
        return cls(cfg.llm_model, cfg.ollama_host, cfg.ollama_timeout, cfg.ollama_retries)

    def check(self) -> None:
        """Daemon up and model installed; caps ``num_ctx`` at the model's context length."""
        self._check_installed()
        context = info_value(self._model_info(), ".context_length")
        if context:
            self.num_ctx = min(self.num_ctx, context)

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256) -> str:
        """The completion, with any ``<think>`` block removed and whitespace stripped."""
        options = {"num_predict": max_tokens, "temperature": 0.0, "seed": 0,
                   "num_ctx": self.num_ctx}

        def request() -> str:
            response = self._client.generate(model=self.model, prompt=prompt, system=system or "",
                                             options=options, keep_alive=self.keep_alive,
                                             stream=False)
            if response.response is None:
                raise Malformed("no 'response' field")
            return response.response

        return _THINK.sub("", self._call("generation", request)).strip()
