"""An ingested folder of notes as the assistant sees it over MCP: one entry in list_books and
book_status (expandable, paged), real books listed before notes, bounded sizes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.library_tools import PAGE_ENTRIES
from helpers import make_epub, write_markdown_book
from mcp_helpers import call, connect, structured, text, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

NOTES = PAGE_ENTRIES + 12  # more files than one page holds


@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Markdown note ingested first, then an EPUB book, then a folder of NOTES npm-style
    pages in two subfolders and a second, small folder."""
    root = tmp_path_factory.mktemp("mcp-folders")
    config = write_config(root)
    note = write_markdown_book(root / "todo.md", "Shopping Note", {
        "List": {"Things": "Milk, eggs, flour and yeast for the weekend bread. " * 3}})
    book = make_epub(root / "sea.epub", {
        "c1.xhtml": "<h1>Tides</h1><p>" + "The tide turns twice a day at the harbour. " * 30
                    + "</p>",
        "c2.xhtml": "<h1>Lamps</h1><p>" + "Keepers trimmed the lamp wick before dawn. " * 30
                    + "</p>"}, [("Tides", "c1.xhtml"), ("Lamps", "c2.xhtml")],
        title="The Sea Book", author="Ada Author")
    docs = root / "npm-docs"
    for n in range(NOTES):
        sub = docs / ("commands" if n % 4 else "using-npm")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"npm-page-{n:03}.md").write_text(
            f"# npm page {n}\n\nWhat npm page {n} explains about packages, in a few words.\n",
            encoding="utf-8")
    other = root / "wiki"
    other.mkdir()
    write_markdown_book(other / "runbook.md", "Runbook", {
        "Deploys": {"Rollout": "Roll the release out to one canary host first. " * 4}})
    with Library.open(config) as lib:
        lib.ingest(note)
        lib.ingest(book)
        lib.ingest_folder(docs)
        lib.ingest_folder(other)
    return root


@pytest.fixture
def config_path(library_dir: Path) -> Path:
    return library_dir / "config.toml"


def _size(result: Any) -> tuple[int, int]:
    return len(text(result)), len(json.dumps(structured(result), ensure_ascii=False))


async def test_list_books_shows_each_folder_as_one_entry_after_the_books(
        config_path: Path, library_dir: Path) -> None:
    async with connect(config_path) as client:
        result = await call(client, "list_books")
    listed = structured(result)
    assert listed["count"] == NOTES + 3 and listed["entries"] == 4
    assert [b["slug"] for b in listed["books"]] == ["the-sea-book", "shopping-note"]
    docs, wiki = listed["folders"]
    assert docs["folder"] == str((library_dir / "npm-docs").resolve())
    assert docs["name"] == "npm-docs" and docs["files"] == NOTES
    using = len(range(0, NOTES, 4))
    assert docs["groups"] == {"commands": NOTES - using, "using-npm": using}
    assert docs["source_types"] == {"markdown": NOTES} and len(docs["first"]) == 5
    assert wiki["name"] == "wiki" and wiki["files"] == 1
    assert listed["next_offset"] is None
    shown = text(result)
    assert shown.count("npm page") == 5  # five names stand for the folder, not 72 lines
    assert f"list_books(folder='{docs['folder']}')" in shown
    assert f"search_book(path_prefix='{docs['folder']}')" in shown
    assert max(_size(result)) < 4_000


async def test_a_folder_expands_in_pages_by_path_or_name(config_path: Path,
                                                        library_dir: Path) -> None:
    root = str((library_dir / "npm-docs").resolve())
    async with connect(config_path) as client:
        first = structured(await call(client, "list_books", folder="npm-docs"))
        by_path = structured(await call(client, "list_books", folder=root + "/"))
        rest_result = await call(client, "list_books", folder=root,
                                 offset=first["next_offset"])
        rest = structured(rest_result)
        wiki = text(await call(client, "book_status", folder="wiki"))
        past = structured(await call(client, "list_books", folder=root, offset=500))
    assert first == by_path and first["folder"] == root and first["entries"] == NOTES
    assert len(first["books"]) == PAGE_ENTRIES and first["next_offset"] == PAGE_ENTRIES
    assert len(rest["books"]) == NOTES - PAGE_ENTRIES and rest["next_offset"] is None
    paths = [b["path"] for b in first["books"] + rest["books"]]
    assert len(set(paths)) == NOTES and "using-npm/npm-page-000.md" in paths
    assert {b["group"] for b in first["books"]} == {"commands", "using-npm"}
    assert not first["folders"] and past["books"] == [] and "past the last" in past["note"]
    heading = text(rest_result).splitlines()[0]  # which page this is, in words
    assert heading == (f"{NOTES + 3} books in the library; {NOTES} entries in folder {root}, "
                       f"{PAGE_ENTRIES + 1}–{NOTES} shown:")
    assert "1 entry in folder" in wiki and "all shown" in wiki


async def test_an_unknown_folder_or_a_bad_offset_is_refused(config_path: Path) -> None:
    async with connect(config_path) as client:
        unknown = await call(client, "list_books", folder="recipes")
        negative = await call(client, "book_status", offset=-1)
        as_text = await call(client, "list_books", offset="3")
        unknown_argument = await call(client, "list_books", folders="npm-docs")
    assert unknown.is_error and "no ingested folder 'recipes'" in text(unknown)
    assert "npm-docs" in text(unknown) and "wiki" in text(unknown)
    assert negative.is_error and as_text.is_error and unknown_argument.is_error


async def test_book_status_sums_a_folder_and_says_not_checked_once(
        config_path: Path, library_dir: Path) -> None:
    async with connect(config_path) as client:
        result = await call(client, "book_status")
        files = await call(client, "book_status", folder="npm-docs")
    status = structured(result)
    assert [b["slug"] for b in status["books"]] == ["the-sea-book", "shopping-note"]
    docs = status["folders"][0]
    assert docs["files"] == docs["complete"] == NOTES and docs["incomplete"] == []
    assert docs["chunks"] == docs["status"]["embedded"] > 0 and docs["health_checked"] == 0
    shown = text(result)
    assert shown.count("not checked") == 1 and f"{NOTES + 3} books listed here" in shown
    assert max(_size(result)) < 4_000
    expanded = structured(files)
    assert len(expanded["books"]) == PAGE_ENTRIES and expanded["next_offset"] == PAGE_ENTRIES
    assert all(b["complete"] for b in expanded["books"])


async def test_the_folder_path_listed_is_what_search_book_filters_on(
        config_path: Path) -> None:
    async with connect(config_path) as client:
        docs = structured(await call(client, "list_books"))["folders"][0]["folder"]
        found = structured(await call(client, "search_book", question="npm page packages",
                                      path_prefix=docs, top_k=5))
    assert found["results"] and all(h["slug"].startswith("npm-page")
                                     for h in found["results"])
