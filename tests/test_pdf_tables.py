"""PDF tables: ruled tables become one ``Header: value; …`` record block per row.

The PDFs are generated here with a real table drawn with lines, laid out like a datasheet's
register description (Field / Bits / Access / Description).
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pymupdf
import pytest

from fakes import FakeEmbedder
from grimoire_beholder.config import config_from_mapping
from grimoire_beholder.errors import ConfigError
from grimoire_beholder.ingest.build import parse_options
from grimoire_beholder.library import Library
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.document import ParsedBook, ParseOptions
from grimoire_beholder.parse.pdf import parse_pdf
from helpers import fake_config
from mcp_helpers import cli_command, write_config

HEADER = ("Field", "Bits", "Access", "Description")
ROWS = [
    ("EN", "0", "RW", "Enables the timer when set; clearing it stops the counter at once."),
    ("MODE", "1-3", "RW", "Selects up, down or centre-aligned counting."),
    ("PRESCALER", "4-11", "RW", "Divides the input clock by this value plus one before the "
                                "counter sees it, so slow timeouts need no software loop."),
    ("IRQ_PENDING", "12", "RC", "Set by hardware on overflow; cleared when read."),
    ("ONE_SHOT", "13", "RW", "Stops the timer after a single period instead of reloading."),
    ("DMA_REQ", "14", "RW", "Raises a direct memory access request on every update event."),
    ("CLK_SRC", "15-16", "RW", "Chooses the oscillator: internal, external crystal or PLL."),
    ("GATE", "17", "RW", "Counts only while the external gate pin is held high."),
    ("DEBUG_FREEZE", "18", "RW", "Freezes the counter while a debugger halts the core."),
    ("RESERVED", "19-31", "-", "Reserved, reads as zero; write zero for compatibility."),
]
PROSE_BEFORE = "The timer control register configures the general purpose timer."
PROSE_AFTER = "Write the register only while the timer is stopped."


def draw_table(page: pymupdf.Page, top: float, rows: list[tuple[str, ...]],
               widths: tuple[float, ...], row_height: float = 30) -> float:
    """Draw a fully ruled table (header row first) with lines; return its bottom y."""
    xs = [60.0]
    for width in widths:
        xs.append(xs[-1] + width)
    ys = [top + i * row_height for i in range(len(rows) + 1)]
    for y in ys:
        page.draw_line((xs[0], y), (xs[-1], y))
    for x in xs:
        page.draw_line((x, ys[0]), (x, ys[-1]))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            rect = pymupdf.Rect(xs[c] + 3, ys[r] + 3, xs[c + 1] - 3, ys[r + 1] - 2)
            font = "hebo" if r == 0 else "helv"
            assert page.insert_textbox(rect, cell, fontsize=8, fontname=font) >= 0, cell
    return ys[-1]


def register_pdf(path: Path) -> Path:
    """Page 1: heading, prose, the register table, prose. Page 2: prose only."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((60, 80), "Timer Control Register (TCR)", fontsize=16)
    page.insert_text((60, 110), PROSE_BEFORE, fontsize=10)
    bottom = draw_table(page, 130, [HEADER, *ROWS], (90, 45, 45, 300))
    page.insert_text((60, bottom + 30), PROSE_AFTER, fontsize=10)
    other = doc.new_page()
    other.insert_text((60, 80), "Clock tree", fontsize=16)
    other.insert_text((60, 110), "The PLL multiplies the crystal frequency for the core.",
                      fontsize=10)
    doc.save(path)
    doc.close()
    return path


def blocks(book: ParsedBook, page: int | None = None) -> list[tuple[int | None, str]]:
    return [(b.page, b.text) for ch in book.chapters for s in ch.sections for b in s.blocks
            if page is None or b.page == page]


def test_each_row_becomes_one_record_block_in_place_of_the_cells(tmp_path: Path) -> None:
    book = parse_pdf(register_pdf(tmp_path / "timer.pdf"))
    texts = [text for _, text in blocks(book, page=1)]
    records = [t for t in texts if t.startswith("Field: ")]
    assert len(records) == len(ROWS)
    assert records[0] == ("Field: EN; Bits: 0; Access: RW; Description: Enables the timer "
                          "when set; clearing it stops the counter at once.")
    # a description wrapped over two lines in its cell comes back as one sentence
    assert records[2] == (
        "Field: PRESCALER; Bits: 4-11; Access: RW; Description: Divides the input clock by "
        "this value plus one before the counter sees it, so slow timeouts need no software "
        "loop.")
    # records replace the cell text (no doubling) and sit where the table was
    assert not any("Field Bits" in t or t.startswith("PRESCALER") for t in texts)
    assert texts.index(PROSE_BEFORE) < texts.index(records[0])
    assert texts.index(records[-1]) < texts.index(PROSE_AFTER)
    assert book.warnings == []


