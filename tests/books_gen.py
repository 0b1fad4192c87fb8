"""Small real books the feature tests generate: a PDF with an outline, printed page labels
and real typography (curly quotes, dashes, a word hyphenated at a line end), and a scan."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config

KEEPER_PAGES = [
    "<h1>Preface</h1><p>This little book was written for the keepers of the northern light, "
    "who trim the wick and watch the sea through the long winter nights.</p>",
    "<h1>1 The Lamp</h1><p>The keeper said “never let the flame go out” – and he meant it — "
    "for a ship’s safety hangs on the first hour of dusk. Filling the reservoir is an assign-"
    "<br>ment given to the youngest keeper, who fetches the oil from the store below.</p>"
    "<p>Polish the great lens every morning with a soft cloth of chamois leather, working "
    "from the centre outwards so that no grit scratches the glass.</p>",
    "<h1>2 The Fog</h1><p>When the fog rolls in from the east, sound the horn twice a minute "
    "until the lookout can see the rocks again. Keep the logbook open on the desk and record "
    "the hour the fog began and the hour it lifted.</p>",
    "<h1>3 The Storm</h1><p>In a storm the tower sways a little, and the keeper must not "
    "panic; the old stones have stood for two hundred years. After the storm, walk the "
    "gallery and look for cracked panes, loose rails and the nests of gulls blown from the "
    "cliff.</p>",
]
KEEPER_TOC = [[1, "Preface", 1], [1, "1 The Lamp", 2], [1, "2 The Fog", 3], [1, "3 The Storm", 4]]


def html_pdf(path: Path, pages: list[str], toc: list[list[object]] | None = None, *,
             labels: bool = True) -> Path:
    """A PDF with one page per HTML body (real fonts, so curly quotes survive); the first
    page is printed "i", the rest 1, 2, 3, … when ``labels``."""
    doc = pymupdf.open()
    for body in pages:
        page = doc.new_page(width=420, height=595)
        page.insert_htmlbox(pymupdf.Rect(40, 50, 380, 560), body)
    if labels:
        doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                             {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1}])
    if toc:
        doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path


def keeper_pdf(path: Path) -> Path:
    return html_pdf(path, KEEPER_PAGES, KEEPER_TOC)


def scanned_pdf(path: Path, text_pages: list[str], scanned_text: str, at: int) -> Path:
    """Text pages with one page (1-based ``at``) that shows ``scanned_text`` only as a
    picture: rendered to an image and inserted as the page's only content."""
    doc = pymupdf.open()
    for number, body in enumerate(text_pages, start=1):
        if number == at:
            src = pymupdf.open()
            src.new_page(width=420, height=595).insert_htmlbox(
                pymupdf.Rect(40, 50, 380, 560), f"<p>{scanned_text}</p>")
            pix = src[0].get_pixmap(dpi=150)
            src.close()
            doc.new_page(width=420, height=595).insert_image(
                pymupdf.Rect(0, 0, 420, 595), pixmap=pix)
        doc.new_page(width=420, height=595).insert_htmlbox(
            pymupdf.Rect(40, 50, 380, 560), body)
    doc.save(path)
    doc.close()
    return path


def cli_library(directory: Path, *books: Path, extra: str = "") -> Path:
    """A fake-model library in ``directory`` with ``books`` ingested through the CLI; its
    config path."""
    config = write_config(directory, extra)
    for book in books:
        result = CliRunner().invoke(app, ["ingest", str(book), "--config", str(config)])
        assert result.exit_code == 0, result.output
    return config
