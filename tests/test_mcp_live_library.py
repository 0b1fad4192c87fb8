"""An MCP server whose library changes under it, driven by the SDK's real client: books
ingested by another writer, the library file deleted and built again, the first calls."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from grimoire_beholder.library import Library
from helpers import write_markdown_book
from mcp_helpers import books_by_slug, connect, structured, text, three_book_library

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return three_book_library(tmp_path_factory.mktemp("mcp-live-library"))


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


async def test_sees_books_ingested_while_running(tmp_path: Path, library_dir: Path) -> None:
    shutil.copytree(library_dir, tmp_path / "lib")
    config = tmp_path / "lib" / "config.toml"
    async with connect(config) as client:
        before = await books_by_slug(client)
        miss = structured(await call(client, "search_book", question="telescope eyepiece"))
        extra = write_markdown_book(tmp_path / "stars.md", "Stargazing", {
            "Gear": {"Telescopes": "A telescope eyepiece sets the magnification; a wide "
                                   "eyepiece frames the moon. " * 5}})
        with Library.open(config) as writer:  # another writer while the server is up
            writer.ingest(extra)
        after = await books_by_slug(client)
        hit = structured(await call(client, "search_book", question="telescope eyepiece"))
    assert "stargazing" not in before and "stargazing" in after
    assert all(h["slug"] != "stargazing" for h in miss["results"])
    assert hit["results"][0]["slug"] == "stargazing"


@pytest.mark.skipif(sys.platform == "win32", reason="an open file cannot be deleted there")
async def test_a_library_deleted_and_built_again_is_the_one_served(tmp_path: Path,
                                                                   library_dir: Path) -> None:
    """The server's connection went on reading the deleted file: a library deleted and built
    again was served as it had been (its old books, none of the new) until a restart; a
    library file that is gone is now a tool error naming it."""
    shutil.copytree(library_dir, tmp_path / "lib")
    config = tmp_path / "lib" / "config.toml"
    database = tmp_path / "lib" / "book.db"
    stars = write_markdown_book(tmp_path / "stars.md", "Stargazing", {
        "Gear": {"Telescopes": "A telescope eyepiece sets the magnification. " * 5}})
    async with connect(config) as client:
        before = await books_by_slug(client)
        for path in database.parent.glob("book.db*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        with Library.open(config) as writer:  # the library built again from one book
            writer.ingest(stars)
        after = await books_by_slug(client)
        hit = structured(await call(client, "search_book", question="telescope eyepiece"))
        for path in database.parent.glob("book.db*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        gone = await call(client, "list_books")
    assert "the-garden-book" in before and set(after) == {"stargazing"}
    assert [h["slug"] for h in hit["results"]][:1] == ["stargazing"]
    assert gone.is_error and f"no library database at {database}" in text(gone)


async def test_starting_the_mcp_server_records_no_search(tmp_path: Path,
                                                        library_dir: Path) -> None:
    shutil.copytree(library_dir, tmp_path / "lib")
    config = tmp_path / "lib" / "config.toml"
    (tmp_path / "lib" / "book.stats.db").unlink(missing_ok=True)
    opened: list[Library] = []
    async with connect(config, opened) as client:
        at_start = structured(await call(client, "book_status"))["savings"]
        warmed = opened[0]._engine is not None  # the first call waited for the warm-up
        await call(client, "search_book", question="kitchen scraps compost heap")
        after_one = structured(await call(client, "book_status"))["savings"]
    assert warmed
    assert at_start["searches"] == 0
    assert after_one["searches"] == 1
