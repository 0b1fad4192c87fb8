"""Every MCP response is bounded, whatever the question or the book: nothing is echoed whole.

A 1 MB question used to come back in the response (2 MB in all), and a book's titles went
out at any length. Here a real client asks absurd questions of a book with absurd headings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.serving import FIELD_MAX
from grimoire_beholder.search.engine import MAX_QUERY_CHARS
from mcp_helpers import connect, structured, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
RESPONSE_MAX = 100_000  # characters, text and structured content each (~25k tokens)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A book with a 5,000-character title and 250 sections under 20,000-character headings."""
    root = tmp_path_factory.mktemp("bounds")
    config = write_config(root)
    lines = ["---", f"title: {'Very long title ' * 300}", "---", ""]
    for chapter in range(5):
        lines += [f"# Chapter {chapter} " + "heading words " * 1_500, ""]
        for section in range(50):
            lines += [f"## Section {section} " + "more heading " * 1_500, "",
                      f"Body of section {section}: tides, lamps and lenses.", ""]
    (root / "huge.md").write_text("\n".join(lines), encoding="utf-8")
    with Library.open(config) as lib:
        lib.ingest(root / "huge.md")
    return config


def _sizes(result: Any) -> tuple[int, int]:
    return len(text(result)), len(json.dumps(structured(result), ensure_ascii=False))


async def test_an_absurd_question_is_refused_in_one_short_line(config: Path) -> None:
    async with connect(config) as client:
        result = await client.call_tool("search_book", {"question": "lamp " * 200_000})
        alive = await client.call_tool("list_books", {})
    assert result.is_error and not alive.is_error
    message = text(result)
    assert f"at most {MAX_QUERY_CHARS:,}" in message and len(message) < 300


async def test_every_response_and_field_is_bounded(config: Path) -> None:
    question = ("lamps and lenses " * 200)[:MAX_QUERY_CHARS]
    async with connect(config) as client:
        book_id = structured(await client.call_tool("list_books", {}))["books"][0]["id"]
        results = {
            "search": await client.call_tool("search_book", {"question": question,
                                                              "top_k": 20}),
            "outline": await client.call_tool("get_book_outline", {"book_id": book_id}),
            "chapter": await client.call_tool("get_book_outline", {"book_id": book_id,
                                                                   "chapter_index": 2}),
            "section": await client.call_tool("get_section", {
                "book_id": book_id, "chapter_index": 1, "section_index": 3}),
            "books": await client.call_tool("list_books", {}),
            "status": await client.call_tool("book_status", {}),
        }
    for name, result in results.items():
        text_size, structured_size = _sizes(result)
        assert text_size < RESPONSE_MAX and structured_size < RESPONSE_MAX, name
    search = structured(results["search"])
    assert search["results"] and len(search["query"]) <= FIELD_MAX
    for hit in search["results"]:
        assert len(hit["book"]) <= FIELD_MAX and len(hit["section"]) <= FIELD_MAX
    section = structured(results["section"])
    assert section["section"].startswith("Section 3 more heading")
    assert len(section["section"]) <= FIELD_MAX and "tides, lamps" in section["text"]


async def test_a_tool_error_never_echoes_an_argument_whole(config: Path) -> None:
    """A role, source type, tool name or argument name came back whole in the tool error
    (1 MB of them: 1 MB for the assistant to read)."""
    long, huge = "z" * 4_000, "z" * 100_000  # values are refused past 4,096; names are not
    async with connect(config) as client:
        calls = [("search_book", {"question": "lamps", "role": long}),
                 ("search_book", {"question": "lamps", "source_type": long}),
                 ("search_book", {"question": "lamps", huge: 1}),
                 (f"no_such_tool_{huge}", {})]
        errors = [await client.call_tool(name, arguments) for name, arguments in calls]
    for (name, _), result in zip(calls, errors, strict=True):
        assert result.is_error, name[:20]
        assert "zzz" in text(result) and len(text(result)) <= 2_000, name[:20]


