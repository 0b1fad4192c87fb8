"""``serve-mcp --http [HOST:]PORT``: the same tools over the SDK's Streamable HTTP transport
(endpoint ``/mcp``), served by uvicorn, for assistants on other machines and remote
connectors.

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
  transport.
* **TLS** directly (``--tls-cert``/``--tls-key``, uvicorn's) or from a reverse proxy in front
  (README shows nginx and Caddy), which then names its public host with ``--allowed-host``.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import socket
import ssl
import sys
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from grimoire_beholder.errors import ConfigError
from grimoire_beholder.hosts import allowed_origin, as_compared, host_spellings
from grimoire_beholder.mcp_server.allowed import Upkeep

if TYPE_CHECKING:
    from grimoire_beholder.access import TokenChecker
    from grimoire_beholder.library import Library

log = logging.getLogger("grimoire_beholder.mcp")

ENDPOINT = "/mcp"
# What an --allowed-origin page's fetch() sends and must be able to read (CORS): a browser
# asks first, without the token, in a preflight the server answers before checking it.
BROWSER_HEADERS = ["authorization", "content-type", "accept", "mcp-session-id",
                   "mcp-protocol-version", "last-event-id"]
BROWSER_READS = ["mcp-session-id", "mcp-protocol-version", "www-authenticate"]
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Bind:
    """Where to listen: ``host`` (a literal address or a name) and ``port`` (0: any free)."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def authority(self, port: int | None = None) -> str:
        """``host:port`` as it goes in a URL (IPv6 in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port if port is None else port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def every_address(bind: Bind) -> bool:
    """Whether ``bind.host`` is "every address" however it is spelt (``0.0.0.0``, ``::``, but
    also ``0``, ``0000``, ``[0:0:0:0:0:0:0:0]``, ``[::ffff:0.0.0.0]``): judged on the address
    it resolves to, as the socket will bind it. A host that does not resolve: False (binding
    it then fails in one line)."""
    family = socket.AF_INET6 if ":" in bind.host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(bind.host, bind.port, family, socket.SOCK_STREAM)
        address = ipaddress.ip_address(str(infos[0][4][0]).partition("%")[0])
    except (OSError, ValueError):
        return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return address.is_unspecified or (mapped is not None and mapped.is_unspecified)


def parse_bind(text: str) -> Bind:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT``; PORT alone means 127.0.0.1."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = LOOPBACK, text
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ConfigError(f"--http {text!r}: write an IPv6 address in brackets, e.g. "
                          "[::1]:8765")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http {text!r}: expected [HOST:]PORT with a port from 0 to "
                          "65535 (0: any free port)")
    if not host:
        raise ConfigError(f"--http {text!r}: name the host before ':' or give the port alone")
    return Bind(host, int(port))


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
    token is looked at (a refused request learns nothing more)."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app = app
        self.check = TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = _host_and_origin_lowered(scope)
            refused = await self.check.validate_request(Request(scope), is_post=False)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


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


def bound_socket(bind: Bind) -> socket.socket:
    """The listening socket, made here so port 0 is known before serving starts."""
    family = socket.AF_INET6 if ":" in bind.host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(bind.host, bind.port, family, socket.SOCK_STREAM)
        sock = socket.socket(family, socket.SOCK_STREAM)
        exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)
        if exclusive is not None:  # Windows: no other process may bind the port as well
            sock.setsockopt(socket.SOL_SOCKET, exclusive, 1)
        else:  # elsewhere: a restarted server may bind again at once (TIME_WAIT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(infos[0][4])
    except OSError as exc:
        raise ConfigError(f"cannot listen on {bind.authority()}: {exc.strerror or exc}"
                          ) from None
    sock.listen(2048)
    return sock


class _PassPhraseAsked(Exception):
    """The TLS key wants a pass phrase."""


def _no_pass_phrase() -> str:
    raise _PassPhraseAsked


def _tls_files(cert: Path | None, key: Path | None) -> dict[str, Any]:
    if (cert is None) != (key is None):
        raise ConfigError("--tls-cert and --tls-key go together: give both, or neither")
    if cert is None or key is None:
        return {}
    for what, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not path.is_file():
            raise ConfigError(f"{what} {path}: no such file")
    try:  # the same load uvicorn makes, here, so a bad pair is one line before serving
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            cert, key, password=_no_pass_phrase)
    except _PassPhraseAsked:  # OpenSSL asked the terminal for it, twice, then failed
        raise ConfigError(f"--tls-key {key}: the key is encrypted with a pass phrase, which "
                          "the server cannot ask for; give it a copy without one (`openssl "
                          "pkey -in KEY -out PLAIN.pem`), readable by this user only"
                          ) from None
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"--tls-cert {cert} / --tls-key {key}: not a PEM certificate and "
                          f"its private key ({exc})") from None
    return {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}


def serve_http(bind: Bind, *, config_path: str | os.PathLike[str] | None = None,
               library_dir: str | os.PathLike[str] | None = None,
               allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = (),
               tls_cert: Path | None = None, tls_key: Path | None = None) -> None:
    """Serve the library over Streamable HTTP until interrupted. The library, its tokens,
    the TLS files and the address are all checked before the first request (ConfigError
    or StorageError otherwise)."""
    import uvicorn

    from grimoire_beholder.access import TokenChecker, list_tokens
    from grimoire_beholder.mcp_server.server import open_library

    tls = _tls_files(tls_cert, tls_key)
    if every_address(bind) and not allowed_hosts:
        raise ConfigError(f"listening on every address ({bind.host}): name the host clients "
                          "will reach it by with --allowed-host NAME (requests naming any "
                          "other host are refused, against DNS rebinding)")
    library = open_library(config_path, library_dir)
    try:
        tokens = list_tokens(library)
        if not tokens:
            raise ConfigError("this library has no access token yet: make one with "
                              "`grimoire-beholder token create NAME` (it is printed once), "
                              "then give it to the assistant as a bearer token")
        checker = TokenChecker(library.config)
        sock = bound_socket(bind)
    except BaseException:
        library.close()
        raise
    port = int(sock.getsockname()[1])
    scheme = "https" if tls else "http"
    url = f"{scheme}://{bind.authority(port)}{ENDPOINT}"
    app = http_app(library, checker, bind, port, scheme=scheme, allowed_hosts=allowed_hosts,
                   allowed_origins=allowed_origins)
    where = (library.server.location if library.server is not None
             else library.config.database_path)
    _tell(f"serving {where} on {url} ({len(tokens)} token(s); "
          f"`grimoire-beholder token list` shows them)")
    if not bind.loopback:
        _tell(f"warning: listening beyond this machine on {bind.authority(port)}"
              + ("" if tls else "; without --tls-cert/--tls-key the tokens cross the "
                 "network in clear text: use TLS here or a TLS reverse proxy in front"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=3, **tls)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has closed the sessions; nothing to resume
        _tell("stopped")
    finally:
        sock.close()
        checker.close()


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
    pages = [o.strip().rstrip("/") for o in allowed_origins]
    if pages:  # after the gate (a foreign origin is refused first), before the token
        app = CORSMiddleware(app, allow_origins=pages, allow_methods=["GET", "POST", "DELETE"],
                             allow_headers=BROWSER_HEADERS, expose_headers=BROWSER_READS,
                             max_age=600)
    return HostOriginGate(OutageAnswer(app), settings)


def refuse_server_upkeep(upkeep: Upkeep) -> None:
    """Over HTTP the upkeep rights are each token's, not the server's."""
    if upkeep.any:
        raise ConfigError("over HTTP each token carries its own upkeep rights: give the "
                          "--allow-* options to `grimoire-beholder token create NAME` "
                          "instead of serve-mcp")


def _tell(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
