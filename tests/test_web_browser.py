"""`grimoire-beholder web` as a person meets it: the real command in a subprocess over a
library of two bench books, then Debian's Chromium (headless, through chromedriver) loading
the page, searching, following a hit to its section and its page image, at a phone's width
and a wide screen, light and dark.

With GRIMOIRE_WEB_SCREENSHOTS=DIR the browser test also saves the README's screenshots there.
Skipped when the bench books, Chromium or chromedriver are missing (.ci/run installs them
and sets GRIMOIRE_TEST_REQUIRE_BROWSER, so there a missing browser fails).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app as cli_app
from helpers import BENCH
from mcp_helpers import write_config

pytestmark = pytest.mark.slow

R_INTRO = BENCH / "books" / "R-intro.pdf"
ART_OF_WAR = BENCH / "books" / "sun-tzu_the-art-of-war_lionel-giles.epub"
EVIL_NAME = "<script>alert(1)</script> The Art of War"
QUESTION = "how do I fit a linear regression model"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")


def cli(config: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli_app, [*args, "--config", str(config)])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (R_INTRO.is_file() and ART_OF_WAR.is_file()):
        pytest.skip("the bench books are not beside the repo (../shared/bench/books)")
    root = tmp_path_factory.mktemp("web-bench")
    path = write_config(root)
    cli(path, "ingest", str(R_INTRO), "--quiet")
    cli(path, "ingest", str(ART_OF_WAR), "--name", EVIL_NAME, "--quiet")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def web_server(config: Path) -> Iterator[tuple[int, str, subprocess.CompletedProcess[str]]]:
    """``web --no-browser`` on a free port for ``config``'s library: its port, the URL it
    printed, and (filled once it is stopped by Ctrl-C on leaving) how it ended."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "grimoire_beholder", "web", "--no-browser", "--port",
         str(port), "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = subprocess.CompletedProcess(proc.args, -1, "", "")
    try:
        yield port, first_line(proc), stop
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop, not an "interrupted" error
        stop.stdout, stop.stderr = proc.communicate(timeout=60)
        stop.returncode = proc.returncode


def first_line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The first line the server prints on stdout (its URL), or fail with its stderr."""
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(proc.stdout.readline()  # type: ignore[union-attr]
                                                          ), daemon=True)
    reader.start()
    reader.join(timeout)
    if not found or not found[0]:
        proc.kill()
        pytest.fail(f"web printed no URL: {proc.communicate()[1]}")
    return found[0].strip()


@pytest.fixture(scope="module")
def served(config: Path) -> Iterator[tuple[int, str]]:
    """A running `web --no-browser --port P`: its port and the URL it printed."""
    with web_server(config) as (port, url, stop):
        yield port, url
    assert stop.returncode == 0, stop.stderr
    assert stop.stderr.splitlines()[-1] == "Stopped." and "error" not in stop.stderr


def test_web_prints_a_token_url_and_serves_search_hits_pages_and_escaped_titles(
        served: tuple[int, str], config: Path) -> None:
    port, url = served
    match = re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=([\w-]{{20,}})", url)
    assert match, url
    token, base = match.group(1), f"http://127.0.0.1:{port}"
    assert httpx.get(f"{base}/search", params={"q": QUESTION}).status_code == 403
    with httpx.Client(base_url=base, timeout=60) as client:
        page = client.get("/search", params={"q": QUESTION, "token": token})
        assert page.status_code == 200
        hits = BeautifulSoup(page.text, "html.parser").select("li.hit")
        expected = json.loads(cli(config, "query", QUESTION, "--json").stdout)["results"]
        assert [h.select_one("a.cite").get_text() for h in hits] == [
            e["citation"] for e in expected]
        assert client.get("/").status_code == 200  # the cookie carries the token now
        viewer = client.get(hits[0].select_one("a.pagelink")["href"])
        src = BeautifulSoup(viewer.text, "html.parser").select_one("figure img")["src"]
        image = client.get(src)
        assert image.headers["content-type"] == "image/png"
        assert image.content.startswith(b"\x89PNG\r\n\x1a\n")
        books = BeautifulSoup(client.get("/").text, "html.parser")
        assert EVIL_NAME in [h.get_text(strip=True) for h in books.select("li.card h2")]
        assert [s.get("src") for s in books.find_all("script")] == ["/static/keys.js"]


# -- in a real browser ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("GRIMOIRE_TEST_REQUIRE_BROWSER"):
            pytest.fail("GRIMOIRE_TEST_REQUIRE_BROWSER is set but Chromium or chromedriver "
                        "is missing")
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium "
                    "chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not download
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Any, css: str, timeout: float = 60) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def look(driver: Any, width: int, dark: bool) -> None:
    """The window at ``width`` px and the system's colour scheme light or dark."""
    driver.set_window_size(width, 900)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def snap(driver: Any, name: str) -> None:
    folder = os.environ.get("GRIMOIRE_WEB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def test_a_browser_searches_follows_a_hit_and_sees_the_section_and_the_page(
        served: tuple[int, str], browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _, url = served
    look(browser, 1100, dark=False)
    browser.get(url)
    wait_for(browser, "li.card")
    assert "token" not in browser.current_url  # kept in the cookie, out of the address bar
    assert EVIL_NAME in browser.find_element(By.TAG_NAME, "main").text
    snap(browser, "web-books-wide-light")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("/")  # the key focuses the search box
    box = browser.switch_to.active_element
    assert box.get_attribute("name") == "q"
    box.send_keys(QUESTION + Keys.ENTER)
    wait_for(browser, "li.hit")
    assert "/search?q=" in browser.current_url
    citations = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "li.hit a.cite")]
    assert citations and all(c.startswith("R-intro") for c in citations[:3])
    snap(browser, "web-search-wide-light")
    first = browser.find_element(By.CSS_SELECTOR, "li.hit a.cite").get_attribute("href")
    browser.find_element(By.TAG_NAME, "body").send_keys("j")  # j: the first hit
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # Enter follows it
    wait_for(browser, "article#text")
    assert browser.current_url == first
    passage = browser.find_element(By.CSS_SELECTOR, "mark.passage").text
    assert passage and passage in browser.find_element(By.ID, "text").text
    assert browser.find_elements(By.CSS_SELECTOR, "mark.passage mark")  # query words
    snap(browser, "web-section-wide-light")
    browser.back()
    wait_for(browser, "li.hit a.pagelink").click()
    image = wait_for(browser, "figure img")
    loaded = browser.execute_script(
        "const img = arguments[0]; return img.decode().then(() => img.naturalWidth);", image)
    assert loaded > 200
    snap(browser, "web-page-wide-light")


def test_the_page_fits_a_phone_and_follows_the_dark_scheme(served: tuple[int, str],
                                                           browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _, url = served
    base = url.split("/?")[0]
    browser.get(url)
    backgrounds = {}
    for dark in (False, True):
        look(browser, 400, dark=dark)
        browser.get(f"{base}/search?q=linear+models")
        wait_for(browser, "li.hit")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 400, "nothing runs off a phone-width window"
        backgrounds[dark] = browser.execute_script(
            "return getComputedStyle(document.body).backgroundColor")
        snap(browser, f"web-search-phone-{'dark' if dark else 'light'}")
        browser.find_element(By.CSS_SELECTOR, "li.hit a.cite").click()
        wait_for(browser, "article#text")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 400
    assert backgrounds[False] != backgrounds[True]
    look(browser, 1100, dark=True)
    browser.get(f"{base}/search?q=linear+models")
    wait_for(browser, "li.hit")
    snap(browser, "web-search-wide-dark")
