"""The health check points at real problems: a scanned page ingested without OCR, text drawn
as vector outlines, empty sections, a contents page indexed as body; a good book reaches
high; the summary is kept for book_status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from books_gen import KEEPER_PAGES, cli_library, html_pdf, keeper_pdf, scanned_pdf
from fakes import FakeEmbedder
from grimoire_beholder.checks.health import probe_for
from grimoire_beholder.cli.entry import app
from grimoire_beholder.library import Library
from helpers import BENCH, GARDEN_CHAPTERS, fake_config, needs_tesseract, write_markdown_book


def test_a_scan_ingested_without_ocr_is_named(tmp_path: Path) -> None:
    pdf = scanned_pdf(tmp_path / "mixed.pdf", KEEPER_PAGES,
                      "The lamp room holds four spare mantles and a tin of polish.", at=3)
    with Library.open(config=fake_config(tmp_path, ocr="off"), embedder=FakeEmbedder()) as lib:
        lib.ingest(pdf)
        [report] = lib.health("mixed")
    assert report.pages_without_text == [3]
    assert report.page_kinds.get("image") == [3]
    assert any("scanned pages with no text layer" in p and p.endswith(": 3")
               for p in report.problems)


@needs_tesseract
def test_a_scan_read_by_ocr_is_said_to_be_read_not_skipped(tmp_path: Path) -> None:
    scan = " ".join(f"The lamp room holds {n} spare mantles and a tin of brass polish."
                    for n in ("four", "five", "six", "seven", "eight", "nine", "ten"))
    pdf = scanned_pdf(tmp_path / "mixed.pdf", KEEPER_PAGES, scan, at=3)
    with Library.open(config=fake_config(tmp_path, ocr="auto"), embedder=FakeEmbedder()) as lib:
        assert any("read by OCR" in w for w in lib.ingest(pdf).warnings)
        [report] = lib.health("mixed")
    assert report.page_kinds.get("image") == [3]
    assert not any("OCR was off" in p for p in report.problems), report.problems
    assert any("read by OCR" in p and p.endswith(": 3") for p in report.problems)


def test_a_good_book_reaches_high_and_has_no_problems(tmp_path: Path) -> None:
    chapters = {f"Chapter {c}": {
        f"Topic {c}.{s}": (f"The {w} of section {c}.{s} is described here in some detail. "
                           f"Nobody else mentions {w}{c}{s} or the {w}-ward passage. ") * 4
        for s, w in enumerate(["harbour", "beacon", "ledger"])} for c in range(1, 6)}
    book = write_markdown_book(tmp_path / "good.md", "Good Book", chapters)
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        [report] = lib.health("good-book")
    assert report.probed == 15
    assert report.reachability is not None and report.reachability >= 0.9
    assert report.problems == [] and report.near_empty == [] and report.pages_without_text == []


def test_text_drawn_as_vector_outlines_is_named(tmp_path: Path) -> None:
    pages = [*KEEPER_PAGES[:2], ""]
    pdf = html_pdf(tmp_path / "drawn.pdf", pages, [[1, "Preface", 1], [1, "Lamp", 2],
                                                    [1, "Outlines", 3]])
    import pymupdf

    with pymupdf.open(pdf) as doc:  # page 3: letters as paths, no text layer
        page = doc[2]
        for i in range(60):
            page.draw_bezier((40 + i * 5, 100), (45 + i * 5, 90), (48 + i * 5, 110),
                             (50 + i * 5, 100))
        doc.saveIncr()
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(pdf)
        [report] = lib.health("drawn")
    assert report.page_kinds.get("drawing") == [3]
    assert any("drawn as vector outlines" in p and p.endswith(": 3") for p in report.problems)


def test_a_contents_page_indexed_as_body_is_suspected(tmp_path: Path) -> None:
    """Only one the section roles missed: a contents page they recognised is not body text."""
    titles = ["Soil", "Compost", "Drainage", "Pests", "Aphids", "Slugs", "Harvest"]
    led = "\n".join(f"{i} {t} {'.' * 12} {i * 7}" for i, t in enumerate(titles, start=1))
    bare = "\n".join(f"{i} {t} {i * 7}" for i, t in enumerate(titles, start=1))
    chapters = {"Contents": {"Table of contents": led}, "Overview": {"Plan": bare},
                **GARDEN_CHAPTERS}
    book = write_markdown_book(tmp_path / "garden.md", "Garden", chapters)
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        [report] = lib.health("garden")
        roles = {c.title: {s.role for s in c.sections} for c in lib.outline("garden").chapters}
    [flagged] = [p for p in report.problems if "table of contents" in p]
    assert "Overview › Plan" in flagged and "Table of contents" not in flagged
    assert roles["Contents"] == {"contents"} and roles["Overview"] == {"body"}


def test_probes_are_the_sections_own_distinctive_words() -> None:
    rarity = {"chamois": 3.0, "leather": 2.5, "lens": 1.0, "polish": 1.0}
    text = "It was a day. Polish the great lens every morning with chamois leather. The end."
    probe = probe_for(text, rarity)
    assert probe is not None and "chamois leather" in probe
    assert probe_for("Too short.", rarity) is None


def test_summary_is_kept_for_book_status_and_cli_reports(tmp_path: Path) -> None:
    pdf = scanned_pdf(tmp_path / "mixed.pdf", KEEPER_PAGES, "A scanned page of notes.", at=2)
    config = cli_library(tmp_path, pdf, keeper_pdf(tmp_path / "keeper.pdf"), extra='ocr = "off"\n')
    runner = CliRunner()
    result = runner.invoke(app, ["health", "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    reports = {r["slug"]: r for r in json.loads(result.stdout)}
    assert reports["mixed"]["pages_without_text"] == [2]
    assert reports["keeper"]["problems"] == []
    text = runner.invoke(app, ["health", "mixed", "--config", str(config)]).output
    assert "scanned pages with no text layer (OCR was off or not installed): 2" in text
    with Library.open(config, read_only=True) as lib:
        saved = {b.slug: b.health for b in lib.status().books}
    assert saved["mixed"]["pages_without_text"] == "2"
    assert saved["keeper"]["reachability"] is not None


@pytest.mark.slow  # real bench books
@pytest.mark.skipif(not (BENCH / "books").is_dir(), reason="../shared/bench is not here")
def test_bench_books_text_drawn_as_outlines_and_a_good_manual(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(BENCH / "books" / "live-manual.en.pdf")
        lib.ingest(BENCH / "books" / "R-intro.pdf")
        reports = {r.slug: r for r in lib.health()}
    live = next(r for slug, r in reports.items() if slug != "r-intro")
    assert len(live.page_kinds.get("drawing", [])) > 20  # the body is vector outlines
    assert "sections are empty or nearly so" in live.problems[0]
    good = reports["r-intro"]
    assert good.reachability is not None and good.reachability >= 0.85
    assert good.pages_without_text == []


def test_health_of_an_empty_library_says_so(tmp_path: Path) -> None:
    """With every book deleted, `health` printed nothing at all and exited 0."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    book = write_markdown_book(tmp_path / "tides.md", "Tides", {"Sea": {"Currents": "Tides."}})
    args = ["--library", str(folder)]
    assert CliRunner().invoke(app, ["ingest", str(book), "-q", *args]).exit_code == 0
    assert CliRunner().invoke(app, ["delete", "tides", "--yes", *args]).exit_code == 0
    result = CliRunner().invoke(app, ["health", *args])
    assert result.exit_code == 0 and result.stdout == ""
    assert "The library is empty" in result.stderr
    assert json.loads(CliRunner().invoke(app, ["health", "--json", *args]).stdout) == []


def test_a_one_section_book_is_counted_in_the_singular(tmp_path: Path) -> None:
    """`health` printed "(markdown, 1 sections): 100% of 1 probed sections"."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    book = write_markdown_book(tmp_path / "tides.md", "Tides", {"Sea": {
        "Currents": "Tides rise and fall twice a day as the moon pulls the oceans round."}})
    args = ["--library", str(folder)]
    assert CliRunner().invoke(app, ["ingest", str(book), "-q", *args]).exit_code == 0
    result = CliRunner().invoke(app, ["health", *args])
    assert result.exit_code == 0, result.output
    assert "(markdown, 1 section): 100% of 1 probed section found by its own text" \
        in result.stdout
