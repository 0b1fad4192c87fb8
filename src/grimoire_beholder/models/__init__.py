"""Model backends behind narrow Protocols; built from the config, heavy imports deferred."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from .protocols import Embedder, Generator, Reranker

__all__ = ["Embedder", "Generator", "Reranker", "make_embedder", "make_generator",
           "make_reranker"]


def make_embedder(config: Config) -> Embedder:
    """The configured embedder. Cheap: backends load their model on first use or check()."""
    if config.embedding_backend == "embedded":
        from .embedded import EmbeddedEmbedder

        return EmbeddedEmbedder(batch_size=config.embed_batch_size)
    if config.embedding_backend == "ollama":
        from .ollama import OllamaEmbedder

        return OllamaEmbedder(
            model=config.embedding_model, host=config.ollama_host,
            timeout=config.ollama_timeout, retries=config.ollama_retries,
            batch_size=config.embed_batch_size,
        )
    from .fake import FakeEmbedder

    return FakeEmbedder()


def make_generator(config: Config) -> Generator | None:
    """The configured LLM, or None when contexts are built without one (``llm_backend=none``)."""
    if config.llm_backend == "none":
        return None
    if config.llm_backend == "ollama":
        from .ollama import OllamaGenerator

        return OllamaGenerator(
            model=config.llm_model, host=config.ollama_host,
            timeout=config.ollama_timeout, retries=config.ollama_retries,
        )
    from .fake import FakeGenerator

    return FakeGenerator()


def make_reranker(config: Config) -> Reranker | None:
    """The configured reranker, or None (``reranker = "none"``). Cheap: models load lazily."""
    if config.reranker == "onnx":
        from .rerank_onnx import OnnxReranker

        base = Path(config.base_dir)
        path = Path(config.reranker_path).expanduser() if config.reranker_path else None
        if path is not None and not path.is_absolute():
            path = base / path
        return OnnxReranker(path or "")
    if config.reranker == "ollama":
        from .rerank_ollama import OllamaReranker

        return OllamaReranker(config.reranker_model, host=config.ollama_host,
                              timeout=config.ollama_timeout, retries=config.ollama_retries,
                              concurrency=config.context_concurrency)
    return None
