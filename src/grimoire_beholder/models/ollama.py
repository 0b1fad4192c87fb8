"""Ollama backends: an :class:`Embedder` and a :class:`Generator` over the ``ollama`` client.

Design points, each of which exists because the obvious version loses data silently:

* Ollama truncates long embedding inputs unless told not to, so we send ``truncate=False``
  and split over-long texts ourselves into windows whose vectors are averaged; the number of
  texts split is counted (:attr:`OllamaEmbedder.windowed`) so the pipeline can report it.
* Every response is validated (count, dimension, finite values) before it can reach the
  database; a vector of the wrong dimension is an error, never stored.
* Transient trouble (daemon restarting, HTTP 5xx, timeouts, garbled JSON) is retried with
  exponential backoff; after ``retries`` it becomes a one-line :class:`ModelError` so the
  pipeline stops with resumable state. A model that disappears is reported with the exact
  ``ollama pull`` command. We never pull on the user's behalf.

The ``ollama`` package (and httpx/pydantic behind it) is imported in the constructors, so
importing this module stays cheap for users of the embedded backend.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import numpy as np

from grimoire_beholder.errors import ModelError
from grimoire_beholder.structure.tokens import approx_tokens
from grimoire_beholder.text import NO_SPACE_CHARS

if TYPE_CHECKING:
    import ollama

    from grimoire_beholder.config import Config

T = TypeVar("T")

DEFAULT_HOST = "http://localhost:11434"
MAX_BACKOFF = 8.0
FALLBACK_MAX_TOKENS = 512


@dataclass(frozen=True)
class EmbeddingModelSpec:
    """What we know about a popular embedding model: its input limit and task prefixes."""

    max_tokens: int
    document_prefix: str = ""
    query_prefix: str = ""


_RETRIEVAL_QUERY = "Represent this sentence for searching relevant passages: "

# Keyed by the model name without its tag. Limits are the lengths the models were trained
# with (which may be lower than the context Ollama would accept); prefixes are the model
# cards' retrieval instructions — leaving them out measurably hurts these models' recall.
KNOWN_EMBEDDING_MODELS: dict[str, EmbeddingModelSpec] = {
    "nomic-embed-text": EmbeddingModelSpec(2048, "search_document: ", "search_query: "),
    "nomic-embed-text-v2-moe": EmbeddingModelSpec(512, "search_document: ", "search_query: "),
    "mxbai-embed-large": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "bge-large": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "snowflake-arctic-embed": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "snowflake-arctic-embed2": EmbeddingModelSpec(8192, "", "query: "),
    "all-minilm": EmbeddingModelSpec(256),
    "bge-m3": EmbeddingModelSpec(8192),
    "granite-embedding": EmbeddingModelSpec(512),
    "paraphrase-multilingual": EmbeddingModelSpec(128),
    "embeddinggemma": EmbeddingModelSpec(2048, "title: none | text: ",
                                         "task: search result | query: "),
    "qwen3-embedding": EmbeddingModelSpec(
        8192, "", "Instruct: Given a search query, retrieve relevant passages that answer "
                  "the query\nQuery: "),
}


def canonical_model_name(name: str) -> str:
    """``name`` with ``:latest`` when untagged — how Ollama itself resolves a model name."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def display_model_name(name: str) -> str:
    """``name`` without a ``:latest`` tag, so both spellings stamp the same identity."""
    return name[: -len(":latest")] if name.endswith(":latest") else name


def embedding_model_spec(model: str) -> EmbeddingModelSpec | None:
    """The table entry for ``model`` (any tag, any namespace), or None if unknown."""
    base = model.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return KNOWN_EMBEDDING_MODELS.get(base)


def conservative_tokens(text: str) -> int:
    """A token estimate that errs high, so a window we send is never over the real limit.

    WordPiece/BPE vocabularies split rare words, numbers and punctuation into several
    tokens; 1.25x the usual word-based estimate, or one token per 3.5 non-space
    characters, whichever is larger, covers technical prose.
    """
    chars = len(text) - text.count(" ")
    return math.ceil(max(approx_tokens(text) * 1.25, chars / 3.5))


_PIECE = re.compile(rf"[{NO_SPACE_CHARS}]\s*|[^\s{NO_SPACE_CHARS}]+\s*|\s+")


def split_windows(text: str, budget: int) -> list[str]:
    """Consecutive, non-overlapping pieces of ``text``, each within ``budget`` tokens.

    Cuts fall between words (or between CJK characters); a single "word" longer than the
    budget (a URL, base64) is cut by characters. Joining the windows gives back ``text``.
    """
    budget = max(1, budget)
    if conservative_tokens(text) <= budget:
        return [text]
    windows: list[str] = []
    current: list[str] = []
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        while conservative_tokens(piece) > budget:  # one monstrous word: cut by characters
            step = max(1, int(budget * 3.5) - 1)
            if current:
                windows.append("".join(current))
                current = []
            windows.append(piece[:step])
            piece = piece[step:]
        if current and conservative_tokens("".join(current) + piece) > budget:
            windows.append("".join(current))
            current = []
        current.append(piece)
    if current:
        windows.append("".join(current))
    return [w for w in windows if w.strip()] or [text[: max(1, int(budget * 3.5))]]


