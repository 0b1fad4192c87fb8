"""Who may read the page: the token, the cookie that keeps it, and Host/Origin checks.

The rules (ARCHITECTURE.md, "The web page"):

* Every request needs the server's token: as ``?token=`` on any URL (then kept in an
  HttpOnly, SameSite=Strict cookie named after the port) or that cookie. Without it: 403.
* The ``Host`` header must name the loopback address the server is bound to (or
  ``localhost``) with its port, so a DNS-rebinding page that points its own name at
  127.0.0.1 is refused (421) before the token is even looked at. Names are compared as
  ``serve-mcp --http`` compares them (``hosts.as_compared``): ``LOCALHOST.:P`` and
  ``127.0.0.1.:P`` are this server.
* An ``Origin`` header, when a browser sends one, must be the server's own origin (compared
  the same way).
* A request with two ``Host`` headers is refused with 400, with two ``Origin`` headers with
  403, as ``serve-mcp --http`` refuses them (``hosts.repeated``).
* Only GET and HEAD exist: the page has no write action, anything else is 405.

Every response carries headers that keep the page to itself: a Content-Security-Policy
allowing only its own scripts, styles and images, no framing, no referrer.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from grimoire_beholder.hosts import as_compared, repeated

TOKEN_PARAM = "token"
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; "
                                "img-src 'self'; form-action 'self'; base-uri 'none'; "
                                "frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def new_token() -> str:
    """A random token, as unguessable as Jupyter's."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Access:
    """The token and the addresses this server answers to."""

    token: str
    host: str
    port: int

    @property
    def cookie(self) -> str:
        """The cookie's name: one per port, so two servers on one machine keep their own."""
        return f"grimoire_beholder_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        """The Host header values accepted (the bound address and localhost, with port), as
        :func:`hosts.as_compared` writes them."""
        names = {self.host, "localhost", "127.0.0.1"} if self.host == "127.0.0.1" else {
            self.host}
        shown = {f"[{h}]" if ":" in h else h for h in names}
        return frozenset(as_compared(f"{h}:{self.port}") for h in shown)

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{h}" for h in self.hosts)

    def url(self, path: str = "/") -> str:
        """The URL to open, token included: ``http://127.0.0.1:P/?token=…``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}?{TOKEN_PARAM}={self.token}"

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def refusal(self, request: Request) -> Response | None:
        """Why ``request`` is refused (a response to send), or None when it may be served."""
        twice = repeated(request.headers.raw)
        if twice == "host":
            return _refused(400, "more than one Host header")
        if twice == "origin":
            return _refused(403, "more than one Origin header")
        if as_compared(request.headers.get("host", "")) not in self.hosts:
            return _refused(421, "this page answers only on its own loopback address")
        origin = request.headers.get("origin")
        if origin is not None and as_compared(origin) not in self.origins:
            return _refused(403, "requests from other sites are refused")
        if request.method not in ("GET", "HEAD"):
            return _refused(405, "the page is read-only: only GET is served")
        if not (self._matches(request.query_params.get(TOKEN_PARAM))
                or self._matches(request.cookies.get(self.cookie))):
            return _refused(403, "open the URL with ?token=… that `grimoire-beholder web` "
                                 "printed (a new token at every start)")
        return None

    def remember(self, request: Request, response: Response) -> None:
        """Keep a token given as ``?token=`` in the cookie, so links need not carry it."""
        if self._matches(request.query_params.get(TOKEN_PARAM)):
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict",
                                path="/")


def _refused(status: int, message: str) -> Response:
    return PlainTextResponse(f"refused: {message}\n", status_code=status,
                             headers=SECURITY_HEADERS)


class Guard:
    """ASGI middleware: refuse what :meth:`Access.refusal` refuses, remember the token and
    add :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = self.access.refusal(request)
        if refused is not None:
            await refused(scope, receive, send)
            return
        remember = self.access.remember

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                probe = Response()
                remember(request, probe)
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                headers += [(k, v) for k, v in probe.raw_headers if k == b"set-cookie"]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)

