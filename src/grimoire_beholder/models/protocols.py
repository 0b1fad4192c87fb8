"""Narrow capabilities the pipeline needs from models; one small module per backend.

The ingest pipeline and search depend only on these Protocols, never on a backend module, so
a backend's heavy imports (onnxruntime, the ollama client) happen only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the Protocols must not cost numpy's import
    import numpy as np


@runtime_checkable
class FitsWindow(Protocol):
    """An embedder with a fixed window of word pieces that it can count, so that chunks are
    cut to fit it and a chunk's context is trimmed to fill it (the embedded MiniLM); for any
    other embedder chunks are sized in approximate tokens and ``context + chunk`` is
    embedded as is."""

    @property
    def window_pieces(self) -> int:
        """Pieces one window holds, the model's own markers (``[CLS]``/``[SEP]``) excluded."""
        ...

    def count_pieces(self, text: str) -> int:
        """Pieces ``text`` takes in the window (no markers), without loading the model."""
        ...

    def fit_context(self, context: str, text: str, most: int | None = None,
                    text_most: int | None = None) -> str:
        """The text to embed for chunk ``text`` with situating ``context`` (of at most
        ``most`` pieces when given; the text itself cut to at most ``text_most``)."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    @property
    def identity(self) -> str:
        """Stable name stamped in the database, e.g. ``embedded:all-MiniLM-L6-v2``."""
        ...

    @property
    def dimension(self) -> int: ...

    def check(self) -> None:
        """Raise ModelError with a fix (e.g. ``ollama pull …``) if the model cannot run."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for passages to be stored: shape (len(texts), dimension), L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Vector for a search query: shape (dimension,), L2-normalised."""
        ...

    @property
    def windowed(self) -> int:
        """Documents embedded so far that were longer than the model's input and were
        embedded as several windows averaged (0 for a backend that never windows).

        Part of the Protocol, not probed with ``getattr``: the ingest report and the CLI's
        note about long chunks read it, and a backend that named it differently would make
        that note silently vanish instead of failing the type check.
        """
        ...


@runtime_checkable
class Generator(Protocol):
    """A text-generation model used for section summaries and chunk contexts."""

    @property
    def identity(self) -> str: ...

    def check(self) -> None: ...

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256) -> str:
        """The model's completion of ``prompt`` (stripped)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) relevance; higher is more relevant."""

    @property
    def identity(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...