def test_a_question_about_one_row_retrieves_that_row(tmp_path: Path) -> None:
    path = register_pdf(tmp_path / "timer.pdf")
    with Library.open(config=fake_config(tmp_path, retrieval_mode="keyword"),
                      embedder=FakeEmbedder()) as lib:
        lib.ingest(path)
        hit = lib.search("which bits divide the input clock (prescaler)?", top_k=1).hits[0]
        assert "Field: PRESCALER; Bits: 4-11; Access: RW; Description: Divides" in hit.text
        assert hit.page_start == 1
        hit = lib.search("freeze the counter when the debugger halts", top_k=1).hits[0]
        assert "Field: DEBUG_FREEZE; Bits: 18" in hit.text


@pytest.mark.slow  # ingest as a real subprocess
@pytest.mark.parametrize("damaged", [False, True])
def test_ingest_prints_only_its_result_to_stdout(tmp_path: Path, damaged: bool) -> None:
    """A fresh process each: PyMuPDF's layout hint (first find_tables) and MuPDF's messages
    about a damaged file would go to stdout, which carries results."""
    path = register_pdf(tmp_path / "timer.pdf")
    if damaged:
        data = path.read_bytes()
        path.write_bytes(data[:400] + random.Random(0).randbytes(2000) + data[2400:])
    write_config(tmp_path)
    proc = subprocess.run([*cli_command(), "ingest", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode == 0:
        lines = proc.stdout.splitlines()
        assert len(lines) == 1 and lines[0].startswith("timer: added"), proc.stdout
    else:  # a file damaged beyond repair: one error line on stderr, nothing on stdout
        assert damaged and proc.stdout == "", proc.stdout


def test_pages_without_tables_are_unchanged(tmp_path: Path) -> None:
    path = register_pdf(tmp_path / "timer.pdf")
    on, off = parse_pdf(path), parse_pdf(path, ParseOptions(pdf_tables=False))
    assert blocks(on, page=2) == blocks(off, page=2)
    # a page with drawings that are no table (a framed box, a rule) is untouched too
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 60, 400, 200))
    page.draw_line((50, 250), (400, 250))
    page.insert_text((60, 90), "A framed note\nwith two lines of text.", fontsize=10)
    page.insert_text((60, 280), "Prose below the rule.", fontsize=10)
    doc.save(tmp_path / "framed.pdf")
    doc.close()
    framed = tmp_path / "framed.pdf"
    assert blocks(parse_pdf(framed)) == blocks(parse_pdf(framed, ParseOptions(pdf_tables=False)))


def test_a_grid_without_header_words_stays_prose(tmp_path: Path) -> None:
    doc = pymupdf.open()
    draw_table(doc.new_page(), 100, [("1", "2", "3"), ("4", "5", "6")], (40, 40, 40))
    doc.save(tmp_path / "grid.pdf")
    doc.close()
    book = parse_pdf(tmp_path / "grid.pdf")
    assert blocks(book) == blocks(parse_pdf(tmp_path / "grid.pdf",
                                            ParseOptions(pdf_tables=False)))


def test_opt_out_switch_keeps_the_table_as_plain_text(tmp_path: Path) -> None:
    path = register_pdf(tmp_path / "timer.pdf")
    cfg = config_from_mapping({"pdf_tables": False})
    assert parse_options(cfg) == ParseOptions(pdf_tables=False)
    texts = [text for _, text in blocks(parse_file(path, parse_options(cfg)))]
    assert not any(t.startswith("Field: ") for t in texts)
    assert any(t.startswith("PRESCALER 4-11 RW Divides") for t in texts)
    # the default is on, and the OCR keys are checked like every other key
    assert parse_options(config_from_mapping({})).pdf_tables is True
    with pytest.raises(ConfigError, match="ocr"):
        config_from_mapping({"ocr": "always"})
    with pytest.raises(ConfigError, match="ocr_language"):
        config_from_mapping({"ocr_language": "eng deu"})


def test_a_table_the_finder_fails_on_is_said_and_its_text_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyMuPDF raising inside find_tables (as 1.28.0 does for ``use_layout``) costs the page
    its records, never its text — and the user is told, in the ingest report's warnings."""
    def fails(self: pymupdf.Page, **_: object) -> None:
        raise TypeError("find_tables() got an unexpected keyword argument 'use_layout'")

    monkeypatch.setattr(pymupdf.Page, "find_tables", fails)
    path = register_pdf(tmp_path / "timer.pdf")
    with Library.open(config=fake_config(tmp_path, retrieval_mode="keyword"),
                      embedder=FakeEmbedder()) as lib:
        report = lib.ingest(path)
        hit = lib.search("which bits divide the input clock (prescaler)?", top_k=1).hits[0]
    assert report.warnings == [
        "ruled tables on 1 page could not be read as rows (TypeError: find_tables() got an "
        "unexpected keyword argument 'use_layout'); their text is kept as prose: 1"]
    assert "PRESCALER" in hit.text and "Field: PRESCALER" not in hit.text
