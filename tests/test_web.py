"""The web page at the HTTP level (Starlette's TestClient against the real app over a real
library file): the token and its cookie, Host/Origin checks, no write action, escaping of book
text, search hits whose citations are `query`'s, links that lead to the cited passage, the
PDF page as a PNG with the passage highlighted, the quotation check and the printed index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

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
from helpers import GARDEN_CHAPTERS, share_yellow, write_markdown_book

TOKEN = "test-token-0123456789"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
INDEX_PAGE = "<h1>Index</h1>" + "".join(f"<p>{line}</p>" for line in (
    "chamois leather, 1", "fog, 2", "lens, 1, 3", "logbook, 2", "oil, 1", "wick, i, 1"))
EVIL = "<script>alert('pwned')</script>"
FAR_WORD = "zyzzyvaquill"
LONG_BODY = "\n\n".join(
    f"Paragraph {i} of the long manual, about the careful trimming of wicks and the "
    f"ordering of spare parts for the lantern room. " * 4 for i in range(120)
) + f"\n\nThe last paragraph names the {FAR_WORD} beetle that eats old logbooks."


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web")
    pdf = html_pdf(root / "keeper.pdf", [*KEEPER_PAGES, INDEX_PAGE],
                   [*KEEPER_TOC, [1, "Index", 5]])
    evil = write_markdown_book(root / "evil.md", EVIL, {
        # in code spans, where Markdown keeps markup as written (raw HTML is dropped)
        "`<img src=x onerror=alert(1)>`": {"Tags & things": f"The text says `{EVIL}` plainly. "
                                                            "Ampersands & angle <brackets>."}})
    garden = write_markdown_book(root / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    long = write_markdown_book(root / "long.md", "The Long Manual",
                               {"Lanterns": {"Everything": LONG_BODY}})
    return cli_library(root, pdf, evil, garden, long)


@pytest.fixture(scope="module")
def library(config: Path) -> Iterator[Library]:
    lib = Library.open(config, read_only=True)
    yield lib
    lib.close()


def make_client(library: Library, **kwargs: str) -> TestClient:
    return TestClient(build_app(library, Access(TOKEN, "127.0.0.1", PORT)),
                      base_url=kwargs.get("base_url", BASE), follow_redirects=False)


@pytest.fixture(scope="module")
def client(library: Library) -> TestClient:
    """A client that has opened the printed URL once, so it holds the cookie."""
    c = make_client(library)
    assert c.get(f"/?token={TOKEN}").status_code == 200
    return c


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def cli_query(config: Path, question: str) -> dict:
    result = CliRunner().invoke(cli_app, ["query", question, "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- access --------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/search?q=lens", "/book/keeper", "/book/keeper/1/0",
                                  "/book/keeper/page/2.png", "/static/style.css", "/nothing"])
def test_without_the_token_every_url_is_refused(library: Library, path: str) -> None:
    c = make_client(library)
    refused = c.get(path)
    assert refused.status_code == 403 and "lens" not in refused.text
    assert "token" in refused.text  # says what to do
    wrong = c.get(path + ("&" if "?" in path else "?") + "token=not-it")
    assert wrong.status_code == 403
    c.cookies.set(f"grimoire_beholder_{PORT}", "not-it")
    assert c.get(path).status_code == 403


def test_the_token_on_any_url_is_kept_in_a_strict_httponly_cookie(library: Library) -> None:
    c = make_client(library)
    first = c.get(f"/search?q=lens&token={TOKEN}")
    assert first.status_code == 200 and "Search" in first.text
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"grimoire_beholder_{PORT}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    later = c.get("/book/keeper")  # no token in the URL: the cookie carries it
    assert later.status_code == 200 and "set-cookie" not in later.headers
    fresh = make_client(library)
    fresh.cookies.set(f"grimoire_beholder_{PORT}", TOKEN)
    assert fresh.get("/").status_code == 200


def test_other_hosts_and_origins_are_refused_even_with_the_token(library: Library) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: its Host is refused."""
    c = make_client(library)
    ok = f"/?token={TOKEN}"
    assert c.get(ok, headers={"host": "attacker.example"}).status_code == 421
    assert c.get(ok, headers={"host": f"attacker.example:{PORT}"}).status_code == 421
    assert c.get(ok, headers={"host": "127.0.0.1:9"}).status_code == 421
    assert c.get(ok, headers={"host": f"localhost:{PORT}"}).status_code == 200
    assert c.get(ok, headers={"origin": "http://attacker.example"}).status_code == 403
    assert c.get(ok, headers={"origin": BASE}).status_code == 200


