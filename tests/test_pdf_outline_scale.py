"""PDF outlines of tens of thousands of entries (hostile input, round three): they were
quadratic (``get_toc(simple=False)`` styles every item; snapping each entry scanned every
later one), 40k entries on 20 pages took minutes. Now linear; the positions read item by
item agree with ``get_toc(simple=False)``'s on real books."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.parse.document import ParseOptions
from grimoire_beholder.parse.pdf import parse_pdf
from grimoire_beholder.parse.pdf_headings import _destinations
from helpers import BENCH

REAL = sorted((BENCH / "books").glob("*.pdf")) + sorted((BENCH / "books-dev").glob("*.pdf"))


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_destinations_agree_with_the_full_table_of_contents(path: Path) -> None:
    doc = pymupdf.open(path)
    full = doc.get_toc(simple=False)
    mine = _destinations(doc)
    assert len(mine) == len(full) > 0
    for item, dest in zip(full, mine, strict=True):
        assert dest["kind"] == item[3]["kind"], item
        if "to" in item[3] or "to" in dest:
            assert tuple(dest["to"]) == tuple(item[3]["to"]), item


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_forty_thousand_entry_outline_is_parsed(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for p in range(20):
        page = doc.new_page()
        page.insert_text((72, 72), f"Entry {p}", fontsize=18)
        for j in range(20):
            page.insert_text((72, 100 + j * 20), f"Body line {j} of page {p + 1}.", fontsize=10)
    doc.set_toc([[1, f"Entry {i}", (i % 20) + 1] for i in range(40_000)])
    doc.save(tmp_path / "outline.pdf")
    book = parse_pdf(tmp_path / "outline.pdf", ParseOptions())
    assert len(book.chapters) >= 20
