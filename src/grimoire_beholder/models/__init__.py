"""Model backends behind narrow Protocols; built from the config, heavy imports deferred."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grimoire_beholder.config import BACKEND_ENTRY_POINTS, Config
from grimoire_beholder.models.protocols import Embedder, Generator, Reranker

__all__ = ["Embedder", "Generator", "Models", "Reranker", "make_embedder", "make_generator",
           "make_reranker"]


class Models:
    """The configured embedder and generator, each built on first use.

    Building one is cheap but not free (the Ollama backends import their client), and
    ``list`` or a keyword-only search never need them. ``embedder``/``generator`` given here
    replace the configured ones (tests inject fakes).
    """

    def __init__(self, config: Config, embedder: Embedder | None = None,
                 generator: Generator | None = None) -> None:
        self._config = config
        self._embedder = embedder
        self._generator = generator
        self._generator_set = generator is not None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self._config)
        return self._embedder

    @property
    def generator(self) -> Generator | None:
        """None when contexts are built without an LLM (``llm_backend = "none"``)."""
        if not self._generator_set:
            self._generator = make_generator(self._config)
            self._generator_set = True
        return self._generator


def make_embedder(config: Config) -> Embedder:
    """The configured embedder. Cheap: backends load their model on first use or check()."""
    if config.embedding_backend == "embedded":
        from grimoire_beholder.models.embedded import EmbeddedEmbedder

        return EmbeddedEmbedder(batch_size=config.embed_batch_size, int8=config.embed_int8)
    if config.embedding_backend == "ollama":
        from grimoire_beholder.models.ollama import OllamaEmbedder

        return OllamaEmbedder.from_config(config)
    return _from_entry_point("embedding_backend", config)


def make_generator(config: Config) -> Generator | None:
    """The configured LLM, or None when contexts are built without one (``llm_backend=none``)."""
    if config.llm_backend == "none":
        return None
    if config.llm_backend == "ollama":
        from grimoire_beholder.models.ollama import OllamaGenerator

        return OllamaGenerator.from_config(config)
    return _from_entry_point("llm_backend", config)


def _from_entry_point(key: str, config: Config) -> Any:
    """The backend another package registered under the config value (validated to exist)."""
    from importlib.metadata import entry_points

    found = entry_points(group=BACKEND_ENTRY_POINTS[key], name=getattr(config, key))
    return next(iter(found)).load()(config)


def make_reranker(config: Config) -> Reranker | None:
    """The configured reranker, or None (``reranker = "none"``). Cheap: models load lazily."""
    if config.reranker == "onnx":
        from grimoire_beholder.models.rerank_onnx import OnnxReranker

        base = Path(config.base_dir)
        path = Path(config.reranker_path).expanduser() if config.reranker_path else None
        if path is not None and not path.is_absolute():
            path = base / path
        return OnnxReranker(path or "")
    if config.reranker == "ollama":
        from grimoire_beholder.models.rerank_ollama import OllamaReranker

        return OllamaReranker(config.reranker_model, host=config.ollama_host,
                              timeout=config.ollama_timeout, retries=config.ollama_retries,
                              concurrency=config.context_concurrency)
    return None
