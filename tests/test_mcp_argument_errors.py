"""A tool called with wrong arguments answers in words an assistant can act on: one line per
wrong argument, as the CLI words it ("book_id: must be an id (integer) or a slug (text), got
true"), as an error result; not pydantic's dump ("2 validation errors for
get_book_outline_arguments … For further information visit https://errors.pydantic.dev/…")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.mcp_server.allowed import AllowedFolders, Upkeep
from mcp_helpers import connect, folder_library, structured, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PREFIX = "Error executing tool {}: "
UPKEEP = Upkeep(sync=True, add=AllowedFolders(()), remove=True)

# (tool, arguments, the lines of the answer after its prefix)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("get_book_outline", {"book_id": True},
     ["book_id: must be an id (integer) or a slug (text), got true"]),
    ("list_books", {"offset": -1}, ["offset: must be ≥ 0, got -1"]),
    ("book_status", {"offset": "3"}, ['offset: must be an integer, got "3"']),
    ("list_books", {"folders": "wiki"},
     ["folders (did you mean folder?): no such argument; list_books takes folder, offset"]),
    ("search_book", {}, ["question: missing; it is required"]),
    ("search_book", {"question": 3, "top_k": 2.5, "book_id": [1]},
     ["question: must be text, got 3", "book_id: must be an id (integer) or a slug (text), "
      'got [1]', "top_k: must be an integer, got 2.5"]),
    ("get_section", {"book_id": "garden", "chapter_index": None, "section_index": {"a": 1}},
     ["chapter_index: must be an integer, got null",
      'section_index: must be an integer, got {"a": 1}']),
    ("get_page_image", {"book_id": 1, "page": 1.5, "highlight": 5},
     ["page: must be a page number (integer) or a printed page label (text), got 1.5",
      "highlight: must be text, got 5"]),
    ("verify_quote", {"quote": "x" * 6_000}, ["quote: must be at most 5000 characters, "
                                             "got 6,000"]),
    ("search_book", {"question": "soil", "until_chapter": "x" * 3_000},
     ["until_chapter: must be at most 2000 characters, got 3,000"]),
    ("lookup_index", {"term": "soil", "book_id": 2.0},
     ["book_id: must be an id (integer) or a slug (text), got 2.0"]),
    ("sync_library", {"dry_run": "yes"}, ['dry_run: must be true or false, got "yes"']),
    ("remove_book", {"book_id": None}, ["book_id: must be an id (integer) or a slug (text), "
                                        "got null"]),
]


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return folder_library(tmp_path_factory.mktemp("argument-errors") / "lib")


async def test_wrong_arguments_are_one_plain_line_each(config_path: Path) -> None:
    async with connect(config_path, upkeep=UPKEEP) as client:
        answers = [(tool, await client.call_tool(tool, arguments), lines)
                   for tool, arguments, lines in CASES]
        still = await client.call_tool("list_books", {"offset": 0})
    for tool, result, lines in answers:
        said = text(result)
        assert result.is_error, (tool, said)
        assert said == PREFIX.format(tool) + "\n".join(lines), said
        assert "pydantic" not in said and "validation error" not in said.lower(), said
        assert "[type=" not in said and "Input should" not in said, said
    assert structured(still)["count"] == 3  # the server answers on


async def test_many_unknown_arguments_are_named_in_one_bounded_line(config_path: Path) -> None:
    arguments = {f"bogus_{i}": i for i in range(200)} | {"ofset": 1, "x" * 3_000: 1}
    async with connect(config_path) as client:
        result = await client.call_tool("book_status", arguments)
    said = text(result)
    assert result.is_error and said.count("\n") == 0 and len(said) < 700, said
    assert said.startswith(PREFIX.format("book_status") + "bogus_0, bogus_1,"), said
    assert "and 197 more: no such arguments; book_status takes folder, offset" in said
