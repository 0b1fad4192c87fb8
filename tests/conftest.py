"""Shared fixtures: real SQLite libraries in tmp dirs, on deterministic fake models."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library


def pytest_configure(config: pytest.Config) -> None:
    """No test may read or fill the real per-user library: the platform's per-user folders
    (XDG on Linux) point into a throwaway folder for the session, subprocesses included, and
    the library-choosing variables of the developer's shell are dropped."""
    user_dirs = Path(tempfile.mkdtemp(prefix="grimoire-user-dirs-"))
    os.environ["XDG_DATA_HOME"] = str(user_dirs / "data")
    os.environ["XDG_CONFIG_HOME"] = str(user_dirs / "config")
    for name in ("GRIMOIRE_BEHOLDER_CONFIG", "GRIMOIRE_BEHOLDER_LIBRARY"):
        os.environ.pop(name, None)


SHARED = Path(__file__).resolve().parents[2] / "shared"
BENCH = SHARED / "bench"


def fake_config(tmp_path: Path, **overrides: object) -> Config:
    """A config whose library lives in ``tmp_path`` and whose models are the fakes."""
    base = Config(base_dir=str(tmp_path), db_path="book.db", embedding_backend="fake",
                  llm_backend="none", chunk_size=120, chunk_overlap=20)
    return base.with_overrides(**overrides) if overrides else base


@pytest.fixture
def anyio_backend() -> str:
    """The event loop for ``@pytest.mark.anyio`` tests (the MCP client sessions)."""
    return "asyncio"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return fake_config(tmp_path)


@pytest.fixture
def library(config: Config) -> Iterator[Library]:
    lib = Library.open(config=config, embedder=FakeEmbedder())
    try:
        yield lib
    finally:
        lib.close()


def write_markdown_book(path: Path, title: str, chapters: dict[str, dict[str, str]]) -> Path:
    """Write a Markdown book: ``# chapter`` headings with ``## section`` bodies."""
    lines = ["---", f"title: {title}", "author: Test Author", "---", ""]
    for chapter, sections in chapters.items():
        lines += [f"# {chapter}", ""]
        for section, body in sections.items():
            lines += [f"## {section}", "", body, ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


GARDEN_CHAPTERS: dict[str, dict[str, str]] = {
    "Soil": {
        "Compost": "Compost turns kitchen scraps into dark humus. Turn the heap weekly "
                   "so air reaches the microbes. " * 6,
        "Drainage": "Clay soils hold water; raised beds and grit improve drainage for "
                    "roots that rot in wet ground. " * 6,
    },
    "Pests": {
        "Aphids": "Aphids cluster on new shoots. Ladybirds and a jet of water keep "
                  "them down without sprays. " * 6,
        "Slugs": "Slugs feed at night on seedlings; copper tape and beer traps "
                 "protect lettuce beds. " * 6,
    },
}


@pytest.fixture
def sample_book(tmp_path: Path) -> Path:
    return write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)


def open_with_ollama(config: Config) -> Library:
    """A Library on the real Ollama backends (for a FakeOllama server), with tiny retry
    backoff so fault tests stay fast."""
    from grimoire_beholder.models.ollama import OllamaEmbedder, OllamaGenerator

    embedder = OllamaEmbedder(config.embedding_model, config.ollama_host, timeout=5.0,
                              retries=2, batch_size=config.embed_batch_size, backoff=0.01)
    generator = OllamaGenerator(config.llm_model, config.ollama_host, timeout=5.0, retries=2,
                                backoff=0.01)
    return Library.open(config=config, embedder=embedder, generator=generator)
