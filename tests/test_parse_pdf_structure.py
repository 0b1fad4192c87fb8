"""PDF parsing, the structure: chapters and sections from the outline with breadcrumbs and
lead-ins, splitting by position on a page, printed page labels, headings guessed from font
sizes or page ranges when there is no outline, running headers stripped and wrapped lines
rejoined, odd outline entries survived, and a 500-page book.

The PDFs are generated with pymupdf in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.parse.pdf import parse_pdf
from parse_helpers import all_blocks, all_text, save, write

GOTO = pymupdf.LINK_GOTO


def dest(y: float) -> dict[str, object]:
    """An outline destination at top-down ``y`` on its page."""
    return {"kind": GOTO, "to": pymupdf.Point(72, y)}


@pytest.fixture
def nested_pdf(tmp_path: Path) -> Path:
    """Cover page, then chapter 1 (lead-in, section with a subsection), chapter 2."""
    doc = pymupdf.open()
    for _ in range(5):
        doc.new_page()
    write(doc[0], 200, "A Guide to Gardening", 24)
    write(doc[1], 100, "Chapter One", 18)
    write(doc[1], 140, "Gardens need patience and water.")
    write(doc[1], 400, "Soil", 14)
    write(doc[1], 430, "Loam holds moisture well.")
    write(doc[2], 100, "Clay", 12)
    write(doc[2], 130, "Clay drains slowly.")
    write(doc[3], 100, "Chapter Two", 18)
    write(doc[3], 140, "Pruning keeps trees healthy.")
    write(doc[4], 100, "Winter pruning is easiest.")
    doc.set_toc(
        [
            [1, "Chapter One", 2, dest(80)],
            [2, "  Soil  ", 2, dest(380)],
            [3, "Clay", 3, dest(80)],
            [1, "Chapter Two", 4, dest(80)],
        ]
    )
    doc.set_metadata({"title": "A Guide to Gardening", "author": "Ann Gardener"})
    return save(doc, tmp_path / "garden.pdf")


def test_nested_outline_gives_chapters_breadcrumbs_and_lead_in(nested_pdf: Path) -> None:
    book = parse_pdf(nested_pdf)
    assert book.source_type == "pdf"
    assert (book.title, book.author, book.page_count) == ("A Guide to Gardening", "Ann Gardener", 5)
    assert [c.title for c in book.chapters] == ["Front matter", "Chapter One", "Chapter Two"]
    assert [c.anchor_page for c in book.chapters] == [1, 2, 4]
    front, one, two = book.chapters
    assert "A Guide to Gardening" in front.sections[0].text
    assert [(s.title, s.path, s.anchor_page) for s in one.sections] == [
        ("", [], 2),
        ("Soil", ["Soil"], 2),
        ("Clay", ["Soil", "Clay"], 3),
    ]
    assert "patience" in one.sections[0].text and "Loam" not in one.sections[0].text
    assert "Loam holds moisture well." in one.sections[1].text
    assert "Clay drains slowly." in one.sections[2].text
    assert "Loam" not in one.sections[2].text
    # chapter two has no sub-entries: all its text (two pages) is its lead-in
    assert [s.title for s in two.sections] == [""]
    assert [b.page for b in two.sections[0].blocks] == [4, 4, 5]
    assert book.page_labels == {}


@pytest.mark.parametrize("beta_y", [285, 300])  # above the heading, or at its baseline
def test_two_sections_on_one_page_each_get_only_their_own_text(
    tmp_path: Path, beta_y: float
) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    write(page, 100, "Alpha heading", 14)
    write(page, 130, "Apples grow on trees.\nThey ripen in autumn.")
    write(page, 300, "Beta heading", 14)
    write(page, 330, "Bananas grow in bunches.")
    doc.set_toc([[1, "Fruit", 1], [2, "Alpha heading", 1, dest(85)], [2, "Beta", 1, dest(beta_y)]])
    book = parse_pdf(save(doc, tmp_path / "fruit.pdf"))
    sections = book.chapters[0].sections
    assert [s.title for s in sections] == ["Alpha heading", "Beta"]  # no text → no lead-in
    alpha, beta = sections
    assert "Apples grow on trees. They ripen in autumn." in alpha.text
    assert "Bananas" not in alpha.text
    assert "Bananas grow in bunches." in beta.text and "Apples" not in beta.text
    assert beta.blocks[0].text == "Beta heading"
    assert all(b.page == 1 for b in alpha.blocks + beta.blocks)


def test_page_labels_follow_the_pdf_with_roman_front_matter(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for i in range(5):
        write(doc.new_page(), 100, f"Text on sheet {i + 1}.")
    doc.set_page_labels(
        [
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
        ]
    )
    doc.set_toc([[1, "Body", 3]])
    book = parse_pdf(save(doc, tmp_path / "labels.pdf"))
    assert book.page_labels == {1: "i", 2: "ii", 3: "1", 4: "2", 5: "3"}
    assert book.chapters[0].title == "Front matter"
    assert book.chapters[1].anchor_page == 3


def test_page_labels_that_cannot_be_read_are_said(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A label tree MuPDF chokes on costs the labels, not the book — and says so."""
    doc = pymupdf.open()
    for i in range(3):
        write(doc.new_page(), 100, f"Text on sheet {i + 1}.")
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1}])
    path = save(doc, tmp_path / "labels.pdf")

    def fails(self: pymupdf.Page) -> str:
        raise RuntimeError("cannot parse page label tree")

    monkeypatch.setattr(pymupdf.Page, "get_label", fails)
    book = parse_pdf(path)
    assert book.page_labels == {} and book.page_count == 3
    assert book.warnings == ["printed page labels could not be read (RuntimeError: cannot "
                             "parse page label tree); pages are cited by their physical "
                             "numbers"]


