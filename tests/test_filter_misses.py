"""A search filter that matches no book of the library is an error naming what it probably
meant (or what there is), one line and exit code 1, as an unknown --book or --tag is —
not an empty answer that looks like "nothing about that". Filters that each match some
book, but no book all of them, still give the empty answer."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from grimoire_beholder.naming import near_labels
from helpers import GARDEN_CHAPTERS, write_markdown_book
from mcp_helpers import write_config

CALIBRE = Path(__file__).parent / "data" / "calibre" / "before"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Calibre library (authors Mara Quill & Tom Wick, Ivy Stone) and a folder of notes
    (groups ops and guides, and a file directly in it)."""
    base = tmp_path_factory.mktemp("misses")
    path = str(write_config(base))
    shutil.copytree(CALIBRE, base / "Calibre Library")
    wiki = base / "wiki"
    for name in ("ops/runbook.md", "guides/setup.md", "readme.md"):
        (wiki / name).parent.mkdir(parents=True, exist_ok=True)
        write_markdown_book(wiki / name, name, GARDEN_CHAPTERS)
    for folder in (base / "Calibre Library", wiki):
        result = CliRunner().invoke(app, ["ingest", str(folder), "-q", "--config", path])
        assert result.exit_code == 0, result.output
    return path


def _query(config: str, *flags: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["query", "slugs in the garden", *flags,
                                      "--config", config])
    return result.exit_code, result.stderr.strip()


@pytest.mark.parametrize(("flags", "said"), [
    (["--author", "Ivy Stoen"], "error: no book's author contains 'Ivy Stoen'; "
                                "did you mean: Ivy Stone"),
    (["--author", "wick tom"], "did you mean: Tom Wick"),
    (["--author", "Tolkien"], "error: no book's author contains 'Tolkien'; authors: Ivy "
                              "Stone, Mara Quill, Test Author, Tom Wick"),
    (["--type", "docx"], "error: no book is of type 'docx'; types in this library: epub, "
                         "markdown, pdf"),
    (["--group", "opps"], "error: no book is in the group 'opps'; did you mean: ops"),
    (["--group", "archive"], "groups: '' (files directly in an ingested folder), guides, ops"),
    (["--path-prefix", "gudies/"], "did you mean: guides/"),
    (["--path-prefix", "/nowhere/"], "ingested folders: "),
    (["--tag", "gardn"], "error: no book has the tag 'gardn'; did you mean: garden"),
])
def test_a_filter_matching_no_book_names_what_it_meant(config: str, flags: list[str],
                                                       said: str) -> None:
    code, stderr = _query(config, *flags)
    assert code == 1 and len(stderr.splitlines()) == 1 and said in stderr, stderr


def test_filters_that_each_match_but_not_together_give_an_empty_answer(config: str) -> None:
    result = CliRunner().invoke(app, ["query", "slugs", "--author", "Ivy Stone", "--group",
                                      "ops", "--json", "--config", config])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["results"] == [] and answer["note"] == "no book matches the filters"
    found = CliRunner().invoke(app, ["query", "orchard pruning", "--author", "ivy", "--json",
                                     "--config", config])  # a part of the name still finds
    assert {h["book"] for h in json.loads(found.stdout)["results"]} == {"Orchard Pruning"}


def test_a_filter_on_an_empty_library_says_the_library_is_empty(tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    book = write_markdown_book(tmp_path / "g.md", "G", GARDEN_CHAPTERS)
    CliRunner().invoke(app, ["ingest", str(book), "-q", "--config", config])
    CliRunner().invoke(app, ["delete", "g", "--yes", "--config", config])
    result = CliRunner().invoke(app, ["query", "slugs", "--author", "x", "--config", config])
    assert result.exit_code == 0 and "the library is empty" in result.output


def test_a_huge_filter_text_is_answered_at_once() -> None:
    """A pasted page as --author was compared word by word with every name: 4,096
    characters took 12 s of CPU against 300 names, so an MCP call held the server."""
    names = [f"Author Number{i} Person" for i in range(300)]
    started = time.process_time()
    assert near_labels("ab c " * 20_000, names) == []
    assert near_labels("Number7 Persn", names)[0] == "Author Number7 Person"
    assert time.process_time() - started < 3
