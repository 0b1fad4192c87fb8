"""Scanned PDF pages: OCR'd through pymupdf + Tesseract when available, else listed clearly.

The scanned pages are made here: text is drawn on a page, rasterised with ``get_pixmap`` and
inserted as an image into a new page that has no text layer. The OCR tests need Tesseract's
language data (Debian ``tesseract-ocr``); CI installs it (.ci/run), locally they skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from fakes import FakeEmbedder
from grimoire_beholder.errors import InputFileError
from grimoire_beholder.library import Library
from grimoire_beholder.parse import pdf_ocr
from grimoire_beholder.parse.document import ParsedBook, ParseOptions
from grimoire_beholder.parse.pdf import parse_pdf
from helpers import fake_config, needs_tesseract

SCANNED_TEXT = "The foghorn sounds every thirty seconds in dense fog."


def scanned_page(doc: pymupdf.Document, text: str) -> None:
    """Append a page that shows ``text`` only as a picture (no text layer)."""
    src = pymupdf.open()
    page = src.new_page()
    page.insert_text((72, 120), text, fontsize=16)
    pix = page.get_pixmap(dpi=200)
    src.close()
    doc.new_page().insert_image(pymupdf.Rect(0, 0, 595, 842), pixmap=pix)


def mixed_pdf(path: Path, scanned: int = 1) -> Path:
    """Page 1 has a text layer; the next ``scanned`` pages are scans."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 120), "Lighthouse keepers trim the wick at dusk.",
                               fontsize=11)
    for _ in range(scanned):
        scanned_page(doc, SCANNED_TEXT)
    doc.save(path)
    doc.close()
    return path


def scan_only_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    scanned_page(doc, SCANNED_TEXT)
    scanned_page(doc, "Second scanned page about the lamp room.")
    doc.save(path)
    doc.close()
    return path


def text_by_page(book: ParsedBook) -> dict[int, str]:
    out: dict[int, str] = {}
    for ch in book.chapters:
        for s in ch.sections:
            for b in s.blocks:
                assert b.page is not None
                out[b.page] = f"{out.get(b.page, '')} {b.text}".strip()
    return out


def no_tesseract(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_ocr, "find_tessdata", lambda language: None)


@needs_tesseract
def test_a_scanned_page_is_ocrd_and_searchable(tmp_path: Path) -> None:
    path = mixed_pdf(tmp_path / "keeper.pdf")
    book = parse_pdf(path)
    pages = text_by_page(book)
    assert "foghorn sounds every thirty seconds" in pages[2].lower()
    assert "trim the wick" in pages[1]
    assert any("read by OCR" in w and w.endswith("page 2") for w in book.warnings)
    with Library.open(config=fake_config(tmp_path, retrieval_mode="keyword"),
                      embedder=FakeEmbedder()) as lib:
        lib.ingest(path)
        hit = lib.search("how often does the foghorn sound?", top_k=1).hits[0]
        assert hit.page_end == 2 and "foghorn" in hit.text.lower()


def test_without_tesseract_the_skipped_pages_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_tesseract(monkeypatch)
    book = parse_pdf(mixed_pdf(tmp_path / "keeper.pdf", scanned=3))
    assert set(text_by_page(book)) == {1}
    (warning,) = book.warnings
    assert "3 scanned page(s)" in warning and "pages 2–4" in warning
    assert "apt-get install tesseract-ocr" in warning and "brew install tesseract" in warning


def test_ocr_off_lists_the_pages_and_how_to_turn_it_on(tmp_path: Path) -> None:
    book = parse_pdf(mixed_pdf(tmp_path / "keeper.pdf"), ParseOptions(ocr="off"))
    assert set(text_by_page(book)) == {1}
    (warning,) = book.warnings
    assert "page 2" in warning and 'ocr = "auto"' in warning


def test_fully_scanned_pdf_with_ocr_off_is_a_one_line_error(tmp_path: Path) -> None:
    path = scan_only_pdf(tmp_path / "scan.pdf")
    with Library.open(config=fake_config(tmp_path, ocr="off"), embedder=FakeEmbedder()) as lib:
        with pytest.raises(InputFileError) as info:
            lib.ingest(path)
        assert lib.list_books() == []
    message = str(info.value)
    assert "\n" not in message and "scan.pdf" in message
    assert "scanned PDF" in message and 'ocr = "auto"' in message


def test_fully_scanned_pdf_without_tesseract_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_tesseract(monkeypatch)
    with pytest.raises(InputFileError) as info:
        parse_pdf(scan_only_pdf(tmp_path / "scan.pdf"))
    message = str(info.value)
    assert "\n" not in message and "scanned PDF" in message
    assert "apt-get install tesseract-ocr" in message