def test_without_outline_headings_come_from_font_sizes(tmp_path: Path) -> None:
    doc = pymupdf.open()
    body = "Ordinary body text that fills the page.\nIt runs over a second line."
    for chapter in (1, 2):
        page = doc.new_page()
        write(page, 100, f"Chapter {chapter} Big Ideas", 22)
        write(page, 140, body)
        write(page, 300, f"Section {chapter}.1 Details", 15)
        write(page, 330, f"Detail text number {chapter}.")
        write(page, 500, body)
    book = parse_pdf(save(doc, tmp_path / "plain.pdf"))
    assert book.title == "plain"  # no metadata title: the file name stem
    assert [c.title for c in book.chapters] == ["Chapter 1 Big Ideas", "Chapter 2 Big Ideas"]
    first = book.chapters[0]
    assert [(s.title, s.path) for s in first.sections] == [
        ("", []),
        ("Section 1.1 Details", ["Section 1.1 Details"]),
    ]
    assert "Detail text number 1." in first.sections[1].text
    assert "Detail text number 2." not in first.sections[1].text


def test_no_outline_and_no_headings_falls_back_to_page_ranges(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for i in range(12):
        write(doc.new_page(), 100, f"Plain page {i + 1} of the same size.")
    book = parse_pdf(save(doc, tmp_path / "flat.pdf"))
    assert [c.title for c in book.chapters] == ["Pages 1–10", "Pages 11–12"]
    assert "Plain page 11 of" in book.chapters[1].sections[0].text


def test_running_header_footer_and_page_numbers_are_stripped(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for i in range(8):
        page = doc.new_page()
        write(page, 40, f"The Handbook of Ropes  —  {i + 1}", 9)
        write(page, 150, f"Knot number {i + 1} is tied like this.")
        write(page, 810, f"Page {i + 1} of 8", 9)
    doc.set_toc([[1, "Knots", 1]])
    book = parse_pdf(save(doc, tmp_path / "ropes.pdf"))
    text = all_text(book)
    assert "Handbook" not in text and "of 8" not in text
    for i in range(8):
        assert f"Knot number {i + 1} is tied like this." in text


def test_hyphenated_and_wrapped_lines_are_rejoined(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    write(page, 100, "Good infor-\nmation is worth a fair\nprice, and the\nwrapped lines join.")
    write(page, 780, "This sentence is")
    write(doc.new_page(), 100, "wrapped onto the next page.")
    doc.set_toc([[1, "Words", 1]])
    book = parse_pdf(save(doc, tmp_path / "hyphen.pdf"))
    texts = [b.text for b in all_blocks(book)]
    assert texts[0] == "Good information is worth a fair price, and the wrapped lines join."
    # a paragraph cut by the page break is one block spanning both pages
    spanning = all_blocks(book)[1]
    assert spanning.text == "This sentence is wrapped onto the next page."
    assert (spanning.page, spanning.page_end) == (1, 2)


def test_outline_entries_out_of_order_or_pointing_nowhere_do_not_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = pymupdf.open()
    for i in range(3):
        write(doc.new_page(), 100, f"Only text of page {i + 1}.")
    path = save(doc, tmp_path / "odd.pdf")
    toc = [
        [1, "Third", 3, {}],
        [1, "Ghost", 99, {}],
        [1, "Void", -1, {}],
        [1, "First", 1, {}],
        [2, "Lost leaf", 0, {}],
    ]
    monkeypatch.setattr(pymupdf.Document, "get_toc", lambda self, simple=True: toc)
    book = parse_pdf(path)
    titles = [c.title for c in book.chapters]
    assert titles == ["Third", "Ghost", "Void", "First"]  # trailing "Lost leaf" is skipped
    assert book.warnings and "3 outline entries" in book.warnings[0]
    # text still goes by position: nothing lost, nothing doubled
    assert "page 3" in book.chapters[0].sections[0].text
    assert [c.sections for c in book.chapters[1:3]] == [[], []]
    assert "page 1" in book.chapters[3].sections[0].text
    assert all_text(book).count("Only text") == 3


def test_entries_pointing_at_the_page_top_snap_to_their_printed_headings(tmp_path: Path) -> None:
    """Outline destinations without a position (page top) must not steal the text above
    their heading from the section before."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for text, size in [("1 Rivers", 20), ("1.1 Springs", 14),
                       ("Springs rise where groundwater meets the surface.", 11),
                       ("1.2 Deltas", 14),
                       ("Deltas form where a river drops its silt into the sea.", 11)]:
        page.insert_text((72, y), text, fontsize=size)
        y += 60
    doc.set_toc([[1, "Rivers", 1], [2, "Springs", 1], [2, "Deltas", 1]])
    path = tmp_path / "snap.pdf"
    doc.save(path)
    (chapter,) = parse_pdf(path).chapters
    by_title = {s.title: s.text for s in chapter.sections}
    assert "groundwater" in by_title["Springs"] and "groundwater" not in by_title["Deltas"]
    assert "silt" in by_title["Deltas"]


@pytest.mark.slow  # big or real books
def test_a_500_page_book_keeps_its_outline_and_text(tmp_path: Path) -> None:
    doc = pymupdf.open()
    toc = []
    para = "A line of fairly ordinary prose that wraps to the next line\n" * 8
    for i in range(500):
        page = doc.new_page()
        for y in (100, 300, 500):
            write(page, y, para, 10)
        if i % 20 == 0:
            toc.append([1, f"Chapter {i // 20 + 1}", i + 1, dest(80)])
        elif i % 5 == 0:
            toc.append([2, f"Section {i}", i + 1, dest(280)])
    doc.set_toc(toc)
    path = save(doc, tmp_path / "big.pdf")
    book = parse_pdf(path)
    assert len(book.chapters) == 25 and len(all_blocks(book)) >= 1500
