"""An ``--allowed-origin`` given in another spelling — upper case, a non-ASCII name, a fully
qualified name's final dot — lets that origin's pages call ``serve-mcp --http`` as a browser
requires: the Host/Origin gate already compared names, not spellings, and the CORS answers
(the preflight, ``Access-Control-Allow-Origin``) now do too. A real server process, raw HTTP
as a browser sends it (the origin as its URL parser writes it: lower case, punycode)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from http_helpers import HttpServer, initialize, make_token, raw_status
from mcp_helpers import folder_library

pytestmark = pytest.mark.slow  # a real server process

# (as given to --allowed-origin, as a browser on that page sends it)
SPELLINGS = [
    ("HTTPS://App.Example.test", "https://app.example.test"),
    ("https://bücher.example.test", "https://xn--bcher-kva.example.test"),
    ("https://dotted.example.test.", "https://dotted.example.test"),
    ("http://Port.Example.test:8443/", "http://port.example.test:8443"),
    # a page opened at the fully qualified name: its Origin keeps the dot, and a browser
    # takes an Access-Control-Allow-Origin only if it is that Origin byte for byte
    ("https://fqdn.example.test", "https://fqdn.example.test."),
    ("https://dotted.example.test.", "https://dotted.example.test."),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, str]]:
    config: Path = folder_library(tmp_path_factory.mktemp("origins") / "lib")
    token = make_token(config, "reader")
    extra = [arg for given, _ in SPELLINGS for arg in ("--allowed-origin", given)]
    server = HttpServer(config, *extra)
    try:
        yield server, token
    finally:
        server.close()


@pytest.mark.parametrize(("given", "sent"), SPELLINGS, ids=[f"{g} {s}" for g, s in SPELLINGS])
def test_a_page_of_an_origin_given_in_another_spelling_can_call_the_server(
        served: tuple[HttpServer, str], given: str, sent: str) -> None:
    server, token = served
    asked = {"origin": sent, "access-control-request-method": "POST",
             "access-control-request-headers": "authorization, content-type"}
    preflight = httpx.options(server.url, headers=asked, timeout=60)
    assert preflight.status_code == 200, (given, preflight.text)
    assert preflight.headers.get("access-control-allow-origin") == sent
    reply = initialize(server.url, token, origin=sent)
    assert reply.status_code == 200, reply.text
    assert reply.headers.get("access-control-allow-origin") == sent


def test_a_foreign_origin_still_gets_no_cors_answer(served: tuple[HttpServer, str]) -> None:
    server, token = served
    for origin in ("https://evil.example.test", "https://app.example.test.evil.test",
                   "http://app.example.test"):
        preflight = httpx.options(server.url, timeout=60, headers={
            "origin": origin, "access-control-request-method": "POST"})
        assert preflight.status_code == 403, origin
        assert "access-control-allow-origin" not in preflight.headers
        assert initialize(server.url, token, origin=origin).status_code == 403


def test_a_request_with_two_origins_or_two_hosts_is_refused(
        served: tuple[HttpServer, str]) -> None:
    """Only the first Origin was checked: an allowed one, then a foreign one, was served
    (and the other way round refused), whichever of them the app behind would read."""
    server, token = served
    port = int(server.authority.rpartition(":")[2])
    own = [("host", server.authority), ("authorization", f"Bearer {token}")]
    allowed, foreign = "https://app.example.test", "https://evil.example.test"
    assert raw_status(port, "/mcp", [*own, ("origin", allowed)]) != 403  # served: 405/406
    for pair in ((allowed, foreign), (foreign, allowed), (allowed, allowed)):
        assert raw_status(port, "/mcp", [*own, *(("origin", o) for o in pair)]) == 403, pair
    for hosts in ((server.authority, "evil.example.test"), (server.authority,) * 2):
        headers = [*((("host", h)) for h in hosts), ("authorization", f"Bearer {token}")]
        assert raw_status(port, "/mcp", headers) == 400, hosts