async def test_an_unknown_prompt_or_resource_is_never_echoed_whole(config: Path) -> None:
    """A prompt name or resource URI of 1 MB came back whole in the protocol error."""
    huge = "z" * 1_000_000
    async with connect(config) as client:
        with pytest.raises(Exception) as prompt:
            await client.get_prompt(f"no_such_prompt_{huge}", {})
        with pytest.raises(Exception) as resource:
            await client.read_resource(f"grimoire://{huge}")
    for raised in (prompt, resource):
        message = str(raised.value)
        assert "Unknown" in message and "zzz" in message and len(message) <= 2_100


async def test_a_chapter_title_longer_than_a_question_is_refused_at_once(config: Path) -> None:
    """until_chapter took a title of any length, compiled into a pattern under the lock every
    call shares: 3.5 MB held the server 6 s. Now as bounded as a question is."""
    async with connect(config) as client:
        book_id = structured(await client.call_tool("list_books", {}))["books"][0]["id"]
        refused = await client.call_tool("search_book", {
            "question": "lamps", "book_id": book_id, "until_chapter": "Chapter " * 400})
        by_index = await client.call_tool("search_book", {
            "question": "lamps", "book_id": book_id, "until_chapter": 1})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert refused.is_error and "at most 2000 characters" in text(refused)
    assert not by_index.is_error
    assert "2000" in json.dumps(tools["search_book"].input_schema["properties"]["until_chapter"])


async def test_a_filter_or_name_of_any_length_is_refused_at_once(config: Path) -> None:
    """An author, tag, group, book reference or index term of any length was compared word
    by word with every name for a suggestion, under the lock every call shares: an author
    of 3.5 MB held the server 84 s (SQLite) and 233 s (PostgreSQL)."""
    huge = "ab c" * 25_000
    calls = [("search_book", {"question": "lamps", "author": huge}),
             ("search_book", {"question": "lamps", "tag": huge}),
             ("search_book", {"question": "lamps", "group": huge}),
             ("get_book_outline", {"book_id": huge}),
             ("lookup_index", {"term": huge})]
    async with connect(config) as client:
        refused = [await client.call_tool(name, arguments) for name, arguments in calls]
        fine = await client.call_tool("search_book", {"question": "lamps",
                                                      "path_prefix": "/" + "d/" * 1_000})
    for (name, arguments), result in zip(calls, refused, strict=True):
        assert result.is_error and "give at most 4,096" in text(result), (name, arguments.keys())
    assert "4,096" not in text(fine)  # a long path is still a path


async def test_a_quotation_longer_than_a_block_quotation_is_refused_at_once(
        config: Path) -> None:
    """verify_quote published no bound on its quotation; the bound is in the schema now, and
    a quotation over it is refused in one line before anything is matched."""
    async with connect(config) as client:
        refused = await client.call_tool("verify_quote", {"quote": "lamps said " * 500})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert refused.is_error and "at most 5000 characters" in text(refused)
    assert len(text(refused)) < 600
    assert tools["verify_quote"].input_schema["properties"]["quote"]["maxLength"] == 5000


async def test_whitespace_around_a_quotation_does_not_count_toward_its_bound(
        config: Path) -> None:
    """The library counts a quotation without the whitespace around it, and the tool now
    does too: a quotation pasted with its blank lines around it was refused by the tool
    ("at most 5000 characters") when the library would have checked it."""
    words = "Body of section 7: tides, lamps and lenses."
    padded = "\n\n" + words + " " * 5_000 + "\n"
    long = "tides lamps " * 416  # 4,991 characters and a space
    async with connect(config) as client:
        found = await client.call_tool("verify_quote", {"quote": padded})
        checked = await client.call_tool("verify_quote", {"quote": "\n" * 40 + long})
        over = await client.call_tool("verify_quote", {"quote": long + "x" * 10})
    assert not found.is_error, text(found)
    assert structured(found)["verdict"] == "exact" and structured(found)["quote"] == words
    assert not checked.is_error, text(checked)
    assert over.is_error and "at most 5000 characters" in text(over)
