"""HTML pages and Word documents: headings → chapters and sections, main text only, Word
tables as row records, hostile files refused or read in bounded time, and both answering a
query through the whole pipeline."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import docx
import pytest

from fakes import FakeEmbedder
from grimoire_beholder import Library
from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.parse import parse_file
from helpers import fake_config

PAGE = """<!DOCTYPE html><html><head><title>Tea Guide | Leaf Blog</title>
<meta name="author" content="Ann Leaf"></head>
<body><header><nav><a href="/">Home</a> <a href="/about">About us</a></nav></header>
<div class="sidebar">Popular posts: kittens and puppies</div>
<main><article><h1>A Guide to Tea</h1><p>Tea is the leaf of Camellia sinensis.</p>
<h2>Green tea</h2><p>Green tea is steamed or pan-fired to stop oxidation.</p>
<h3>Sencha</h3><p>Sencha is the most common Japanese green tea, steamed for a minute.</p>
<h2>Black tea</h2><p>Black tea is fully oxidised before it is dried.</p>
<aside>Sponsored: buy a kettle</aside>
</article></main><footer>Copyright 2020 Leaf Blog, all rights reserved</footer>
<div id="cookie-banner">We use cookies to track you</div></body></html>
"""


def _outline(book: object) -> list[tuple[str, list[tuple[str, list[str], str]]]]:
    return [(c.title, [(s.title, s.path, s.text) for s in c.sections])
            for c in book.chapters]  # type: ignore[attr-defined]


def test_an_html_page_gives_its_main_text_by_its_headings(tmp_path: Path) -> None:
    path = tmp_path / "tea.html"
    path.write_text(PAGE, encoding="utf-8")
    book = parse_file(path)
    assert (book.title, book.author, book.source_type) == ("A Guide to Tea", "Ann Leaf", "html")
    assert _outline(book) == [
        ("A Guide to Tea", [("", [], "Tea is the leaf of Camellia sinensis.")]),
        ("Green tea", [("", [], "Green tea is steamed or pan-fired to stop oxidation."),
                       ("Sencha", ["Sencha"],
                        "Sencha is the most common Japanese green tea, steamed for a minute.")]),
        ("Black tea", [("", [], "Black tea is fully oxidised before it is dried.")]),
    ]
    everything = " ".join(s.text for c in book.chapters for s in c.sections)
    for chrome in ("Home", "Popular posts", "Sponsored", "Copyright", "cookies"):
        assert chrome not in everything
    assert all(b.page is not None for c in book.chapters for s in c.sections for b in s.blocks)


@pytest.mark.slow
def test_a_page_of_100k_nested_tags_keeps_its_text_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "deep.html"
    path.write_text("<html><body><h1>Deep</h1>" + "<div>" * 100_000 + "<p>the buried line</p>"
                    + "</div>" * 100_000 + "<h1>After</h1><p>still read</p></body></html>")
    started = time.monotonic()
    book = parse_file(path)
    assert time.monotonic() - started < 120  # no hang; a loose bound, not a speed test
    texts = [s.text for c in book.chapters for s in c.sections]
    assert "the buried line" in texts and "still read" in texts


def test_binary_junk_named_html_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "junk.html"
    path.write_bytes(b"\x00\x01\x02\xff" * 4000)
    with pytest.raises(InputFileError, match="not readable HTML"):
        parse_file(path)
    (tmp_path / "nav.html").write_text("<html><body><nav><a href='/'>Home</a></nav></body></html>")
    with pytest.raises(NoTextError):
        parse_file(tmp_path / "nav.html")


def _manual(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.author = "Bea Writer"
    document.add_heading("Pump Field Manual", 0)
    document.add_paragraph("Read this before opening the housing.")
    document.add_heading("Setup", 1)
    document.add_paragraph("Bolt the pump to a level concrete plinth.")
    document.add_heading("Wiring", 2)
    document.add_paragraph("The red lead goes to terminal A.")
    table = document.add_table(rows=3, cols=2)
    for row, (part, torque) in zip(table.rows, [("Part", "Torque"), ("Bolt M6", "10 Nm"),
                                                ("Bolt M8", "25 Nm")], strict=True):
        row.cells[0].text, row.cells[1].text = part, torque
    document.add_heading("Maintenance", 1)
    document.add_paragraph("Clean the intake filter every month.")
    document.save(str(path))
    return path


def test_a_word_document_gives_chapters_sections_and_table_records(tmp_path: Path) -> None:
    book = parse_file(_manual(tmp_path / "manual.docx"))
    assert (book.title, book.author, book.source_type) == (
        "Pump Field Manual", "Bea Writer", "docx")
    assert _outline(book) == [
        ("Pump Field Manual", [("", [], "Read this before opening the housing.")]),
        ("Setup", [("", [], "Bolt the pump to a level concrete plinth."),
                   ("Wiring", ["Wiring"], "The red lead goes to terminal A.\n\n"
                    "Part: Bolt M6; Torque: 10 Nm\n\nPart: Bolt M8; Torque: 25 Nm")]),
        ("Maintenance", [("", [], "Clean the intake filter every month.")]),
    ]


def test_a_merged_word_cell_is_read_once_in_its_row(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Valves", 1)
    table = document.add_table(rows=2, cols=3)
    for cell, text in zip(table.rows[0].cells, ["Valve", "Size", "Note"], strict=True):
        cell.text = text
    merged = table.cell(1, 1).merge(table.cell(1, 2))
    table.cell(1, 0).text, merged.text = "V1", "DN50 brass, hand-tightened only"
    document.save(str(tmp_path / "valves.docx"))
    text = parse_file(tmp_path / "valves.docx").chapters[0].sections[0].text
    assert text.count("DN50 brass") == 1
    assert "Valve: V1; Size: DN50 brass, hand-tightened only" in text


def test_a_zip_bomb_docx_is_refused_before_it_is_read(tmp_path: Path) -> None:
    source = _manual(tmp_path / "manual.docx").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as original, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in original.infolist():
            bomb.writestr(info, original.read(info))
        bomb.writestr("word/media/blank.bin", b"\0" * (64 * 1024 * 1024))
    path = tmp_path / "bomb.docx"
    path.write_bytes(out.getvalue())
    assert path.stat().st_size < 1024 * 1024
    with pytest.raises(InputFileError, match="zip bomb"):
        parse_file(path)
    (tmp_path / "plain.docx").write_text("this is not a zip at all")
    with pytest.raises(InputFileError, match="not a Word document"):
        parse_file(tmp_path / "plain.docx")


def test_html_and_word_books_answer_queries_with_their_sections(tmp_path: Path) -> None:
    page = tmp_path / "tea.html"
    page.write_text(PAGE, encoding="utf-8")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(page)
        lib.ingest(_manual(tmp_path / "manual.docx"))
        hit = lib.search("which tea is steamed for a minute", top_k=1).hits[0]
        assert (hit.slug, hit.section) == ("a-guide-to-tea", "Green tea › Sencha")
        assert hit.citation.location.startswith("loc. ")
        hit = lib.search("torque for bolt M8", top_k=1, source_type="docx").hits[0]
        assert hit.section == "Setup › Wiring" and "25 Nm" in hit.text
        assert {b.source_type for b in lib.list_books()} == {"html", "docx"}


def test_a_page_or_document_is_never_named_after_its_first_paragraph(tmp_path: Path) -> None:
    """Without a heading that names it, a page took its first paragraph as its title (and
    slug: 'creme-brulee-recipe-text-about-desserts'), even with a lone h1 or a <title>."""
    lone = tmp_path / "lone.html"
    lone.write_bytes("<html><head><title>Café page</title></head><body><h1>Café</h1>"
                     "<p>Crème brûlée recipe text about desserts.</p></body></html>"
                     .encode())
    assert parse_file(lone).title == "Café"
    titled = tmp_path / "titled.html"
    titled.write_text("<html><head><title>Owl notes</title></head><body>"
                      "<p>Barn owls hunt at night.</p></body></html>")
    assert parse_file(titled).title == "Owl notes"
    bare = tmp_path / "bare.html"
    bare.write_text("<p>Bats sleep by day.</p>")
    assert parse_file(bare).title == "bare"
    document = docx.Document()
    document.add_paragraph("Moles dig tunnels under lawns.")
    document.save(str(tmp_path / "moles.docx"))
    assert parse_file(tmp_path / "moles.docx").title == "moles"
