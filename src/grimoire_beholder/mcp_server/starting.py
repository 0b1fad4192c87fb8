"""What ``serve-mcp`` checks and opens before the MCP SDK is imported.

Importing the SDK (and pydantic, Starlette, uvicorn with it) is most of a server's start, so
everything that can refuse to start is done first, without it: the options (for ``--http``
the address, ``--allowed-host``/``--allowed-origin``, the TLS files, the upkeep rights that
belong to tokens), then the library, opened read-only through the core (``Library.open``),
its tokens, and the listening socket. A mistake is then one line as quickly as ``list``'s.
The command (``cli/serve_commands.py``, ``cli/shortcuts.py``) imports the SDK's side only
then, and hands it what was opened here: ``server.serve`` on stdio, ``http_serving.run_http``
over HTTP. This module imports neither.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import ConfigError
from grimoire_beholder.hosts import allowed_origin, host_spellings
from grimoire_beholder.mcp_server.allowed import Upkeep

if TYPE_CHECKING:
    from grimoire_beholder.access import TokenChecker
    from grimoire_beholder.library import Library

LOOPBACK = "127.0.0.1"


def open_library(config_path: str | os.PathLike[str] | None = None,
                 library: str | os.PathLike[str] | None = None) -> Library:
    """The Library as the server sees it: read-only (SQLite ``mode=ro``), never created."""
    from grimoire_beholder.library import Library

    return Library.open(config_path, library=library, read_only=True)


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
    """Whether ``host`` is this machine's loopback however it is spelt (``localhost``,
    ``LOCALHOST``, ``127.1``, ``[::1]``): judged on the address it resolves to, as the socket
    will bind it. A host that does not resolve: False."""
    if host.lower() == "localhost":
        return True
    address = _resolved(host)
    return address is not None and address.is_loopback


def _resolved(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` binds (an IPv4-mapped IPv6 address as its IPv4 one), or None."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host, 0, family, socket.SOCK_STREAM)
        address = ipaddress.ip_address(str(infos[0][4][0]).partition("%")[0])
    except (OSError, ValueError, UnicodeError):
        return None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped or address


def every_address(bind: Bind) -> bool:
    """Whether ``bind.host`` is "every address" however it is spelt (``0.0.0.0``, ``::``, but
    also ``0``, ``0000``, ``[0:0:0:0:0:0:0:0]``, ``[::ffff:0.0.0.0]``): judged on the address
    it resolves to, as the socket will bind it. A host that does not resolve: False (binding
    it then fails in one line)."""
    address = _resolved(bind.host)
    return address is not None and address.is_unspecified


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
    # ASCII digits only: str.isdigit() also takes "²" (int() then fails) and "٨٠" (80)
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http {text!r}: expected [HOST:]PORT with a port from 0 to "
                          "65535 (0: any free port)")
    if not host:
        raise ConfigError(f"--http {text!r}: name the host before ':' or give the port alone")
    return Bind(host, int(port))


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
        if path.is_dir():
            kind = "certificate" if what == "--tls-cert" else "private key"
            raise ConfigError(f"{what} {path}: is a folder, not a {kind} file (PEM): give "
                              "the file itself")
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


def refuse_server_upkeep(upkeep: Upkeep) -> None:
    """Over HTTP the upkeep rights are each token's, not the server's."""
    if upkeep.any:
        raise ConfigError("over HTTP each token carries its own upkeep rights: give the "
                          "--allow-* options to `grimoire-beholder token create NAME` "
                          "instead of serve-mcp")


@dataclass(frozen=True)
class HttpStart:
    """Everything ``serve-mcp --http`` checked and opened, handed to the server: the
    address, the listening socket, the library (read-only) with its token count and token
    checker, uvicorn's TLS settings, the allowed names as given."""

    bind: Bind
    sock: socket.socket
    library: Library
    tokens: int
    checker: TokenChecker
    tls: dict[str, Any]
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def close(self) -> None:
        """Release what was opened, when serving does not start after all."""
        self.sock.close()
        self.checker.close()
        self.library.close()


def start_http(address: str, upkeep: Upkeep, *,
               config_path: str | os.PathLike[str] | None = None,
               library_dir: str | os.PathLike[str] | None = None,
               allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = (),
               tls_cert: Path | None = None, tls_key: Path | None = None) -> HttpStart:
    """Check ``serve-mcp --http``'s options, then open the library, read its tokens and bind
    the socket: ConfigError or StorageError at the first thing wrong, nothing left open."""
    bind = parse_bind(address)
    refuse_server_upkeep(upkeep)
    for host in allowed_hosts:
        host_spellings(host)
    for origin in allowed_origins:
        allowed_origin(origin)
    tls = _tls_files(tls_cert, tls_key)
    if every_address(bind) and not allowed_hosts:
        raise ConfigError(f"listening on every address ({bind.host}): name the host clients "
                          "will reach it by with --allowed-host NAME (requests naming any "
                          "other host are refused, against DNS rebinding)")
    from grimoire_beholder.access import TokenChecker, list_tokens

    library = open_library(config_path, library_dir)
    checker: TokenChecker | None = None
    try:
        tokens = list_tokens(library)
        if not tokens:
            raise ConfigError("this library has no access token yet: make one with "
                              "`grimoire-beholder token create NAME` (it is printed once), "
                              "then give it to the assistant as a bearer token")
        checker = TokenChecker(library.config)
        sock = bound_socket(bind)
    except BaseException:
        if checker is not None:
            checker.close()
        library.close()
        raise
    return HttpStart(bind, sock, library, len(tokens), checker, tls, tuple(allowed_hosts),
                     tuple(allowed_origins))
