"""The printed index and section roles as a user meets them: the CLI's ``lookup``,
``query --role`` and ``list --json``, and the MCP ``lookup_index``, ``search_book(role=…)``
and ``get_book_outline`` — on a real PDF whose last page is its printed index (page labels:
the preface is printed "i", the chapters 1, 2, 3, so printed and physical pages differ)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from books_gen import KEEPER_PAGES, KEEPER_TOC, cli_library, html_pdf
from grimoire_beholder.cli.entry import app
from mcp_helpers import connect, structured, text

INDEX_PAGE = "<h1>Index</h1>" + "".join(f"<p>{line}</p>" for line in (
    "chamois leather, 1", "fog, 2", "gulls, 3", "lens, 1, 3", "logbook, 2", "oil, 1",
    "storm, 3", "wick, i, 1", "beacon, see lamp"))


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lookup")
    pdf = html_pdf(root / "keeper.pdf", [*KEEPER_PAGES, INDEX_PAGE],
                   [*KEEPER_TOC, [1, "Index", 5]])
    return cli_library(root, pdf)


def cli(config: Path, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "--config", str(config)])


def test_lookup_prints_each_page_as_the_file_numbers_it_and_as_printed(config: Path) -> None:
    result = cli(config, "lookup", "Lens")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "lens — keeper [keeper]",
        "  p. 2 (printed 1) · 1 The Lamp [1.0]",
        "  p. 4 (printed 3) · 3 The Storm [3.0]"]
    wick = cli(config, "lookup", "wick", "--json")
    [entry] = json.loads(wick.stdout)
    assert [(loc["printed"], loc["page_start"], loc["location"]) for loc in entry["locators"]
            ] == [("i", 1, "p. 1 (printed i)"), ("1", 2, "p. 2 (printed 1)")]
    preface = entry["locators"][0]["sections"][0]
    assert (preface["chapter"], preface["role"]) == ("Preface", "body")
    assert "(see lamp)" in cli(config, "lookup", "beacon").stdout


def test_lookup_of_a_term_no_index_names_fails_with_one_line(config: Path) -> None:
    missing = cli(config, "lookup", "lighthouse")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert "no printed index names 'lighthouse'" in missing.output
    empty = cli(config, "lookup", "...")
    assert empty.exit_code == 1 and "at least one letter" in empty.output
    pasted = cli(config, "lookup", "lighthouse " * 1000)  # a page pasted by mistake
    assert pasted.exit_code == 1 and len(pasted.output) < 200


def test_query_role_keeps_those_sections_and_the_default_puts_body_first(
        config: Path) -> None:
    default = json.loads(cli(config, "query", "fog logbook", "--mode", "keyword",
                             "--json").stdout)["results"]
    assert default[0]["role"] == "body" and default[0]["chapter"] == "2 The Fog"
    only = cli(config, "query", "fog logbook", "--mode", "keyword", "--role", "index")
    assert only.exit_code == 0, only.output
    assert "Index" in only.stdout and "(index)" in only.stdout and "The Fog" not in only.stdout
    bad = cli(config, "query", "fog", "--role", "appendix")
    assert bad.exit_code == 2 and "'appendix' is not one of" in bad.output


def test_list_json_counts_sections_by_role(config: Path) -> None:
    [book] = json.loads(cli(config, "list", "--json").stdout)
    assert book["roles"] == {"body": 4, "index": 1}


@pytest.mark.anyio
async def test_mcp_lookup_outline_and_search_by_role(config: Path) -> None:
    async with connect(config) as client:
        looked = await client.call_tool("lookup_index", {"term": "logbooks"})
        nothing = await client.call_tool("lookup_index", {"term": "zeppelin"})
        outline = await client.call_tool("get_book_outline", {"book_id": "keeper"})
        index_hits = await client.call_tool(
            "search_book", {"question": "fog logbook", "role": "index"})
        bad = await client.call_tool("search_book", {"question": "fog", "role": "appendix"})
    [entry] = structured(looked)["entries"]
    [place] = entry["places"]
    assert (entry["term"], place["printed"], place["page_start"]) == ("logbook", "2", 3)
    assert place["sections"] == [{"chapter_index": 2, "section_index": 0,
                                  "breadcrumb": "2 The Fog", "role": "body"}]
    assert "p. 3 (printed 2): 2 The Fog [2.0]" in text(looked)
    assert structured(nothing)["entries"] == [] and "search_book" in text(nothing)
    roles = {c["title"]: [s["role"] for s in c["sections"]]
             for c in structured(outline)["chapters"]}
    assert roles["Index"] == ["index"] and roles["2 The Fog"] == ["body"]
    assert "· index" in text(outline)
    hits = structured(index_hits)["results"]
    assert hits and {h["role"] for h in hits} == {"index"}
    assert bad.is_error and "use one of body" in text(bad)
