"""One passage, one citation: every surface names a location the same way.

A library of three real files — a PDF with printed page labels (pymupdf), an EPUB (ebooklib)
and a Markdown file — is asked one question per book through the CLI (text and ``--json``),
the MCP server (a real client session: search_book, get_section, get_book_outline) and the
prompt hook. Each names the hit's section with the citation the core wrote, word for word;
the asked-for sections are one chunk each, so a hit and its section share their span.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from ebooklib import epub
from typer.testing import CliRunner

from grimoire_beholder.citation import Source
from grimoire_beholder.cli.entry import app
from grimoire_beholder.library import Library
from helpers import write_markdown_book
from mcp_helpers import connect, structured, text, write_config

pytestmark = pytest.mark.timeout(120)

FILLER = ("The quay was quiet at dusk while the gulls argued over the nets and the tide "
          "turned slowly under the old stone arches of the town. ") * 7  # ~990 characters
QUESTIONS = {
    "garden-almanac": "where do zeolite drip emitters go",
    "the-harbour-book": "how are brass lanterns trimmed",
    "bread-at-home": "how often to feed a sourdough levain",
}


def _pdf(path: Path) -> Path:
    """Six sheets numbered i, ii, 1–4; the section "Drip lines" runs over sheets 4 and 5."""
    doc = pymupdf.open()
    for _ in range(6):
        doc.new_page()
    doc[0].insert_text((72, 100), "Preface: a year of gardening notes.", fontsize=11)
    doc[2].insert_text((72, 100), "Watering", fontsize=18)
    doc[2].insert_text((72, 140), "Water early in the morning, before the heat.", fontsize=11)
    doc[3].insert_text((72, 100), "Drip lines", fontsize=14)
    doc[3].insert_text((72, 130), "Zeolite drip emitters go beside each root ball.", fontsize=11)
    doc[4].insert_text((72, 100), "Flush the drip emitters every spring.", fontsize=11)
    doc[5].insert_text((72, 100), "Pruning", fontsize=18)
    doc[5].insert_text((72, 140), "Cut back to an outward bud.", fontsize=11)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                         {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1}])
    doc.set_toc([[1, "Preface", 1], [1, "Watering", 3], [2, "Drip lines", 4],
                 [1, "Pruning", 6]])
    doc.set_metadata({"title": "Garden Almanac", "author": "Ann Gardener"})
    doc.save(path)
    doc.close()
    return path


def _epub(path: Path) -> Path:
    """One chapter whose section "Lanterns" starts just before the first ~1,024 characters
    end, so it spans two synthetic pages."""
    book = epub.EpubBook()
    book.set_identifier("harbour")
    book.set_title("The Harbour Book")
    book.set_language("en")
    doc = epub.EpubHtml(title="Harbour", file_name="c1.xhtml", lang="en")
    doc.content = (f"<html><head><title>Harbour</title></head><body><h1>Harbour</h1>"
                   f"<p>{FILLER}</p><h2 id='lanterns'>Lanterns</h2><p>Brass lanterns are "
                   "trimmed at dusk: the wick is cut square and the glass wiped clean so "
                   "the flame burns without smoke through the night watch.</p></body></html>")
    book.add_item(doc)
    book.toc = [(epub.Section("Harbour", "c1.xhtml"),
                 [epub.Link("c1.xhtml#lanterns", "Lanterns", "lanterns")])]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [doc]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        epub.write_epub(str(path), book, {"epub3_pages": False})
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config of a library holding the three books (fake embedder, no LLM)."""
    root = tmp_path_factory.mktemp("citations")
    config = write_config(root, "min_confidence = 0.0\n")
    markdown = write_markdown_book(root / "bread.md", "Bread at Home", {
        "Dough": {"Levain": "Feed the sourdough levain twice a day.\n"
                            "A levain fed at night is ready by morning."},
        "Baking": {"Oven": "Bake on a hot stone with steam for the first twenty minutes."}})
    with Library.open(config) as lib:
        for path in (_pdf(root / "almanac.pdf"), _epub(root / "harbour.epub"), markdown):
            lib.ingest(path)
    return config


