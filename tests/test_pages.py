"""PDF pages as PNG images with the cited words highlighted: the highlight is where the
words are (checked pixel by pixel), the size is bounded, other formats get a clear error,
and the library file is never written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from typer.testing import CliRunner

from books_gen import keeper_pdf
from fakes import FakeEmbedder
from grimoire_beholder.checks.pages import MAX_EDGE, NoPageImagesError, PageImage
from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import GrimoireError, NotFoundError
from grimoire_beholder.library import Library
from helpers import BENCH, GARDEN_CHAPTERS, fake_config, share_yellow, write_markdown_book, yellow
from mcp_helpers import write_config

LENS = "Polish the great lens every morning with a soft cloth of chamois leather"


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[Library]:
    library = Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder())
    library.ingest(keeper_pdf(tmp_path / "keeper.pdf"))
    library.ingest(write_markdown_book(tmp_path / "garden.md", "The Garden Book",
                                       GARDEN_CHAPTERS))
    yield library
    library.close()


def db_files(db: Path) -> tuple[bytes, bytes]:
    """The library file and its write-ahead log, byte for byte."""
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes(), wal.read_bytes() if wal.exists() else b""


def words_box(pdf: Path, page: int, phrase: str, zoom: float) -> list[pymupdf.Rect]:
    """Where pymupdf itself finds ``phrase`` on the page, in image pixels."""
    with pymupdf.open(pdf) as doc:
        return [r * zoom for r in doc[page - 1].search_for(phrase)]


def check_highlight(image: PageImage, pdf: Path, phrase: str) -> None:
    pix = pymupdf.Pixmap(image.png)
    assert (pix.width, pix.height) == (image.width, image.height)
    assert image.highlight_found and image.boxes
    assert all(share_yellow(pix, box) > 0.5 for box in image.boxes)  # marked inside
    with pymupdf.open(pdf) as doc:
        zoom = image.width / doc[image.page - 1].rect.width
    expected = words_box(pdf, image.page, phrase, zoom)
    assert expected, "the phrase is on the page"
    for rect in expected:  # every cited word sits inside a highlighted box
        centre = ((rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2)
        assert any(b[0] <= centre[0] <= b[2] and b[1] <= centre[1] <= b[3] for b in image.boxes)
        assert yellow(pix.pixel(int(rect.x0) + 2, int(rect.y0) + 2))
    corner = pix.pixel(5, 5)  # and nowhere else: the margin stays white
    assert corner[:3] == (255, 255, 255)
    lowest = max(b[3] for b in image.boxes)
    below = [pix.pixel(x, y) for x in range(0, pix.width, 7)
             for y in range(lowest + 40, pix.height, 7)]
    assert not any(yellow(p) for p in below)


def test_the_cited_words_are_highlighted_on_the_page(lib: Library, tmp_path: Path) -> None:
    image = lib.page_image("keeper", 2, LENS.replace("great lens", "great\nlens"))
    assert image.page == 2 and image.page_label == "1" and image.page_count == 4
    check_highlight(image, tmp_path / "keeper.pdf", "chamois leather")
    assert max(image.width, image.height) <= MAX_EDGE
    plain = lib.page_image("keeper", "2")
    assert plain.highlight_found is None and plain.boxes == []
    pix = pymupdf.Pixmap(plain.png)  # decoded once, not once per pixel looked at
    assert not any(yellow(pix.pixel(x, y))
                   for x in range(0, plain.width, 9) for y in range(0, plain.height, 9))


def test_a_printed_label_names_a_page(lib: Library) -> None:
    assert lib.page_image("keeper", "i").page == 1
    assert lib.page_image("keeper", "2", printed=True).page == 3
    with pytest.raises(NotFoundError, match="pages 1–4, not 9"):
        lib.page_image("keeper", 9)
    with pytest.raises(NotFoundError, match="no page printed as 'xx'"):
        lib.page_image("keeper", "xx")


def test_text_not_on_the_page_is_said_plainly(lib: Library) -> None:
    image = lib.page_image("keeper", 3, LENS)
    assert image.highlight_found is False and image.boxes == []
    assert image.note is not None and "not found on this page" in image.note


def test_other_formats_have_no_page_images(lib: Library) -> None:
    with pytest.raises(NoPageImagesError, match="no page images for this format"):
        lib.page_image("the-garden-book", 1)


def test_rendering_never_writes_to_the_library(lib: Library, tmp_path: Path) -> None:
    db = lib.config.database_path
    lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = db_files(db)
    pdf_before = (tmp_path / "keeper.pdf").read_bytes()
    lib.page_image("keeper", 2, LENS)
    assert db_files(db) == before
    assert (tmp_path / "keeper.pdf").read_bytes() == pdf_before


def test_cli_page_writes_a_png(lib: Library, tmp_path: Path) -> None:
    config = write_config(tmp_path)
    out = tmp_path / "lens.png"
    result = CliRunner().invoke(app, ["page", "keeper", "2", "--highlight", LENS, "-o",
                                      str(out), "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "page 2 (printed 1) of 4" in result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(app, ["page", "the-garden-book", "1", "--config", str(config)])
    assert bad.exit_code == 1 and "no page images for this format" in bad.output
    missed = CliRunner().invoke(app, ["page", "keeper", "2", "--highlight",
                                      "words printed nowhere in this book", "-o", str(out),
                                      "--config", str(config)])
    assert missed.exit_code == 1, missed.output
    assert "not found on this page" in missed.output and "wrote" in missed.output


def test_odd_page_numbers_are_one_clear_error(lib: Library, tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    for page, says in (("9" * 5000, "has pages 1–4, not 999"), ("²", "no page printed as"),
                       ("١", "no page printed as"), ("0", "not 0")):
        result = CliRunner().invoke(app, ["page", "keeper", page, "-o",
                                          str(tmp_path / "p.png"), "--config", config])
        assert result.exit_code == 1, (page, result.output)
        assert result.stderr.startswith("error: ") and says in result.stderr, result.stderr
        assert len(result.stderr) < 300
    assert not (tmp_path / "p.png").exists()


def test_cli_page_never_writes_over_what_is_not_a_png(lib: Library, tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    db, pdf = lib.config.database_path, tmp_path / "keeper.pdf"
    lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = db_files(db), pdf.read_bytes()
    for target, says in ((db, "not a PNG"), (pdf, "writes PNG images, not .pdf ones"),
                         (tmp_path, "is a folder"),
                         (tmp_path / "missing" / "p.png", "cannot write")):
        result = CliRunner().invoke(app, ["page", "keeper", "2", "-o", str(target),
                                          "--config", config])
        assert result.exit_code == 1, (target, result.output)
        assert result.stderr.startswith("error: ") and says in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
    assert (db_files(db), pdf.read_bytes()) == before
    png = tmp_path / "page.png"
    for _ in range(2):  # a PNG it wrote before is simply replaced
        again = CliRunner().invoke(app, ["page", "keeper", "2", "-o", str(png),
                                         "--config", config])
        assert again.exit_code == 0, again.output


@pytest.mark.slow  # a real bench PDF
@pytest.mark.skipif(not (BENCH / "books").is_dir(), reason="../shared/bench is not here")
def test_a_bench_pdf_page_highlights_the_cited_words(tmp_path: Path) -> None:
    pdf = BENCH / "books" / "R-intro.pdf"
    cited = ("Once an object of any size has been created, new components may be added to it "
             "simply by giving it an index value outside its previous range.")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(pdf)
        hit = lib.verify_quote(cited)
        assert hit.passage is not None and hit.passage.page_start == 21
        image = lib.page_image("r-intro", hit.passage.page_start, hit.passage.text)
    assert image.page_label == "15"
    check_highlight(image, pdf, "new components")
    assert len(image.png) < 1_500_000


@pytest.mark.slow  # two CLI subprocesses: MuPDF writes to fd 1, which CliRunner does not see
def test_a_damaged_pdf_page_keeps_stdout_to_the_results(tmp_path: Path) -> None:
    """A truncated PDF still renders, but MuPDF's complaints about it were printed on stdout
    (before anything else), so `page --json` and `health --json` were not JSON."""
    import json
    import subprocess
    import sys

    data = keeper_pdf(tmp_path / "whole.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    config = str(write_config(tmp_path))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args,
                               "--config", config], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)

    assert cli("ingest", str(cut), "-q").returncode == 0
    page = cli("page", "cut", "3", "-o", str(tmp_path / "p.png"), "--json")
    assert page.returncode == 0, page.stderr
    assert json.loads(page.stdout)["page"] == 3
    health = cli("health", "cut", "--json")
    assert health.returncode == 0, health.stderr
    assert json.loads(health.stdout)[0]["slug"] == "cut"
    assert "MuPDF" not in page.stdout + page.stderr + health.stdout + health.stderr


def test_a_book_file_that_is_no_longer_a_pdf_is_one_clear_error(lib: Library,
                                                                  tmp_path: Path) -> None:
    """MuPDF opens text as a one-page document: a PDF book's file overwritten with notes was
    drawn as a page of those notes ('has pages 1–1, not 2' for its second page)."""
    (tmp_path / "keeper.pdf").write_text("# Notes\n\nNothing of the keeper here.\n")
    for page in (1, 2):
        with pytest.raises(GrimoireError, match="not a PDF any more"):
            lib.page_image("keeper", page)
