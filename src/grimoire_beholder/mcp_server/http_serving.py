"""``serve-mcp --http [HOST:]PORT``: the same tools over the SDK's Streamable HTTP transport
(endpoint ``/mcp``), served by uvicorn, for assistants on other machines and remote
connectors. What can refuse to start — the options, the library, its tokens, the socket —
is checked and opened before this module (and the SDK with it) is imported
(``starting.start_http``); :func:`run_http` serves it.

Safe by default (ARCHITECTURE.md, "The MCP server over HTTP"):

* **Loopback unless told.** ``PORT`` alone binds 127.0.0.1; another address must be named,
  and serving beyond this machine without TLS prints a warning (tokens would cross the
  network in clear text).
* **A token on every request** (``http_auth.py``), checked by the SDK: 401 without one.
* **Host and Origin first.** Before anything else a request's ``Host`` must name the bound
  address (or localhost on loopback, or an ``--allowed-host``) — 421 otherwise, so a
  DNS-rebinding page that points its own name here is refused — and an ``Origin``, when a
  browser sends one, must be this server's own or an ``--allowed-origin`` (403 otherwise).
  The SDK's ``TransportSecurityMiddleware`` makes both checks, here and again in its
  transport; a request with two of either is refused here (400 for Host, 403 for Origin).
* **TLS** directly (``--tls-cert``/``--tls-key``, uvicorn's) or from a reverse proxy in front
  (README shows nginx and Caddy), which then names its public host with ``--allowed-host``.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from grimoire_beholder.hosts import allowed_origin, as_compared, host_spellings, repeated
from grimoire_beholder.mcp_server.starting import LOOPBACK, Bind

if TYPE_CHECKING:
    from grimoire_beholder.access import TokenChecker
    from grimoire_beholder.library import Library
    from grimoire_beholder.mcp_server.starting import HttpStart

log = logging.getLogger("grimoire_beholder.mcp")

ENDPOINT = "/mcp"
# What an --allowed-origin page's fetch() sends and must be able to read (CORS): a browser
# asks first, without the token, in a preflight the server answers before checking it.
BROWSER_HEADERS = ["authorization", "content-type", "accept", "mcp-session-id",
                   "mcp-protocol-version", "last-event-id"]
BROWSER_READS = ["mcp-session-id", "mcp-protocol-version", "www-authenticate"]


def security_settings(bind: Bind, port: int, allowed_hosts: Sequence[str] = (),
                      allowed_origins: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host values and Origins this server answers: its bound address (and localhost
    names on loopback) with its port, each ``--allowed-host`` (with any port unless it names
    one), and their http/https origins plus each ``--allowed-origin``."""
    names = ([LOOPBACK, "localhost", "[::1]"] if bind.loopback else []) + [
        bind.authority(port).rpartition(":")[0]]
    hosts = [f"{name.lower()}:{port}" for name in dict.fromkeys(names)]
    for given in allowed_hosts:
        for host in host_spellings(given):
            hosts += [host] if host.rpartition(":")[2].isdigit() else [host, f"{host}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    origins += [origin for given in allowed_origins for origin in allowed_origin(given)]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)


class HostOriginGate:
    """ASGI middleware: the SDK's Host/Origin check on every HTTP request, before the
    token is looked at (a refused request learns nothing more).

    A request with two ``Host`` headers is refused with 400, with two ``Origin`` headers
    with 403 (the SDK checks the first only). The app behind sees Host and Origin as
    compared (:func:`_host_and_origin_lowered`); an ``Access-Control-Allow-Origin`` it
    answers with gets the request's Origin back as sent, since a browser takes the answer
    only when it is the Origin byte for byte (``https://app.example.``, final dot kept)."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app = app
        self.check = TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            twice = repeated(scope.get("headers") or [])
            if twice is not None:
                doubled = Response(f"More than one {twice.title()} header",
                                   status_code=400 if twice == "host" else 403)
                await doubled(scope, receive, send)
                return
            sent = dict(scope.get("headers") or []).get(b"origin")
            scope = _host_and_origin_lowered(scope)
            refused = await self.check.validate_request(Request(scope), is_post=False)
            if refused is not None:
                await refused(scope, receive, send)
                return
            compared = dict(scope["headers"]).get(b"origin")
            if sent is not None and sent != compared:
                send = _origin_echoed_as_sent(send, compared, sent)
        await self.app(scope, receive, send)


def _origin_echoed_as_sent(send: Send, compared: bytes | None, sent: bytes) -> Send:
    """``send`` with an ``Access-Control-Allow-Origin: compared`` header written as
    ``sent``."""

    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [(name, sent if name == b"access-control-allow-origin"
                        and value == compared else value)
                       for name, value in message.get("headers") or []]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _host_and_origin_lowered(scope: Scope) -> Scope:
    """``scope`` with its Host and Origin headers as :func:`hosts.as_compared` writes them
    (lower case, without a fully qualified name's final dot), so ``Host: LOCALHOST.:8765``
    is this server's name, while the SDK's check (here and inside its app) compares the
    text as it is."""
    headers = scope.get("headers") or []

    def normal(value: bytes) -> bytes:
        return as_compared(value.decode("latin-1")).encode("latin-1")

    if not any(name in (b"host", b"origin") and value != normal(value)
               for name, value in headers):
        return scope
    lowered = [(name, normal(value) if name in (b"host", b"origin") else value)
               for name, value in headers]
    return {**scope, "headers": lowered}


class OutageAnswer:
    """ASGI middleware: a request whose token could not be checked because the library's
    database did not answer (``http_auth.OUTAGE``: a PostgreSQL server restarting) gets 503
    with ``Retry-After`` and the reason in one line, instead of a 401 that would tell the
    client its token is bad."""

    RETRY_AFTER_S = 5

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from grimoire_beholder.mcp_server.http_auth import OUTAGE

        reasons: list[str] = []
        OUTAGE.set(reasons)
        replaced = False

        async def sending(message: MutableMapping[str, Any]) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and reasons:
                replaced = True
                body = json.dumps({"error": "temporarily_unavailable",
                                   "error_description": "the library's database did not "
                                   f"answer; try again: {reasons[0]}"}).encode()
                await send({"type": "http.response.start", "status": 503, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", str(self.RETRY_AFTER_S).encode())]})
                await send({"type": "http.response.body", "body": body})
            elif not replaced:
                await send(message)

        await self.app(scope, receive, sending)


def run_http(start: HttpStart) -> None:
    """Serve what :func:`starting.start_http` checked and opened over Streamable HTTP until
    interrupted; the server's lifespan closes the library, and the socket and the token
    checker are closed here."""
    import uvicorn

    # Ctrl-C from here on stops the server as it does once uvicorn listens for it itself:
    # one "stopped" line, exit 0. Between the "serving" line and uvicorn's own handler (and
    # inside asyncio's start) a KeyboardInterrupt left a traceback, a "never awaited"
    # warning or the "interrupted" line of a writing command, by luck of timing.
    interrupted: list[uvicorn.Server] = []
    stopping: list[int] = []

    def stop(signum: int, frame: object) -> None:
        stopping.append(signum)
        for server in interrupted:
            server.should_exit = True

    previous = signal.signal(signal.SIGINT, stop)
    bind, port, tls = start.bind, start.port, start.tls
    scheme = "https" if tls else "http"
    url = f"{scheme}://{bind.authority(port)}{ENDPOINT}"
    try:
        app = http_app(start.library, start.checker, bind, port, scheme=scheme,
                       allowed_hosts=start.allowed_hosts,
                       allowed_origins=start.allowed_origins)
    except BaseException:
        signal.signal(signal.SIGINT, previous)
        start.close()
        raise
    library = start.library
    where = (library.server.location if library.server is not None
             else library.config.database_path)
    _tell(f"serving {where} on {url} ({start.tokens} token(s); "
          f"`grimoire-beholder token list` shows them)")
    if not bind.loopback:
        _tell(f"warning: listening beyond this machine on {bind.authority(port)}"
              + ("" if tls else "; without --tls-cert/--tls-key the tokens cross the "
                 "network in clear text: use TLS here or a TLS reverse proxy in front"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=3, **tls)
    server = uvicorn.Server(config)
    interrupted.append(server)
    try:
        if not stopping:
            # uvicorn restores ``stop`` as it ends and raises the Ctrl-C it caught again
            server.run(sockets=[start.sock])
        else:  # never served: the lifespan that closes the library did not run
            library.close()
    except KeyboardInterrupt:  # a second Ctrl-C forcing the exit
        stopping.append(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
        start.sock.close()
        start.checker.close()
    if stopping:  # uvicorn has closed the sessions; nothing to resume
        _tell("stopped")


def http_app(library: Library, checker: TokenChecker, bind: Bind, port: int, *,
             scheme: str = "http", allowed_hosts: Sequence[str] = (),
             allowed_origins: Sequence[str] = ()) -> ASGIApp:
    """The whole HTTP application: the Host/Origin gate in front of the SDK's Streamable
    HTTP app of ``create_server`` with the library's tokens (its lifespan closes
    ``library``)."""
    from grimoire_beholder.mcp_server.http_auth import TokenAuth
    from grimoire_beholder.mcp_server.server import create_server

    auth = TokenAuth.of(checker, f"{scheme}://{bind.authority(port)}")
    server = create_server(lambda: library, auth=auth)
    settings = security_settings(bind, port, allowed_hosts, allowed_origins)
    app: ASGIApp = server.streamable_http_app(transport_security=settings, host=bind.host)
    # as the gate writes them: it hands on the request's Origin lowered, without a final
    # dot, so an origin given as HTTPS://App.Example or https://bücher.example matches (and
    # the gate gives the answer's Access-Control-Allow-Origin back the Origin as sent)
    pages = list(dict.fromkeys(o for given in allowed_origins for o in allowed_origin(given)))
    if pages:  # after the gate (a foreign origin is refused first), before the token
        app = CORSMiddleware(app, allow_origins=pages, allow_methods=["GET", "POST", "DELETE"],
                             allow_headers=BROWSER_HEADERS, expose_headers=BROWSER_READS,
                             max_age=600)
    return HostOriginGate(OutageAnswer(app), settings)


def _tell(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