def _cli(config: Path, *args: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(app, [*args, "-c", str(config)], input=stdin)
    assert result.exit_code == 0, result.output
    return result.stdout


async def _mcp(config: Path, slug: str, question: str) -> dict[str, Any]:
    """What the three MCP tools say about the top hit for ``question`` in book ``slug``."""
    async with connect(config) as client:
        found = await client.call_tool("search_book", {"question": question, "book_id": slug,
                                                       "top_k": 1})
        hit = structured(found)["results"][0]
        where = {"book_id": slug, "chapter_index": hit["chapter_index"],
                 "section_index": hit["section_index"]}
        section = await client.call_tool("get_section", where)
        outline = await client.call_tool("get_book_outline", {"book_id": slug})
        listed = await client.call_tool("list_books", {})
    chapter = structured(outline)["chapters"][hit["chapter_index"]]
    entry = chapter["sections"][hit["section_index"]]
    return {"hit": hit, "search_text": text(found), "section": structured(section),
            "section_text": text(section), "entry": entry, "outline_text": text(outline),
            "listed": next(line for line in text(listed).splitlines() if f"slug={slug}:" in line)}



@pytest.mark.anyio
@pytest.mark.parametrize("slug", list(QUESTIONS))
async def test_every_surface_cites_a_hit_the_same_way(library: Path, slug: str) -> None:
    question = QUESTIONS[slug]
    cli_text = _cli(library, "query", question, "--book", slug, "-k", "1")
    cli_json = json.loads(_cli(library, "query", question, "--book", slug, "-k", "1",
                               "--json"))["results"][0]
    hook = _cli(library, "hook", "prompt", stdin=json.dumps({"prompt": question}))
    mcp = await _mcp(library, slug, question)
    citation, location = cli_json["citation"], cli_json["location"]
    hit = mcp["hit"]

    assert cli_text.splitlines()[0] == f"1. {citation}"
    assert (hit["citation"], hit["location"]) == (citation, location)
    assert f"\n1. {citation}\n" in mcp["search_text"]
    assert (mcp["section"]["citation"], mcp["section"]["location"]) == (citation, location)
    assert mcp["section_text"].splitlines()[0] == citation
    assert mcp["entry"]["location"] == location
    assert f"] {mcp['entry']['title']} · {location} · ~" in mcp["outline_text"]
    assert f"\n[1] {citation}\n" in hook

    book_dir = library.parent
    expected = {
        # PDF: the sheets a viewer jumps to, and the page numbers printed on them
        "garden-almanac": "Garden Almanac · Watering › Drip lines · pp. 4–5 (printed 2–3)",
        # EPUB: synthetic positions, never called pages
        "the-harbour-book": "The Harbour Book · Harbour › Lanterns · loc. 1–2",
        # Markdown: file:lines, as an editor jumps, then the breadcrumb
        "bread-at-home": f"{book_dir / 'bread.md'}:10-11 · Dough › Levain",
    }
    assert citation == expected[slug]
    assert hit["page_label"] == ("2–3" if slug == "garden-almanac" else None)
    size = {"garden-almanac": "6 pages", "the-harbour-book": "2 loc.", "bread-at-home": "lines"}
    assert size[slug] in mcp["listed"]


@pytest.mark.anyio
async def test_a_file_from_an_ingested_folder_is_cited_by_its_path_there(
        tmp_path: Path) -> None:
    config = write_config(tmp_path)
    notes = tmp_path / "wiki" / "ops"
    notes.mkdir(parents=True)
    write_markdown_book(notes / "runbook.md", "Runbook", {
        "Deploys": {"Rollback": "Roll back a bad deploy with the previous image tag."}})
    with Library.open(config) as lib:
        lib.ingest_folder(tmp_path / "wiki")
        hit = lib.search("roll back a bad deploy", top_k=1).hits[0]
    assert str(hit.citation) == "ops/runbook.md:10 · Deploys › Rollback"
    cli_text = _cli(config, "query", "roll back a bad deploy", "-k", "1")
    assert cli_text.splitlines()[0] == "1. ops/runbook.md:10 · Deploys › Rollback"
    async with connect(config) as client:
        listed = text(await client.call_tool("list_books", {"folder": "wiki"}))
    assert "slug=runbook: Runbook" in listed  # as promised: its group and its path there
    assert "group=ops, file ops/runbook.md]" in listed


def test_a_span_with_one_unlabelled_end_never_reads_none() -> None:
    source = Source.of("Book", "pdf", "/books/b.pdf", None, {4: "i", 5: "ii"})
    assert source.cite("Intro", 3, 4).location == "pp. 3–4 (printed i)"
    assert source.cite("Intro", 4, 5).location == "pp. 4–5 (printed i–ii)"
    assert source.cite("Intro", 7, 7).location == "p. 7"


def test_a_file_name_with_a_line_break_stays_on_the_citations_line() -> None:
    """A Markdown file named ``line<LF>break.md`` printed its hit as two lines in `query`
    (``1. line`` then ``break.md:3 · NL``), a forged line in any line-by-line reading."""
    from grimoire_beholder.citation import Source

    for brk in ("\n", "\r", "\u2028", "\x85", "\r\n"):
        cited = Source.of("NL", "markdown", f"/notes/line{brk}break.md", "/notes", {}).cite(
            "NL", line_start=3)
        assert len(str(cited).splitlines()) == 1, repr(str(cited))
        assert cited.location == "line ⏎ break.md:3"


def test_a_folder_runs_file_line_is_one_line_whatever_the_file_is_named() -> None:
    """`ingest DIR` printed ``added     line`` and ``break.md (1 chunk: 1 embedded)`` as two
    lines for a file named ``line<LF>break.md``; a move names both of its files."""
    from grimoire_beholder.views import FileOutcome

    added = FileOutcome("added", "line\nbreak.md", chunks=1, embedded=1).describe()
    moved = FileOutcome("moved", "new\u2028name.md", old_path="old\rname.md").describe()
    assert added == "added     line ⏎ break.md (1 chunk: 1 embedded)"
    assert moved == "moved     new ⏎ name.md (from old ⏎ name.md)"
