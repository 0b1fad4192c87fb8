"""The MCP server, driven by the SDK's real client: in memory, and over stdio as a subprocess.

One small library of Markdown books (fake embedder) is built per module; each test starts its
own server on it, read-only, exactly as ``serve-mcp`` does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.server import MAX_TOP_K
from grimoire_beholder.text import PART_CHARS, split_parts
from helpers import write_markdown_book
from mcp_helpers import (
    RawStdioServer,
    books_by_slug,
    cli_command,
    connect,
    structured,
    text,
    three_book_library,
    write_config,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOOLS = {"list_books", "get_book_outline", "search_book", "get_section", "book_status",
         "verify_quote", "get_page_image", "lookup_index"}
@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return three_book_library(tmp_path_factory.mktemp("mcp-library"))


@pytest.fixture
def config_path(library_dir: Path) -> Path:
    return library_dir / "config.toml"


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


# ------------------------------------------------------------------------------ tools/list
async def test_lists_exactly_the_read_only_tools_with_schemas(config_path: Path) -> None:
    async with connect(config_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        ann = tool.annotations
        assert ann is not None
        assert (ann.read_only_hint, ann.destructive_hint, ann.idempotent_hint,
                ann.open_world_hint) == (True, False, True, False), tool.name
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert "ctx" not in tool.input_schema.get("properties", {}), tool.name
    search = tools["search_book"].input_schema
    assert search["required"] == ["question"]
    assert set(search["properties"]) == {"question", "book_id", "top_k", "author", "source_type",
                                         "group", "path_prefix", "until_chapter", "role",
                                         "tag", "collection", "series"}
    section = tools["get_section"].input_schema
    assert set(section["required"]) == {"book_id", "chapter_index", "section_index"}
    kinds = {s.get("type") for s in section["properties"]["book_id"]["anyOf"]}
    assert kinds == {"integer", "string"}
    assert "slug" in section["properties"]["book_id"]["description"]
    for name in ("list_books", "book_status"):  # a folder to expand, an offset to page on
        schema = tools[name].input_schema
        assert set(schema["properties"]) == {"folder", "offset"}, name
        assert not schema.get("required") and schema["additionalProperties"] is False, name
    search_out, section_out = (tools[n].output_schema for n in ("search_book", "get_section"))
    assert search_out is not None and "results" in search_out["properties"]
    assert section_out is not None and "total_parts" in section_out["properties"]
    assert "get_section" in (tools["search_book"].description or "")


# ------------------------------------------------------------------------------ every tool
async def test_list_books_and_status(config_path: Path) -> None:
    async with connect(config_path) as client:
        books = await books_by_slug(client)
        await call(client, "search_book", question="kitchen scraps compost heap")
        status = await call(client, "book_status")
    assert set(books) == {"the-garden-book", "bread-at-home", "lighthouse-log"}
    garden = books["the-garden-book"]
    assert garden["source_type"] == "markdown" and garden["author"] == "Test Author"
    assert garden["chapters"] == 2 and garden["sections"] >= 4 and garden["line_count"] > 0
    data = structured(status)
    assert {b["slug"] for b in data["books"]} == set(books)
    assert all(b["complete"] and b["status"]["embedded"] == b["chunks"] for b in data["books"])
    assert data["retrieval_mode"] == "hybrid" and data["embedding_backend"] == "fake"
    assert "the-garden-book" in text(status)
    savings = data["savings"]  # the search above was counted, even on a read-only server
    assert savings["searches"] >= 1 and 0 < savings["chars_served"] < savings["chars_books"]


async def test_outline_by_id_slug_and_digit_string(config_path: Path) -> None:
    async with connect(config_path) as client:
        book_id = (await books_by_slug(client))["the-garden-book"]["id"]
        by_slug = structured(await call(client, "get_book_outline", book_id="the-garden-book"))
        by_id = structured(await call(client, "get_book_outline", book_id=book_id))
        by_str = structured(await call(client, "get_book_outline", book_id=str(book_id)))
        one = structured(await call(client, "get_book_outline", book_id=book_id,
                                    chapter_index=1))
    assert by_slug == by_id == by_str
    titles = [c["title"] for c in by_id["chapters"]]
    assert titles == ["Soil", "Pests"]
    soil = by_id["chapters"][0]["sections"]
    assert [s["title"] for s in soil][-2:] == ["Compost", "Drainage"]
    assert all(s["approx_tokens"] > 0 for s in soil if s["title"])
    assert "text" not in json.dumps(by_id)  # a map, not the book
    assert [c["title"] for c in one["chapters"]] == ["Pests"]


async def test_search_chains_into_get_section(config_path: Path) -> None:
    async with connect(config_path) as client:
        result = await call(client, "search_book", question="kitchen scraps compost heap")
        data = structured(result)
        top = data["results"][0]
        section = await call(client, "get_section", book_id=top["book_id"],
                             chapter_index=top["chapter_index"],
                             section_index=top["section_index"])
    assert data["mode"] == "hybrid" and top["slug"] == "the-garden-book"
    assert "low_confidence" in data and "confidence" in data
    assert top["section"].endswith("Compost") and top["chapter"] == "Soil"
    garden = config_path.parent / "books" / "garden.md"  # Markdown cites file:lines
    assert top["location"] == f"{garden}:{top['line_start']}" + (
        f"-{top['line_end']}" if top["line_end"] != top["line_start"] else "")
    assert top["citation"] == f"{top['location']} · Soil › Compost"
    assert "chapter_index=" in text(result)
    body = structured(section)
    assert body["section"] == "Compost" and body["total_parts"] == 1 and body["part"] == 1
    assert "kitchen scraps" in body["text"] and "kitchen scraps" in text(section)


async def test_search_filters(config_path: Path) -> None:
    async with connect(config_path) as client:
        only = structured(await call(client, "search_book", question="dough gluten yeast",
                                     book_id="the-garden-book"))
        by_author = structured(await call(client, "search_book", question="soil and dough",
                                          author="Ada Baker", top_k=3))
        typed = structured(await call(client, "search_book", question="dough",
                                      source_type="markdown", top_k=2))
    assert {h["slug"] for h in only["results"]} <= {"the-garden-book"}
    assert by_author["results"] and {h["slug"] for h in by_author["results"]} == {"bread-at-home"}
    assert 1 <= len(typed["results"]) <= 2


# ------------------------------------------------------------------------------ errors
async def test_errors_a_model_can_act_on(config_path: Path) -> None:
    async with connect(config_path) as client:
        unknown = await call(client, "get_book_outline", book_id="no-such-book")
        chapter = await call(client, "get_section", book_id="the-garden-book",
                             chapter_index=9, section_index=0)
        section = await call(client, "get_section", book_id="the-garden-book",
                             chapter_index=0, section_index=99)
        empty = await call(client, "search_book", question="   ")
        bad_book = await call(client, "search_book", question="compost", book_id=404)
        bad_part = await call(client, "get_section", book_id="the-garden-book",
                              chapter_index=0, section_index=0, part=5)
        outline_chapter = await call(client, "get_book_outline", book_id="the-garden-book",
                                     chapter_index=7)
        wrong_type = await call(client, "get_section", book_id="the-garden-book",
                                chapter_index="first", section_index=0)
        still_alive = await call(client, "list_books")
    assert all(r.is_error for r in (unknown, chapter, section, empty, bad_book, bad_part,
                                    outline_chapter, wrong_type))
    assert "bread-at-home" in text(unknown) and "the-garden-book" in text(unknown)
    assert "chapters 0–1" in text(chapter) and "9" in text(chapter)
    assert "sections 0–" in text(section) and "99" in text(section)
    assert "question is empty" in text(empty)
    assert "the-garden-book" in text(bad_book)
    assert "parts 1–1" in text(bad_part)
    assert "chapters 0–1" in text(outline_chapter)
    assert "chapter_index" in text(wrong_type)
    assert not still_alive.is_error


async def test_top_k_is_clamped_not_crashed(config_path: Path) -> None:
    async with connect(config_path) as client:
        huge = structured(await call(client, "search_book", question="the", top_k=10_000))
        zero = structured(await call(client, "search_book", question="compost", top_k=0))
        default = structured(await call(client, "search_book", question="compost"))
    assert huge["top_k"] == MAX_TOP_K and "used 20" in huge["note"]
    assert len(huge["results"]) <= MAX_TOP_K
    assert zero["top_k"] == 1 and len(zero["results"]) == 1
    assert default["top_k"] == 5 and default["note"] is None


async def test_a_config_top_k_above_the_tools_bound_is_not_blamed_on_the_assistant(
        library_dir: Path, tmp_path: Path) -> None:
    """top_k = 50 in the config (the CLI takes up to 100): a search_book without top_k said
    'top_k 50 is out of range; used 20' on every call, a value the assistant never gave."""
    config = tmp_path / "config.toml"
    config.write_text(f"db_path = {json.dumps(str(library_dir / 'book.db'))}\n"
                      'embedding_backend = "fake"\nllm_backend = "none"\ntop_k = 50\n',
                      encoding="utf-8")
    async with connect(config) as client:
        default = structured(await call(client, "search_book", question="the"))
        given = structured(await call(client, "search_book", question="the", top_k=50))
    assert default["top_k"] == MAX_TOP_K and default["note"] is None
    assert given["top_k"] == MAX_TOP_K and "top_k 50 is out of range" in given["note"]


async def test_huge_section_comes_in_parts(config_path: Path) -> None:
    async with connect(config_path) as client:
        first = await call(client, "get_section", book_id="lighthouse-log",
                           chapter_index=0, section_index=0)
        data = structured(first)
        total = data["total_parts"]
        rest = [structured(await call(client, "get_section", book_id="lighthouse-log",
                                      chapter_index=0, section_index=0, part=n))
                for n in range(2, total + 1)]
    with Library.open(config_path, read_only=True) as lib:
        full = lib.section("lighthouse-log", 0, 0).text
    assert total >= 3 and data["part"] == 1
    assert "part=2" in data["note"] and "part=2" in text(first)
    parts = [data["text"]] + [r["text"] for r in rest]
    assert all(len(p) <= PART_CHARS for p in parts)
    assert all(p.endswith("dawn. ") or p.endswith("dawn.") for p in parts)  # paragraph ends
    assert "\n\n".join(parts) == full
    assert rest[-1]["note"] is None
    assert len(text(first)) < 25_000


def test_split_parts_is_lossless_and_bounded() -> None:
    text_in = "\n\n".join(["short"] * 3 + ["x " * 30_000] + ["tail"])
    parts = split_parts(text_in, 1_000)
    assert all(len(p) <= 1_000 for p in parts)
    assert "".join(p.replace("\n\n", "").replace(" ", "") for p in parts) == \
        text_in.replace("\n\n", "").replace(" ", "")
    assert split_parts("") == [""]
    assert split_parts("a\n\nb", 10) == ["a\n\nb"]


# ------------------------------------------------------------------------------ read-only
async def test_server_connection_cannot_write(config_path: Path) -> None:
    opened: list[Library] = []
    async with connect(config_path, opened) as client:
        assert not (await call(client, "list_books")).is_error
        lib = opened[0]
        assert lib.read_only
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            lib.conn.execute("INSERT INTO books (slug, name) VALUES ('x', 'x')")
        with pytest.raises(GrimoireError, match="read-only"):
            lib.delete("the-garden-book")
        assert len(await books_by_slug(client)) == 3


async def test_unreachable_ollama_is_a_tool_error(tmp_path: Path) -> None:
    from fake_ollama import FakeOllama

    with FakeOllama() as fake:
        config = write_config(tmp_path).parent / "config.toml"
        config.write_text(
            'db_path = "book.db"\nembedding_backend = "ollama"\nembedding_model = '
            f'"toy-embed:v1"\nollama_host = "{fake.host}"\nollama_retries = 0\n'
            "ollama_timeout = 2.0\nchunk_size = 120\nchunk_overlap = 20\n", encoding="utf-8")
        book = write_markdown_book(tmp_path / "t.md", "Tiny", {"A": {"B": "words " * 50}})
        with Library.open(config) as lib:
            lib.ingest(book)
    async with connect(config) as client:  # the daemon is gone now
        result = await call(client, "search_book", question="words")
        listed = await call(client, "list_books")
    assert result.is_error and "Ollama" in text(result), text(result)
    assert not listed.is_error


# ------------------------------------------------------------------------------ stdio
@pytest.mark.slow  # serve-mcp as a real subprocess
async def test_stdio_subprocess_with_the_sdk_client(library_dir: Path) -> None:
    command, *args = cli_command()
    params = StdioServerParameters(command=command, args=[*args, "serve-mcp"],
                                   cwd=str(library_dir), env=dict(os.environ))
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        hits = structured(await call(client, "search_book", question="slugs copper tape beer"))
        top = hits["results"][0]
        section = structured(await call(client, "get_section", book_id=top["slug"],
                                        chapter_index=top["chapter_index"],
                                        section_index=top["section_index"]))
    assert tools == TOOLS
    assert top["section"].endswith("Slugs") and "copper tape" in section["text"]


@pytest.mark.slow  # serve-mcp as a real subprocess
def test_stdout_carries_only_protocol(library_dir: Path, tmp_path: Path) -> None:
    env = {"GRIMOIRE_BEHOLDER_CONFIG": str(library_dir / "config.toml")}
    server = RawStdioServer(tmp_path, env)  # cwd has no config: the env var finds it
    try:
        init = server.send("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}})
        server.send("notifications/initialized", notify=True)
        listed = server.send("tools/list", {})
        called = server.send("tools/call", {"name": "search_book",
                                            "arguments": {"question": "aphids ladybirds"}})
        failed = server.send("tools/call", {"name": "get_book_outline",
                                            "arguments": {"book_id": "nope"}})
    finally:
        _out, err = server.close()
    assert init and init["result"]["serverInfo"]["name"] == "grimoire-beholder"
    assert listed and {t["name"] for t in listed["result"]["tools"]} == TOOLS
    assert called and called["result"]["structuredContent"]["results"][0]["section"].endswith(
        "Aphids")
    assert failed and failed["result"]["isError"] is True
    for line in server.lines:  # every byte on stdout is a JSON-RPC message
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert server.proc.returncode == 0, err


@pytest.mark.slow  # serve-mcp as a real subprocess
@pytest.mark.parametrize("case", ["missing-config", "missing-database"])
def test_start_up_failures_are_loud(tmp_path: Path, case: str) -> None:
    import subprocess

    env = dict(os.environ)
    if case == "missing-config":
        env["GRIMOIRE_BEHOLDER_CONFIG"] = str(tmp_path / "nope.toml")
        expected = "does not exist"
    else:
        env.pop("GRIMOIRE_BEHOLDER_CONFIG", None)
        write_config(tmp_path)
        expected = "no library database"
    proc = subprocess.run([*cli_command(), "serve-mcp"], cwd=tmp_path, env=env, input="",
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert expected in proc.stderr and proc.stderr.startswith("error:")
    assert not (tmp_path / "book.db").exists()  # read-only start never creates a library


def test_serve_mcp_help_lists_the_command() -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", "--help"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert "serve-mcp" in proc.stdout


async def test_a_missing_embedded_model_is_a_tool_error(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken install (the model package gone) fails the server's warm-up on its thread:
    the server still answers, search_book says what to reinstall, the other tools work."""
    import importlib.util

    from grimoire_beholder.models.minilm_files import MODEL_PACKAGE

    config = tmp_path / "config.toml"
    config.write_text('db_path = "book.db"\nembedding_backend = "embedded"\n'
                      'llm_backend = "none"\n', encoding="utf-8")
    book = write_markdown_book(tmp_path / "t.md", "Tiny", {"A": {"B": "Tide tables. " * 20}})
    with Library.open(config) as lib:
        lib.ingest(book)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: (
        None if name == MODEL_PACKAGE else find_spec(name, *args)))
    async with connect(config) as client:
        result = await call(client, "search_book", question="tide tables")
        listed = await call(client, "list_books")
    assert result.is_error and "grimoire-beholder-minilm" in text(result), text(result)
    assert not listed.is_error and "Tiny" in text(listed)


async def test_an_unexpected_failure_says_what_failed_and_the_server_goes_on(
        config_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A fault that is not one of the library's own errors (a bug, a disk error from below)
    comes back as a tool error that names it, its traceback goes to stderr once, and the
    next call is answered."""

    def broken_search(self: Library, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the index segment vanished")

    monkeypatch.setattr(Library, "search", broken_search)
    async with connect(config_path) as client:
        failed = await call(client, "search_book", question="compost")
        listed = await call(client, "list_books")
    assert failed.is_error
    assert "RuntimeError" in text(failed) and "the index segment vanished" in text(failed)
    assert not listed.is_error and "The Garden Book" in text(listed)
    err = capfd.readouterr().err
    assert err.count("Traceback (most recent call last)") == 1, err