def test_the_page_has_no_write_action(client: TestClient, config: Path) -> None:
    db = config.parent / "book.db"
    before = db.read_bytes()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/book/keeper").status_code == 405
    page = soup(client.get("/").text)
    assert all(f.get("method", "get").lower() == "get" for f in page.find_all("form"))
    assert db.read_bytes() == before


def test_responses_keep_to_the_page_itself(client: TestClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-content-type-options"] == "nosniff"


# -- escaping ------------------------------------------------------------------------------

def test_a_book_titled_with_script_shows_it_as_text(client: TestClient) -> None:
    pages = [client.get("/").text, client.get("/book/script-alert-pwned-script").text,
             client.get("/book/script-alert-pwned-script/0/0").text,
             client.get("/search?q=angle brackets ampersands").text]
    for html in pages:
        page = soup(html)
        assert [s.get("src") for s in page.find_all("script")] == ["/static/keys.js"]
        assert not page.find_all("img", onerror=True)
        assert EVIL in page.get_text()  # shown, as text
        assert "&lt;script&gt;alert(" in html
    section = soup(pages[2])
    assert "<img src=x onerror=alert(1)>" in section.get_text()
    assert "Ampersands & angle <brackets>." in section.find("article").get_text()


# -- books and reading ---------------------------------------------------------------------

def test_the_books_list_shows_author_type_size_and_roles(client: TestClient) -> None:
    page = soup(client.get("/").text)
    cards = {c.h2.get_text(strip=True): c.get_text(" ", strip=True)
             for c in page.select("li.card")}
    assert set(cards) == {"keeper", EVIL, "The Garden Book", "The Long Manual"}
    assert "pdf" in cards["keeper"] and "5 pages" in cards["keeper"]
    assert "index 1" in cards["keeper"] and "body 4" in cards["keeper"]
    assert "Test Author" in cards["The Garden Book"] and "markdown" in cards["The Garden Book"]
    assert "Health: not checked" in cards["keeper"]


def test_a_suggested_command_names_the_library_the_page_reads(library: Library) -> None:
    """`web --library DIR` suggested `grimoire-beholder health`, which checks another
    library (or none) when run elsewhere."""
    flags = " --library '/srv/my books'"
    with TestClient(build_app(library, Access(TOKEN, "127.0.0.1", PORT), library_flags=flags),
                    base_url=BASE) as c:
        page = soup(c.get(f"/?token={TOKEN}").text)
    hint = next(card for card in page.select("li.card") if card.h2.get_text() == "keeper")
    assert "grimoire-beholder health keeper --library '/srv/my books'" in hint.get_text()


def test_the_outline_links_every_section_and_pdf_page(client: TestClient,
                                                      library: Library) -> None:
    page = soup(client.get("/book/keeper").text)
    outline = library.outline("keeper")
    links = [a["href"] for a in page.select("ol.sections li > a:first-child")]
    assert links == [f"/book/keeper/{ch.chapter_index}/{s.section_index}"
                     for ch in outline.chapters for s in ch.sections]
    assert "/book/keeper/page/2" in [a["href"] for a in page.select("a.pagelink")]
    assert all(client.get(href).status_code == 200 for href in links)


def test_a_long_section_is_read_in_parts(client: TestClient, library: Library) -> None:
    _, first, total = library.section_part("the-long-manual", 0, 0, 1)
    assert total > 1
    page = soup(client.get("/book/the-long-manual/0/0").text)
    assert page.find("article").get_text() == first
    nxt = page.find("a", rel="next")["href"]
    assert nxt == "/book/the-long-manual/0/0?part=2"
    second = soup(client.get(nxt).text)
    assert second.find("article").get_text() == library.section_part(
        "the-long-manual", 0, 0, 2)[1]
    assert f"part 2 of {total}" in second.select_one(".citation").get_text()


def test_missing_books_sections_and_pages_say_so_with_404(client: TestClient) -> None:
    for path, words in [("/book/nope", "nope"), ("/book/keeper/9/0", "chapters 0–"),
                        ("/book/keeper/1/0?part=7", "parts 1–"),
                        ("/book/keeper/page/99", "pages 1–5"),
                        ("/book/keeper/page/99.png", "pages 1–5"),
                        ("/book/the-garden-book/page/1", "Markdown")]:
        r = client.get(path)
        assert r.status_code == 404, path
        assert words in soup(r.text).select_one(".error").get_text(), path


def test_hand_edited_numbers_that_are_not_plain_digits_are_ignored(client: TestClient) -> None:
    # '²' passes str.isdigit() but int() refuses it: a 500 before, the default view now.
    for path in ["/book/keeper/1/0?part=%C2%B2", "/book/keeper/1/0?at=%C2%B2-%C2%B3",
                 "/search?q=lens&k=%C2%B2"]:
        r = client.get(path)
        assert r.status_code == 200, path
        assert soup(r.text).select_one("main") is not None, path


def test_numbers_of_thousands_of_digits_are_no_such_page_not_a_crash(client: TestClient
                                                                    ) -> None:
    # int() refuses more than 4,300 digits: each of these was a 500 (ValueError).
    big = "9" * 5000
    for path, words in [(f"/book/keeper/{big}/0", "chapters 0–"),
                        (f"/book/keeper/1/{big}", "sections 0–"),
                        (f"/book/keeper/1/0?part={big}", "parts 1–"),
                        (f"/book/keeper/page/{big}", "pages 1–5"),
                        (f"/book/keeper/page/{big}.png", "pages 1–5")]:
        r = client.get(path)
        assert r.status_code == 404, path
        assert words in soup(r.text).select_one(".error").get_text(), path
    for path in [f"/book/keeper/1/0?at=1-{big}", f"/search?q=lens&k={big}"]:
        r = client.get(path)
        assert r.status_code == 200, path
        assert soup(r.text).select_one("main") is not None, path
    assert len(hits_of(client.get(f"/search?q=lens&k=0{'0' * 40}1").text)) == 1


# -- search --------------------------------------------------------------------------------

def hits_of(html: str) -> list[BeautifulSoup]:
    return soup(html).select("li.hit")


def test_search_hits_carry_the_citations_query_prints(client: TestClient,
                                                      config: Path) -> None:
    for question in ("polish the lens with chamois", "slugs eat lettuce at night"):
        r = client.get("/search", params={"q": question})
        assert r.status_code == 200
        shown = [h.select_one("a.cite").get_text() for h in hits_of(r.text)]
        expected = [h["citation"] for h in cli_query(config, question)["results"]]
        assert shown and shown == expected


def test_hits_mark_the_query_words_and_name_their_role(client: TestClient) -> None:
    hits = hits_of(client.get("/search", params={"q": "fog logbook", "k": "10"}).text)
    marked = {m.get_text().lower() for h in hits for m in h.select(".passage mark")}
    assert "logbook" in marked and marked <= {"fog", "logbook", "logbooks"}
    roles = {h.select_one(".badge").get_text() for h in hits if h.select_one(".badge")}
    assert roles == {"index"}  # the printed index page is a hit, and says what it is


def test_a_hit_links_to_its_section_with_the_passage_marked(client: TestClient) -> None:
    [hit, *_] = hits_of(client.get("/search", params={"q": "chamois leather lens"}).text)
    href = hit.select_one("a.cite")["href"]
    assert href.startswith("/book/keeper/1/0?") and href.endswith("#passage")
    section = soup(client.get(href).text)
    passage = section.select_one("mark.passage").get_text()
    assert "Polish the great lens every morning with a soft cloth of chamois" in passage
    assert "lens" in [m.get_text() for m in section.select("mark.passage mark")]


def test_a_hit_deep_in_a_long_section_opens_the_part_that_holds_it(client: TestClient
                                                                    ) -> None:
    [hit, *_] = hits_of(client.get("/search", params={"q": FAR_WORD}).text)
    href = hit.select_one("a.cite")["href"]
    assert "part=" in href and "part=1&" not in href
    page = soup(client.get(href).text)
    assert FAR_WORD in page.select_one("mark.passage").get_text()


def test_a_hit_links_to_its_pdf_page_as_a_png_with_the_passage_highlighted(
        client: TestClient) -> None:
    [hit, *_] = hits_of(client.get("/search", params={"q": "chamois leather lens"}).text)
    page_href = hit.select_one("a.pagelink")["href"]
    assert page_href.startswith("/book/keeper/page/2?highlight=")
    page = soup(client.get(page_href).text)
    src = page.select_one("figure img")["src"]
    assert urlsplit(src).path == "/book/keeper/page/2.png"
    assert "chamois" in parse_qs(urlsplit(src).query)["highlight"][0]
    image = client.get(src)
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert image.headers["x-highlight-found"] == "true"
    pix = pymupdf.Pixmap(image.content)
    assert share_yellow(pix, (0, 0, pix.width, pix.height)) > 0.01  # some of it is marked


def test_filters_narrow_the_hits(client: TestClient) -> None:
    def books(**params: str) -> set[str]:
        r = client.get("/search", params={"q": "water", **params})
        assert r.status_code == 200
        return {a.get_text() for h in hits_of(r.text) for a in h.select(".links a")[-1:]}

    assert books(book="the-garden-book") == {"The Garden Book"}
    assert books(type="pdf") == {"keeper"}
    assert books(author="Test Author") <= {"The Garden Book", EVIL, "The Long Manual"}
    index_only = hits_of(client.get("/search", params={"q": "lens", "role": "index"}).text)
    assert index_only and all(h.select_one(".badge").get_text() == "index"
                              for h in index_only)
    form = soup(client.get("/search", params={"q": "lens", "book": "keeper"}).text)
    assert form.select_one('select[name="book"] option[selected]')["value"] == "keeper"
    unknown = client.get("/search", params={"q": "lens", "book": "no-such-book"})
    assert unknown.status_code == 404 and "no-such-book" in unknown.text


def test_a_question_the_library_does_not_cover_says_so(client: TestClient,
                                                       config: Path) -> None:
    question = "quantum chromodynamics of zeppelins"
    assert cli_query(config, question)["low_confidence"]
    note = soup(client.get("/search", params={"q": question}).text).select_one(".note.warn")
    assert note is not None and "probably does not cover" in note.get_text()
    covered = soup(client.get("/search", params={"q": "polish the lens with chamois"}).text)
    assert covered.select_one(".note.warn") is None


# -- quotation check and printed index -----------------------------------------------------

def test_the_quotation_check_finds_it_and_links_to_the_place(client: TestClient) -> None:
    found = soup(client.get("/quote", params={
        "text": "polish the great lens every morning with a soft cloth"}).text)
    verdict = found.select_one(".verdict")
    assert "Found, word for word" in verdict.get_text()
    link = verdict.select_one("a.cite")
    assert link.get_text().startswith("keeper · 1 The Lamp") and "#passage" in link["href"]
    assert "/book/keeper/page/2?highlight=" in verdict.select_one("a.pagelink")["href"]
    close = soup(client.get("/quote", params={
        "text": "polish the great lens every evening with a soft cloth"}).text)
    assert "with differences" in close.select_one(".verdict").get_text()
    assert "evening" in close.select_one(".differences").get_text()
    missing = soup(client.get("/quote", params={"text": "a sentence no book holds at all"}
                              ).text)
    assert "Not found" in missing.select_one(".verdict").get_text()


def test_the_printed_index_lookup_shows_pages_and_sections(client: TestClient) -> None:
    page = soup(client.get("/lookup", params={"term": "lens"}).text)
    [entry] = page.select("ul.entries > li")
    locations = [a.get_text() for a in entry.select("a.pagelink")]
    assert locations == ["p. 2 (printed 1)", "p. 4 (printed 3)"]
    sections = [a["href"] for a in entry.select("a") if "/page/" not in a["href"]][1:]
    assert sections == ["/book/keeper/1/0?q=lens", "/book/keeper/3/0?q=lens"]
    none = client.get("/lookup", params={"term": "zeppelin"})
    assert none.status_code == 200 and "No printed index names" in none.text
    bad = client.get("/lookup", params={"term": "..."})
    assert bad.status_code == 400 and "at least one letter" in bad.text


# -- the command's own errors --------------------------------------------------------------

def test_web_on_a_missing_library_or_a_taken_port_fails_with_one_line(
        config: Path, tmp_path: Path) -> None:
    import socket

    missing = CliRunner().invoke(cli_app, ["web", "--no-browser", "--library",
                                           str(tmp_path / "nowhere")])
    assert missing.exit_code != 0 and missing.stdout == ""
    assert missing.output.startswith("error: ") and len(missing.output.splitlines()) <= 2
    assert not (tmp_path / "nowhere").exists()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(cli_app, ["web", "--no-browser", "--port", str(port),
                                            "--config", str(config)])
    assert busy.exit_code == 1 and busy.stdout == ""
    assert f"cannot listen on 127.0.0.1:{port}" in busy.output
