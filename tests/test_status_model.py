"""``status`` and the MCP ``book_status`` name the embedding model the library's vectors were
made with, not only the configured one: with the configuration changed to another model they
showed the new one, as if the library used it, while every search and ingest refused. Now
they say the configured model differs and what to set back, and doing it works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli, write_markdown_book
from mcp_helpers import FAKE_CONFIG, connect, text, write_config

SET_BACK = ('embedding_backend = "fake" and embedding_model = "fake-embedder" are set back '
            "in {}")


def _library(tmp_path: Path) -> tuple[Path, list[str]]:
    folder = tmp_path / "lib"
    folder.mkdir()
    config = write_config(folder)
    book = write_markdown_book(tmp_path / "tides.md", "Tides", {
        "Moon": {"Springs": "Spring tides follow the full and the new moon."}})
    assert run_cli("ingest", str(book), "-q", "--library", str(folder)).returncode == 0
    return config, ["--library", str(folder)]


def _status(lib: list[str]) -> list[str]:
    run = run_cli("status", *lib)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_status_names_the_librarys_model_and_what_to_set_back(tmp_path: Path) -> None:
    config, lib = _library(tmp_path)
    assert "embeddings: fake · fake-embedder, 64 dimensions (the library's vectors)" in (
        _status(lib))
    assert not [line for line in _status(lib) if line.startswith("configured:")]

    config.write_text(FAKE_CONFIG.replace('"fake"', '"embedded"'), encoding="utf-8")
    shown = _status(lib)
    assert "embeddings: fake · fake-embedder, 64 dimensions (the library's vectors)" in shown
    [differs] = [line for line in shown if line.startswith("configured:")]
    assert differs.startswith("configured: embedded · all-MiniLM-L6-v2, not the library's "
                              "model: searches and ingests refuse until ")
    assert SET_BACK.format(config) in differs
    data = json.loads(run_cli("status", "--json", *lib).stdout)
    assert (data["embedding_configured"], data["embedding_stamp"]["identity"]) == (
        "embedded:all-MiniLM-L6-v2", "fake:fake-embedder")
    assert SET_BACK.format(config) in data["embedding_mismatch"]
    assert run_cli("query", "spring tides", *lib).returncode == 1

    config.write_text(FAKE_CONFIG + 'embedding_model = "fake-embedder"\n', encoding="utf-8")
    assert not [line for line in _status(lib) if line.startswith("configured:")]
    assert run_cli("query", "spring tides", *lib).returncode == 0  # as the advice said


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_book_status_names_the_librarys_model(tmp_path: Path, anyio_backend: str
                                                    ) -> None:
    config, _ = _library(tmp_path)
    config.write_text(FAKE_CONFIG.replace('"fake"', '"embedded"'), encoding="utf-8")
    async with connect(config) as client:
        result = await client.call_tool("book_status", {})
    shown = text(result)
    assert shown.startswith("embeddings: fake · fake-embedder (64 dimensions);"), shown
    assert ("the server is configured for embedded · all-MiniLM-L6-v2, not the library's "
            "model: searches and ingests refuse until ") in shown
    assert SET_BACK.format(config) in shown
    data = result.structured_content
    assert data is not None and data["embedding_stamp"]["identity"] == "fake:fake-embedder"