class _Malformed(Exception):
    """A response that parsed but cannot be used (counts, NaNs); retried like a 5xx."""


class _TooLong(Exception):
    """Ollama refused an input as longer than the context: our estimate was too low."""


def _is_loopback(host: str) -> bool:
    netloc = urlsplit(host if "://" in host else f"http://{host}").hostname or "localhost"
    return netloc in ("localhost", "::1") or netloc.startswith("127.")


class _OllamaBackend:
    """Shared client setup, model presence check and the retry policy."""

    def __init__(self, model: str, host: str, timeout: float, retries: int,
                 backoff: float) -> None:
        import ollama  # deferred: only paid for when an Ollama backend is chosen

        if not model or not model.strip():
            raise ModelError("no Ollama model configured — set embedding_model / llm_model")
        self.model = model.strip()
        self.host = host or DEFAULT_HOST
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        # A proxy from the environment must not intercept a daemon on this very machine.
        extra: dict[str, Any] = {"trust_env": False} if _is_loopback(self.host) else {}
        self._client: ollama.Client = ollama.Client(host=self.host, timeout=self.timeout,
                                                    **extra)

    @property
    def identity(self) -> str:
        """Stable stamp, e.g. ``ollama:nomic-embed-text`` (``:latest`` is dropped)."""
        return f"ollama:{display_model_name(self.model)}"

    def _pull_hint(self) -> str:
        return (f"Ollama model '{self.model}' is not installed at {self.host} — "
                f"run `ollama pull {self.model}`")

    def _unreachable(self) -> str:
        return (f"cannot reach Ollama at {self.host} — start it with `ollama serve` "
                f"(or set ollama_host)")

    def _call(self, action: str, request: Callable[[], T]) -> T:
        """Run ``request`` under the retry policy; every failure ends as a ModelError."""
        import httpx
        import ollama
        import pydantic

        last = ""
        unreachable = False
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF))
            unreachable = False
            try:
                return request()
            except ollama.ResponseError as exc:
                status, error = exc.status_code, str(exc.error)
                if status == 404 and "page not found" in error.lower():
                    raise ModelError(f"Ollama at {self.host} has no API for {action} — "
                                     f"upgrade Ollama") from None
                if status == 404 or (400 <= status < 500 and "not found" in error.lower()):
                    raise ModelError(self._pull_hint()) from None
                if status == 400 and "context length" in error.lower():
                    raise _TooLong(error) from None
                if 400 <= status < 500 and status not in (408, 429):
                    raise ModelError(f"Ollama rejected the {action} request for "
                                     f"'{self.model}': {error}") from None
                last = f"Ollama answered HTTP {status}: {error}"
            except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
                unreachable, last = True, "connection refused"
            except httpx.TimeoutException:
                last = (f"no answer within {self.timeout:g}s (raise ollama_timeout if the "
                        f"machine is slow)")
            except httpx.HTTPError as exc:
                last = f"connection problem: {exc}"
            except (json.JSONDecodeError, pydantic.ValidationError, _Malformed) as exc:
                last = f"malformed response: {str(exc).splitlines()[0]}"
        if unreachable:
            raise ModelError(self._unreachable())
        attempts = self.retries + 1
        raise ModelError(f"Ollama {action} with '{self.model}' failed after {attempts} "
                         f"attempt{'s' if attempts > 1 else ''}: {last}")

    def _check_installed(self) -> None:
        """Raise ModelError unless the daemon answers and lists our model."""
        listing = self._call("model listing", self._client.list)
        installed = {canonical_model_name(m.model) for m in listing.models if m.model}
        if canonical_model_name(self.model) not in installed:
            raise ModelError(self._pull_hint())

    def _model_info(self) -> dict[str, Any]:
        """``/api/show``'s model_info (architecture keys such as ``bert.context_length``)."""
        shown = self._call("model info", lambda: self._client.show(self.model))
        return dict(shown.modelinfo or {})


def _info_value(info: dict[str, Any], suffix: str) -> int | None:
    for key, value in info.items():
        if key.endswith(suffix) and isinstance(value, int) and value > 0:
            return value
    return None


class OllamaEmbedder(_OllamaBackend):
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
        context = _info_value(self._model_info(), ".context_length")
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
            except _TooLong:
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
        """Unit float64 rows, or raise: _Malformed (retried) or ModelError (wrong dimension)."""
        if len(embeddings) != expected:
            raise _Malformed(f"{len(embeddings)} vectors for {expected} inputs")
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
            raise _Malformed("non-finite values in embedding")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise _Malformed("all-zero embedding")
        with self._lock:
            if self._dimension is None:
                self._dimension = got
        return arr / norms


_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


class OllamaGenerator(_OllamaBackend):
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
        context = _info_value(self._model_info(), ".context_length")
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
                raise _Malformed("no 'response' field")
            return response.response

        return _THINK.sub("", self._call("generation", request)).strip()
