"""The MCP side of checked quotations, page images, health and reading position, through a
real MCP client session (in memory, and over stdio for the image bytes)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from mcp import Client, StdioServerParameters

from books_gen import keeper_pdf
from grimoire_beholder.library import Library
from helpers import GARDEN_CHAPTERS, write_markdown_book
from mcp_helpers import cli_command, connect, structured, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The keeper PDF and the garden book, health-checked once (so book_status has it)."""
    root = tmp_path_factory.mktemp("mcp-features")
    config = write_config(root)
    with Library.open(config) as lib:
        lib.ingest(keeper_pdf(root / "keeper.pdf"))
        lib.ingest(write_markdown_book(root / "garden.md", "The Garden Book", GARDEN_CHAPTERS))
        lib.health("keeper")
    return root


def db_files(root: Path) -> tuple[bytes, bytes]:
    """The library file and its write-ahead log (a reader may create an empty one; the
    shared-memory index is not data)."""
    wal = root / "book.db-wal"
    return (root / "book.db").read_bytes(), wal.read_bytes() if wal.exists() else b""


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


def image_of(result: Any) -> pymupdf.Pixmap:
    images = [b for b in result.content if b.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    return pymupdf.Pixmap(base64.b64decode(images[0].data))


async def test_quote_page_and_position_in_one_session(library_dir: Path) -> None:
    before = db_files(library_dir)
    async with connect(library_dir / "config.toml") as client:
        checked = structured(await call(client, "verify_quote",
                                        quote="keep the log-book open on the desk"))
        missing = await call(client, "verify_quote",
                             quote="Paint the tower red before the spring equinox arrives.")
        page = await call(client, "get_page_image", book_id="keeper",
                          page=checked["passage"]["page_start"],
                          highlight=checked["passage"]["text"])
        epub_like = await call(client, "get_page_image", book_id="the-garden-book", page=1)
        early = structured(await call(client, "search_book", question="storm gulls fog lamp",
                                      book_id="keeper", until_chapter="1 The Lamp", top_k=10))
        status = await call(client, "book_status")
    assert checked["found"] and checked["passage"]["page_start"] == 3
    assert checked["passage"]["citation"].endswith("p. 3 (printed 2)")
    assert "Keep the logbook open on the desk" in checked["passage"]["text"]
    assert not missing.is_error and structured(missing)["found"] is False
    assert "NOT FOUND" in text(missing)
    info = structured(page)
    assert info["highlight_found"] is True and info["page_label"] == "2"
    pix = image_of(page)
    assert (pix.width, pix.height) == (info["width"], info["height"])
    assert max(pix.width, pix.height) <= 1400
    assert epub_like.is_error and "no page images for this format" in text(epub_like)
    assert early["results"] and {h["chapter_index"] for h in early["results"]} <= {0, 1}
    books = {b["slug"]: b for b in structured(status)["books"]}
    assert books["keeper"]["health"]["reachability"] is not None
    assert books["the-garden-book"]["health"] is None
    assert "of sections reachable" in text(status)
    assert db_files(library_dir) == before  # the server never wrote


async def test_a_highlight_not_on_the_page_is_said_once(library_dir: Path) -> None:
    async with connect(library_dir / "config.toml") as client:
        result = await call(client, "get_page_image", book_id="keeper", page=1,
                            highlight="Polish the great lens every morning")
    said = text(result).lower()
    assert not result.is_error and structured(result)["highlight_found"] is False
    assert said.count("not found on this page") + said.count("not on this page") == 1, said


async def test_a_highlight_longer_than_a_page_is_refused_at_once(library_dir: Path) -> None:
    """A highlight of any length was searched for on the page, ~1 s a megabyte under the
    lock every call shares: a 4 MB one (HTTP's largest request) held every client ~4 s."""
    async with connect(library_dir / "config.toml") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        refused = await call(client, "get_page_image", book_id="keeper", page=1,
                             highlight="lens " * 400_000)
    assert refused.is_error and "highlight" in text(refused)
    assert "at most 10000 characters" in text(refused)
    schema = tools["get_page_image"].input_schema["properties"]["highlight"]
    assert "10000" in json.dumps(schema)  # published, so a client knows before it calls


@pytest.mark.slow  # serve-mcp as a real subprocess
async def test_page_image_bytes_over_stdio(library_dir: Path) -> None:
    command, *args = cli_command()
    params = StdioServerParameters(command=command, args=[*args, "serve-mcp"],
                                   cwd=str(library_dir), env=dict(os.environ))
    async with Client(params) as client:
        result = await call(client, "get_page_image", book_id="keeper", page=2,
                            highlight="Polish the great lens every morning")
    assert not result.is_error, text(result)
    pix = image_of(result)
    yellow = [pix.pixel(x, y) for x in range(0, pix.width, 4) for y in range(0, pix.height, 4)]
    assert any(r > 200 and g > 200 and b < 120 for r, g, b in (p[:3] for p in yellow))
