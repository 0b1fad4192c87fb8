"""Host names and web origins as the HTTP servers compare them: both sides written the same
way, so a check of ``Host`` or ``Origin`` compares names, not spellings.

* A request's header (:func:`as_compared`): host names and schemes are case-insensitive
  (RFC 9110) and ``example.org.`` is ``example.org`` (a browser sends the name as the user
  typed it), so ``Host: LOCALHOST.:8765`` is ``localhost:8765``. Only the check uses that
  form: an answer that names the request's Origin (CORS's ``Access-Control-Allow-Origin``)
  gives it back as sent, byte for byte, or the browser drops the answer.
* A name the user configures (``serve-mcp --allowed-host`` / ``--allowed-origin``):
  :func:`allowed_host` writes it the same way, a non-ASCII name in the IDNA form browsers
  send; :func:`host_spellings` adds the form browsers send for a name with ß, ς or a
  zero-width joiner; :func:`allowed_origin` does both for an origin.

A request with more than one ``Host`` or ``Origin`` header is refused whole
(:func:`repeated`): a check of the first one alone would let a second, foreign one through to
whatever reads the last (RFC 9112 answers two Hosts with 400; RFC 6454 allows one Origin).

Pure functions of the standard library, shared by ``mcp_server/`` (``serve-mcp --http``'s
gate) and ``web/`` (the page's own check), which may not import each other.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from grimoire_beholder.errors import ConfigError

# A host name or an IP address (IPv6 in brackets), then an optional :PORT (or :*, any port).
_HOST_NAME = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?)(:([0-9]{1,5}|\*))?")
# The dot that ends a fully qualified name, before the port or at the end of Host/Origin.
_FINAL_DOT = re.compile(r"(?<=[^.])\.(?=(:[0-9]*)?\Z)")


def as_compared(value: str) -> str:
    """A request's ``Host`` or ``Origin`` header as it is compared: lower case, without the
    trailing dot of a fully qualified name (``HTTP://Books.Example.:443`` →
    ``http://books.example:443``). A value with nothing to change comes back as it is."""
    return _FINAL_DOT.sub("", value.lower())


def repeated(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """``"host"`` or ``"origin"`` when the raw (lower-case) ``headers`` of a request carry
    that header more than once (``host`` first), else None."""
    names = [name for name, _ in headers if name in (b"host", b"origin")]
    for name in ("host", "origin"):
        if names.count(name.encode()) > 1:
            return name
    return None


def allowed_host(given: str) -> str:
    """An ``--allowed-host`` as a Host header carries it: lower case, without the trailing
    dot of a fully qualified name (``example.org.``; :func:`as_compared` drops the Host's
    too), a non-ASCII name in its IDNA form (``bücher.example`` → ``xn--bcher-kva.example``,
    what browsers send). Not a host name (a scheme, a path, a wildcard): ConfigError."""
    text = given.strip()
    name, port = text, ""
    if not text.startswith("[") and text.count(":") == 1:
        name, colon, rest = text.partition(":")
        port = colon + rest
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError as exc:
            reason = getattr(exc, "reason", exc)
            raise ConfigError(f"--allowed-host {given!r}: not a name IDNA can write in "
                              f"ASCII ({reason}); give the name's punycode form (xn--…) "
                              "as clients send it") from None
    host = (name + port).lower()
    _, colon, number = host.rpartition(":")
    if colon and number.isascii() and number.isdigit() and int(number) > 65535:
        raise ConfigError(f"--allowed-host {given!r}: the port is beyond 65535")
    if not _HOST_NAME.fullmatch(host):  # "*" was taken, and matched only a Host "*"
        raise ConfigError(f"--allowed-host {given!r}: give a host name or address, "
                          "optionally with :PORT (no scheme, no path, no wildcard: name "
                          "each host clients use)")
    return host


# The characters IDNA 2003 (stdlib ``encodings.idna``) maps away but browsers keep, as UTS 46
# nontransitional processing does (Chrome, Firefox, Safari): straße.example is sent as
# xn--strae-oqa.example, not strasse.example.
_DEVIATIONS = frozenset("\u00df\u03c2\u200c\u200d")


def host_spellings(given: str) -> list[str]:
    """``given`` as :func:`allowed_host` writes it, and, for a name with ß, ς or a
    zero-width joiner, also in the form browsers send (each label NFKC in lower case, then
    punycode), so both reach the server."""
    host = allowed_host(given)
    text = given.strip().lower()
    if text.startswith("[") or not _DEVIATIONS.intersection(text):
        return [host]
    name, colon, port = text.partition(":") if text.count(":") == 1 else (text, "", "")
    labels = [label if label.isascii() else
              "xn--" + unicodedata.normalize("NFKC", label).encode("punycode").decode("ascii")
              for label in name.rstrip(".").split(".")]
    kept = ".".join(labels) + colon + port
    return [host, kept] if kept != host and _HOST_NAME.fullmatch(kept) else [host]


def allowed_origin(given: str) -> list[str]:
    """An ``--allowed-origin`` as it is compared: scheme and host in lower case, the host as
    :func:`host_spellings` writes it (no final dot, IDNA), since :func:`as_compared` lowers
    the request's Origin and drops its final dot. Not scheme://host[:port]: ConfigError."""
    origin = given.strip().rstrip("/")
    scheme, sep, authority = origin.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or "/" in authority:
        raise ConfigError(f"--allowed-origin {origin!r}: give scheme://host[:port], "
                          "e.g. https://app.example.org")
    try:
        hosts = host_spellings(authority)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace(f"--allowed-host {authority!r}",
                                           f"--allowed-origin {origin!r}", 1)) from None
    return [f"{scheme.lower()}://{host}" for host in hosts]
