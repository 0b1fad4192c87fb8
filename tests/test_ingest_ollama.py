"""Ingest and search on the Ollama backend: the real `ollama` client against a fake daemon."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_ollama import FakeOllama
from grimoire_beholder.config import Config
from grimoire_beholder.errors import ModelError
from helpers import fake_config, open_with_ollama


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as srv:
        yield srv


def _config(tmp_path: Path, server: FakeOllama, **extra: Any) -> Config:
    settings: dict[str, Any] = {
        "embedding_backend": "ollama", "llm_backend": "ollama",
        "embedding_model": "nomic-embed-text", "llm_model": "llama3.2:3b",
        "ollama_host": server.host, "embed_batch_size": 4}
    return fake_config(tmp_path, **{**settings, **extra})


def _books(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT slug FROM books").fetchall()
    finally:
        conn.close()


def test_ingest_and_search_through_ollama(tmp_path: Path, server: FakeOllama,
                                          sample_book: Path) -> None:
    with open_with_ollama(_config(tmp_path, server, chunk_size=40, chunk_overlap=5)) as lib:
        report = lib.ingest(sample_book)
        assert report.embedded == report.chunks
        embeds = [r for r in server.requests_to("/api/embed") if r.status == 200]
        stored = [text for r in embeds for text in r.body["input"]
                  if text.startswith("search_document: ")]
        assert len(stored) == report.chunks  # every chunk embedded once, with its prefix
        assert all(len(r.body["input"]) <= 4 for r in embeds)
        assert all(r.model == "nomic-embed-text" for r in embeds)
        prompts = [r.body["prompt"] for r in server.requests_to("/api/generate")]
        assert len(prompts) == report.summaries + report.contexts
        # the chunk-context prompts of one section share the section text as their prefix
        slugs_prompts = [p for p in prompts if "Slugs feed at night" in p]
        assert len(slugs_prompts) >= 3
        shared = _common_prefix(slugs_prompts)
        assert "Slugs feed at night" in shared
        server.clear_log()
        hits = lib.search("copper tape against slugs").hits
        assert hits and hits[0].section.endswith("Slugs")
        queries = server.requests_to("/api/embed")
        assert queries and queries[0].body["input"][0].startswith("search_query: ")


def _common_prefix(texts: list[str]) -> str:
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def test_missing_model_is_refused_before_any_write(tmp_path: Path, server: FakeOllama,
                                                   sample_book: Path) -> None:
    config = _config(tmp_path, server, llm_model="qwen3:8b")
    with open_with_ollama(config) as lib, pytest.raises(ModelError, match="ollama pull qwen3:8b"):
        lib.ingest(sample_book)
    assert _books(config.database_path) == []


def test_daemon_down_is_refused_before_any_write(tmp_path: Path, server: FakeOllama,
                                                 sample_book: Path) -> None:
    config = _config(tmp_path, server)
    server.stop()
    with open_with_ollama(config) as lib, pytest.raises(ModelError, match="ollama serve"):
        lib.ingest(sample_book)
    assert _books(config.database_path) == []


def test_daemon_dying_mid_stage_stops_cleanly_and_resumes(tmp_path: Path,
                                                          sample_book: Path) -> None:
    calls = {"n": 0}
    server = FakeOllama()

    def reply(model: str, prompt: str, body: dict[str, Any]) -> str:
        calls["n"] += 1
        if calls["n"] == 6:  # the daemon goes away in the middle of the context stage
            threading.Thread(target=server.stop).start()
        return f"Context {len(prompt)} for {model}"

    server.reply = reply
    server.start()
    try:
        config = _config(tmp_path, server, context_concurrency=1)
        with open_with_ollama(config) as lib:
            with pytest.raises(ModelError):
                lib.ingest(sample_book)
            status = lib.status().books[0]
            assert not status.complete and status.status["embedded"] == 0
        server.start()  # the daemon is back: the same command resumes
        with open_with_ollama(config) as lib:
            report = lib.ingest(sample_book)
            assert not report.created
            book = lib.list_books()[0]
            assert book.status["embedded"] == book.chunks
            integrity = lib.integrity()
            assert integrity.fts_rows == integrity.embedded_chunks
    finally:
        server.stop()


def test_wrong_dimension_is_never_stored(tmp_path: Path, server: FakeOllama,
                                         sample_book: Path) -> None:
    config = _config(tmp_path, server)
    with open_with_ollama(config) as lib:
        lib.ingest(sample_book)
        dims = {len(r[0]) for r in lib.conn.execute("SELECT vector FROM embeddings")}
        assert dims == {768 * 4}
        other = sample_book.with_name("second.md")
        other.write_text("# Second\n\n## Part\n\n" + "river stones and water " * 80)
        server.wrong_dimension_next(10)
        with pytest.raises(ModelError):
            lib.ingest(other)
        dims = {len(r[0]) for r in lib.conn.execute("SELECT vector FROM embeddings")}
        assert dims == {768 * 4}


def test_a_model_without_a_window_reads_a_books_whole_context_and_index(
        tmp_path: Path, server: FakeOllama) -> None:
    """The cuts of what the embedded model reads of a book's chunk and of an index page
    (``pipeline.embedding_texts``) are for a model with a window: an Ollama model still gets
    each chunk's whole context and whole text, an HTML book's index page included."""
    entries = "".join(f"<p>{word}, {n}, {n + 40}</p>" for n, word in enumerate(
        ("lantern quokka moat amber winter frost copper tape slug beetle " * 12).split()))
    book = tmp_path / "lamps.html"
    book.write_text("<html><head><title>Lamps</title></head><body><h1>Lanterns</h1>"
                    "<p>" + "The quokka lantern glows amber when the moat freezes. " * 20
                    + "</p><h1>Index</h1>" + entries + "</body></html>", encoding="utf-8")
    with open_with_ollama(_config(tmp_path, server, chunk_size=200, chunk_overlap=0)) as lib:
        lib.ingest(book)
        read = [text.removeprefix("search_document: ")
                for r in server.requests_to("/api/embed") if r.status == 200
                for text in r.body["input"] if text.startswith("search_document: ")]
        conn = sqlite3.connect(lib.config.database_path)
        try:
            stored = conn.execute(
                "SELECT c.context, c.text, s.role FROM chunks c JOIN sections s "
                "ON s.id = c.section_id ORDER BY c.id").fetchall()
        finally:
            conn.close()
    assert {role for _, _, role in stored} == {"body", "index"}
    assert all(context and len(context.split()) > 16 for context, _, _ in stored)
    assert max(len(text.split()) for _, text, role in stored if role == "index") > 100
    assert sorted(read) == sorted(f"{context}\n\n{text}" for context, text, _ in stored)
