"""Chunk budgets per kind of file: Markdown under its own headings (reference text) is cut
shorter than a book's chunks, leaving its heading path and summary room in the model's
window; a PDF (a book) still fills the whole window, and a headerless manuscript too."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.config import Config
from grimoire_beholder.ingest.build import (
    REFERENCE_CONTEXT_PIECES,
    build_book,
    file_info,
    limit_for,
    piece_limit,
)
from grimoire_beholder.models.embedded import EmbeddedEmbedder
from grimoire_beholder.parse import parse_file
from grimoire_beholder.structure.modes import is_reference_text
from helpers import make_epub

# Sentences of words that take several pieces each, so the piece limit (not the chunk size
# in approximate tokens) is what ends a chunk.
PARAGRAPHS = ["".join(f"Lamp{p}x{i} burns {7 * i + p}.5 lux at 0{i % 9}:1{p % 9}. "
                      for i in range(40)) for p in range(8)]


@pytest.fixture(scope="module")
def embedder() -> EmbeddedEmbedder:
    return EmbeddedEmbedder()


def _pieces(embedder: EmbeddedEmbedder, path: Path) -> list[int]:
    limit = piece_limit(embedder)
    book = build_book(parse_file(path), slug="x", name="x", info=file_info(path),
                      config=Config(), limit=limit)
    return [embedder.count_pieces(c.text) for ch in book.chapters for s in ch.sections
            for c in s.chunks]


def _pdf(path: Path) -> Path:
    doc = pymupdf.open()
    for paragraph in PARAGRAPHS:
        doc.new_page(width=420, height=595).insert_htmlbox(
            pymupdf.Rect(30, 40, 390, 570), f"<p>{paragraph}</p>")
    doc.save(path)
    doc.close()
    return path


def test_reference_markdown_gets_its_budget_and_a_pdf_the_whole_window(
        embedder: EmbeddedEmbedder, tmp_path: Path) -> None:
    window = embedder.window_pieces
    reference = window - REFERENCE_CONTEXT_PIECES
    assert 0 < reference < window
    guide = tmp_path / "lamps.md"
    guide.write_text("# Lamps\n\n" + "".join(f"## Lamp {p}\n\n{text}\n\n"
                                             for p, text in enumerate(PARAGRAPHS)),
                     encoding="utf-8")
    markdown = _pieces(embedder, guide)
    assert len(markdown) > len(PARAGRAPHS) and max(markdown) <= reference
    assert max(markdown) > reference - 30  # cut at the budget, not far below it
    book = _pieces(embedder, _pdf(tmp_path / "lamps.pdf"))
    assert reference < max(book) <= window  # the same text in a PDF fills the window
    # a Markdown manuscript without headings is prose in windows, like a book
    manuscript = tmp_path / "manuscript.md"
    manuscript.write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
    assert reference < max(_pieces(embedder, manuscript)) <= window


def test_which_files_are_reference_text(tmp_path: Path, sample_book: Path) -> None:
    """Decided by the file's format and structure, never its name: headed Markdown is
    reference text; plain text, a PDF and an EPUB (headed sections and all) are not."""
    plain = tmp_path / "notes.txt"
    plain.write_text("Run it.\n\nThen stop it.\n", encoding="utf-8")
    guide = make_epub(tmp_path / "guide.epub",
                      {"c1.xhtml": "<h1>Lamps</h1><h2>Wicks</h2><p>Trim them.</p>"},
                      [("Lamps", "c1.xhtml")])
    assert is_reference_text(parse_file(sample_book))
    for path in (plain, guide, _pdf(tmp_path / "lamps.pdf")):
        assert not is_reference_text(parse_file(path)), path.name


def test_a_book_keeps_the_limit_it_was_given(embedder: EmbeddedEmbedder,
                                             tmp_path: Path) -> None:
    """PDF/EPUB chunks are cut exactly as before the reference budget existed (their
    chunks stay byte-identical, so no book library moves); without a tokenizer (Ollama)
    there is no limit for any kind of file."""
    limit = piece_limit(embedder)
    parsed = parse_file(_pdf(tmp_path / "lamps.pdf"))
    assert limit_for(parsed, limit) is limit
    assert limit_for(parsed, None) is None
