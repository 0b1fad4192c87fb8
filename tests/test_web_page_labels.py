"""The web page's ``/book/SLUG/page/P`` takes what the CLI's ``page`` takes: a physical
number, a printed label (``xii``, ``A-3``, ``App 1`` as ``App%201``), a number read as printed with
``?printed=1`` — and an unknown label is the site's error page with a 404, not a bare
"Not Found". Driven through the real app (Starlette's TestClient) over a PDF whose printed
labels are set with pymupdf, and checked against the CLI's own answer for the same page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from bs4 import BeautifulSoup
from starlette.testclient import TestClient
from typer.testing import CliRunner

from books_gen import KEEPER_PAGES, KEEPER_TOC, cli_library, html_pdf
from grimoire_beholder.cli.entry import app as cli_app
from grimoire_beholder.library import Library
from grimoire_beholder.web.access import Access
from grimoire_beholder.web.launch import build_app
from helpers import GARDEN_CHAPTERS, write_markdown_book

TOKEN = "test-token-0123456789"
PORT = 8766
# physical page → printed label, as set in the PDF below
LABELS = {1: "xi", 2: "xii", 3: "1", 4: "2", 5: "A-3", 6: "App 1"}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web-labels")
    plain = html_pdf(root / "plain.pdf", [*KEEPER_PAGES, "<p>Appendix A.</p>",
                                          "<p>Appendix B.</p>"], KEEPER_TOC, labels=False)
    with pymupdf.open(plain) as doc:
        doc.set_page_labels([
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 11},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
            {"startpage": 4, "prefix": "A-", "style": "D", "firstpagenum": 3},
            {"startpage": 5, "prefix": "App ", "style": "D", "firstpagenum": 1}])
        doc.save(root / "labelled.pdf")
    garden = write_markdown_book(root / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    return cli_library(root, root / "labelled.pdf", garden)


@pytest.fixture(scope="module")
def client(config: Path) -> Iterator[TestClient]:
    with Library.open(config, read_only=True) as lib:
        assert lib.book("labelled").page_labels == LABELS  # the PDF is what the test says
        c = TestClient(build_app(lib, Access(TOKEN, "127.0.0.1", PORT)),
                       base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)
        assert c.get(f"/?token={TOKEN}").status_code == 200
        yield c


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def cli_page(config: Path, tmp_path: Path, *args: str) -> dict:
    """What ``grimoire-beholder page labelled … --json`` says it drew."""
    result = CliRunner().invoke(cli_app, ["page", "labelled", *args, "-o",
                                          str(tmp_path / "p.png"), "--json",
                                          "--config", str(config)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(("asked", "cli_args", "physical"), [
    ("xii", ["xii"], 2), ("A-3", ["A-3"], 5), ("App%201", ["App 1"], 6), ("3", ["3"], 3),
    ("2?printed=1", ["2", "--printed"], 4)])
def test_a_page_is_named_as_the_cli_names_it(client: TestClient, config: Path, tmp_path: Path,
                                             asked: str, cli_args: list[str],
                                             physical: int) -> None:
    assert cli_page(config, tmp_path, *cli_args)["page"] == physical
    r = client.get(f"/book/labelled/page/{asked}")
    assert r.status_code == 200, r.text
    page = soup(r.text)
    assert page.find("h1").get_text(" ", strip=True) == (
        f"Page {physical} (printed {LABELS[physical]})")
    # the image and the pages around it are linked by physical number, and they open
    src = page.select_one("figure img")["src"]
    assert src == f"/book/labelled/page/{physical}.png"
    image = client.get(src)
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG\r\n\x1a\n")
    for rel, other in (("prev", physical - 1), ("next", physical + 1)):
        link = page.find("a", rel=rel)
        if 1 <= other <= len(LABELS):
            assert link["href"] == f"/book/labelled/page/{other}"
            assert client.get(link["href"]).status_code == 200
        else:
            assert link is None


def test_the_image_url_takes_a_label_too(client: TestClient, config: Path) -> None:
    with Library.open(config, read_only=True) as lib:
        expected = lib.page_image("labelled", 5).png
    for asked in ("A-3.png", "5.png"):
        r = client.get(f"/book/labelled/page/{asked}")
        assert r.status_code == 200 and r.headers["content-type"] == "image/png", asked
        assert r.content == expected, asked


@pytest.mark.parametrize(("path", "says"), [
    ("/book/labelled/page/xx", "'labelled' has no page printed as 'xx'"),
    ("/book/labelled/page/A-9", "'labelled' has no page printed as 'A-9'"),
    ("/book/labelled/page/xx.png", "'labelled' has no page printed as 'xx'"),
    ("/book/labelled/page/7?printed=1", "'labelled' has no page printed as '7'"),
    ("/book/labelled/page/7", "'labelled' has pages 1–6, not 7"),
    ("/book/the-garden-book/page/xii", "no page images for this format")])
def test_an_unknown_page_is_the_sites_error_page_with_a_404(client: TestClient, path: str,
                                                            says: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, path
    assert r.headers["content-type"].startswith("text/html")
    page = soup(r.text)
    assert page.select_one("p.error").get_text().startswith(says)
    assert page.find("link", rel="stylesheet")["href"].startswith("/static/")  # the site's look
    assert page.find("a", rel="up")["href"] == "/"


@pytest.mark.parametrize("path", ["/book/labelled/page/xx", "/book/labelled/page/7",
                                  "/book/labelled/99/1"])
def test_a_part_the_book_lacks_links_back_to_the_book(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, path
    back = soup(r.text).find("a", string="Back to the book")
    assert back is not None and back["href"] == "/book/labelled"
    assert client.get(back["href"]).status_code == 200


def test_a_missing_book_links_only_to_all_books(client: TestClient) -> None:
    r = client.get("/book/no-such-book/page/xii")
    assert r.status_code == 404
    page = soup(r.text)
    assert page.find("a", string="Back to the book") is None
    assert page.find("a", rel="up")["href"] == "/"
