"""A request with two ``Host`` headers is refused (400), with two ``Origin`` headers 403,
by ``serve-mcp --http``'s gate and by the web page's check themselves (both checked the
first of each only). The default HTTP parser (h11) already refuses two Hosts, but uvicorn takes
httptools instead when it is installed, so the gate and the check are called here as
uvicorn calls them, with the repeated headers handed on. The real servers answering real
requests with repeats: test_mcp_http_origin_spellings.py, test_web_hosts.py."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request

from grimoire_beholder.mcp_server.http_serving import HostOriginGate, security_settings
from grimoire_beholder.mcp_server.starting import Bind
from grimoire_beholder.web.access import Access

PORT = 8765
OWN = f"127.0.0.1:{PORT}".encode()
REPEATS = [
    [(b"host", OWN), (b"host", b"evil.example")],
    [(b"host", b"evil.example"), (b"host", OWN)],
    [(b"host", OWN), (b"host", OWN)],
    [(b"host", OWN), (b"origin", b"http://" + OWN), (b"origin", b"http://evil.example")],
]


def _scope(headers: list[tuple[bytes, bytes]], path: str = "/mcp") -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
            "query_string": b"token=t", "headers": headers, "scheme": "http",
            "http_version": "1.1", "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 1),
            "root_path": ""}


async def _gate_status(headers: list[tuple[bytes, bytes]]) -> int:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    bind = Bind("127.0.0.1", PORT)
    await HostOriginGate(app, security_settings(bind, PORT))(_scope(headers), receive, send)
    return int(sent[0]["status"])


@pytest.mark.anyio
@pytest.mark.parametrize("headers", REPEATS)
async def test_the_mcp_gate_refuses_a_repeated_host_or_origin(
        headers: list[tuple[bytes, bytes]]) -> None:
    assert await _gate_status([(b"host", OWN)]) == 200
    expected = 403 if headers[-1][0] == b"origin" else 400
    assert await _gate_status(headers) == expected


@pytest.mark.parametrize("headers", REPEATS)
def test_the_page_refuses_a_repeated_host_or_origin(headers: list[tuple[bytes, bytes]]) -> None:
    access = Access("t", "127.0.0.1", PORT)
    assert access.refusal(Request(_scope([(b"host", OWN)], "/"))) is None
    refused = access.refusal(Request(_scope(headers, "/")))
    expected = 403 if headers[-1][0] == b"origin" else 400
    assert refused is not None and refused.status_code == expected
