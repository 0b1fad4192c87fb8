"""The page's Host and Origin check compares names, not spellings, as ``serve-mcp --http``
does: ``LOCALHOST.:P`` or ``127.0.0.1.:P`` (another case, a fully qualified name's final
dot) is the page's own host, while a foreign host is still refused before the token is read.
Real requests to the real ``web`` command."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from helpers import run_cli, write_markdown_book
from http_helpers import raw_status
from test_web_browser import web_server

pytestmark = pytest.mark.slow  # a server started and stopped


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """A running ``web --no-browser`` over a one-book library: its port and token."""
    root = tmp_path_factory.mktemp("web-hosts")
    config = root / "config.toml"
    config.write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    book = write_markdown_book(root / "tides.md", "Tides", {"Sea": {"Currents": "Currents."}})
    assert run_cli("ingest", str(book), "-q", "--config", str(config)).returncode == 0
    with web_server(config) as (port, url, stop):
        yield port, url.rpartition("?token=")[2]
    assert stop.returncode == 0, stop.stderr


def _status(port: int, token: str, host: str, origin: str | None = None) -> int:
    headers = {"host": host, **({"origin": origin} if origin else {})}
    return httpx.get(f"http://127.0.0.1:{port}/", params={"token": token}, headers=headers,
                     timeout=60).status_code


@pytest.mark.parametrize("name", ["LOCALHOST", "localhost.", "LocalHost.", "127.0.0.1."])
def test_the_own_host_in_another_case_or_with_a_final_dot_is_served(
        served: tuple[int, str], name: str) -> None:
    port, token = served
    assert _status(port, token, f"{name}:{port}") == 200
    assert _status(port, token, f"{name}:{port}", origin=f"HTTP://{name}:{port}") == 200


@pytest.mark.parametrize("host", ["evil.example:{port}", "EVIL.example.:{port}",
                                  "localhost..:{port}", "127.0.0.1.:9", "localhost.evil:{port}"])
def test_a_foreign_host_is_still_refused(served: tuple[int, str], host: str) -> None:
    port, token = served
    assert _status(port, token, host.format(port=port)) == 421


def test_a_foreign_origin_is_still_refused(served: tuple[int, str]) -> None:
    port, token = served
    for origin in ("http://evil.example", f"http://evil.example.:{port}",
                   f"https://localhost.:{port}"):
        assert _status(port, token, f"localhost:{port}", origin=origin) == 403


def test_a_request_with_two_origins_or_two_hosts_is_refused(served: tuple[int, str]) -> None:
    """Only the first Origin was checked: the page's own, then a foreign one, was served."""
    port, token = served
    own, foreign = f"http://127.0.0.1:{port}", "http://evil.example"
    host = ("host", f"127.0.0.1:{port}")
    target = f"/?token={token}"
    assert raw_status(port, target, [host, ("origin", own)]) == 200
    for pair in ((own, foreign), (foreign, own), (own, own)):
        assert raw_status(port, target, [host, *(("origin", o) for o in pair)]) == 403, pair
    for hosts in ((f"127.0.0.1:{port}", "evil.example"), (f"127.0.0.1:{port}",) * 2):
        assert raw_status(port, target, [("host", h) for h in hosts]) == 400, hosts