def test_blank_pages_are_not_reported_as_scanned_but_are_counted(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 120), "Only the first page has words.", fontsize=11)
    doc.new_page()
    ruled = doc.new_page()  # a header rule alone is not something to read
    ruled.draw_line((72, 74), (525, 74), width=0.5)
    doc.save(tmp_path / "blank.pdf")
    doc.close()
    (warning,) = parse_pdf(tmp_path / "blank.pdf", ParseOptions(ocr="off")).warnings
    assert "2 blank page(s) gave no text: pages 2–3" in warning and "scanned" not in warning


def test_tessdata_is_found_from_tessdata_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "eng.traineddata").write_bytes(b"x")
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    assert pdf_ocr.find_tessdata("eng") == str(tmp_path)
    assert pdf_ocr.find_tessdata("eng+xyz") != str(tmp_path)  # every language must be there
    assert pdf_ocr.page_ranges([7, 1, 2, 3, 9, 10]) == "1–3, 7, 9–10"


# -- text drawn as vector shapes (no text layer, no image) -------------------------------
DRAWN_TEXT = "The keeper logs the tide at every change of watch."


def drawn_page(doc: pymupdf.Document, text: str) -> None:
    """Append a page whose glyphs are vector paths: rendered to SVG with text as paths,
    then that SVG converted back to a PDF page (as some typesetting pipelines do)."""
    src = pymupdf.open()
    src.new_page().insert_text((72, 120), text, fontsize=16)
    svg = src[0].get_svg_image(text_as_path=True)
    src.close()
    pdf = pymupdf.open("pdf", pymupdf.open(stream=svg.encode(), filetype="svg").convert_to_pdf())
    doc.insert_pdf(pdf)
    pdf.close()


def drawn_pdf(path: Path) -> Path:
    """Page 1 text, page 2 text drawn as shapes, page 3 blank, page 4 only a header rule."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 120), "Lighthouse keepers trim the wick at dusk.",
                               fontsize=11)
    drawn_page(doc, DRAWN_TEXT)
    doc.new_page()
    doc.new_page().draw_line((72, 74), (525, 74), width=0.5)
    doc.save(path)
    doc.close()
    return path


@needs_tesseract
def test_a_page_of_text_drawn_as_shapes_is_ocrd(tmp_path: Path) -> None:
    book = parse_pdf(drawn_pdf(tmp_path / "drawn.pdf"))
    pages = text_by_page(book)
    assert "tide at every change of watch" in pages[2].lower()
    assert set(pages) == {1, 2}
    assert len(book.warnings) == 2
    said = " ".join(book.warnings)
    assert "1 page(s) drawn as vector shapes" in said and "read by OCR" in said
    assert "2 blank page(s) gave no text: pages 3–4" in said


def test_without_ocr_every_textless_page_is_accounted_for(tmp_path: Path) -> None:
    book = parse_pdf(drawn_pdf(tmp_path / "drawn.pdf"), ParseOptions(ocr="off"))
    assert set(text_by_page(book)) == {1}
    said = " ".join(book.warnings)
    assert "1 page(s) drawn as vector shapes have no text layer and were skipped (page 2)" \
        in said and 'ocr = "auto"' in said
    assert "2 blank page(s) gave no text: pages 3–4" in said


def test_a_pdf_entirely_drawn_as_shapes_says_so(tmp_path: Path) -> None:
    doc = pymupdf.open()
    drawn_page(doc, DRAWN_TEXT)
    doc.save(tmp_path / "outlined.pdf")
    doc.close()
    with pytest.raises(InputFileError) as info:
        parse_pdf(tmp_path / "outlined.pdf", ParseOptions(ocr="off"))
    message = str(info.value)
    assert "drawn as shapes" in message and 'ocr = "auto"' in message and "\n" not in message


def test_the_live_manual_accounts_for_every_page_without_text() -> None:
    """The reported book: 64 pages whose body text is drawn as vector paths. Every page
    without a text layer is counted in a warning as drawn (to OCR) or blank."""
    path = Path(__file__).resolve().parents[2] / "shared/bench/books/live-manual.en.pdf"
    if not path.exists():
        pytest.skip("bench book live-manual.en.pdf not available")
    book = parse_pdf(path, ParseOptions(ocr="off"))
    doc = pymupdf.open(path)
    textless = sum(1 for page in doc if not page.get_text().strip())
    said = " ".join(book.warnings)
    counts = [int(n) for n in re.findall(r"(\d+) (?:blank page|page)\(s\)", said)]
    assert sum(counts) == textless and textless > 30, book.warnings
    assert "drawn as vector shapes have no text layer and were skipped" in said
