"""The web app and its server: routes behind the guard, bound to loopback on a free port.

``build_app`` is what tests drive (Starlette's TestClient or a real server); ``serve`` is
what ``grimoire-beholder web`` runs: it binds the socket first, so the URL it prints (with
the token) already answers, then opens the browser and serves until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.convertors import Convertor, IntegerConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.web import finding, routes
from grimoire_beholder.web.access import Access, Guard, new_token
from grimoire_beholder.web.links import whole_number
from grimoire_beholder.web.templating import Reader

if TYPE_CHECKING:
    from grimoire_beholder.library import Library

HOST = "127.0.0.1"
STATIC = Path(__file__).parent / "static"


class _Number(IntegerConvertor):
    """A page, chapter or section number in a URL path: Starlette's ``int`` but one of
    thousands of digits is ``links.BEYOND`` (a 404 for no such page) instead of a 500."""

    def convert(self, value: str) -> int:
        number = whole_number(value)
        assert number is not None  # the regex matched digits
        return number


class _Page(Convertor[str]):
    """A page in a URL path as the CLI's ``page`` takes it: a physical number or a printed
    label (``xii``, ``A-3``, one holding a slash sent as ``%2F``), passed on as written for
    the core to read (``Library.page_number``) — no page is turned away by the route."""

    regex = ".+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("number", _Number())
register_url_convertor("page", _Page())


def _route(path: str, view: Callable[[Reader, Request], Response], reader: Reader) -> Route:
    return Route(path, partial(view, reader), methods=["GET", "HEAD"])


def build_app(library: Library, access: Access, *, warm: bool = False,
              library_flags: str = "") -> Guard:
    """The page's ASGI app over ``library`` (read-only), refusing what ``access`` refuses;
    ``warm`` loads the search's models in the background (under the page's lock) meanwhile.
    ``library_flags`` (`` --library DIR``) goes into the commands the page suggests."""
    reader = Reader(library, library_flags=library_flags)
    if warm:
        threading.Thread(target=_warm, args=(reader,), daemon=True).start()
    app = Starlette(routes=[
        _route("/", routes.books_view, reader),
        _route("/search", finding.search_view, reader),
        _route("/quote", finding.quote_view, reader),
        _route("/lookup", finding.lookup_view, reader),
        _route("/book/{slug}", routes.outline_view, reader),
        _route("/book/{slug}/page/{page:page}.png", routes.page_png, reader),
        _route("/book/{slug}/page/{page:page}", routes.page_view, reader),
        _route("/book/{slug}/{chapter:number}/{section:number}", routes.section_view, reader),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    return Guard(app, access)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free one), or a one-line error."""
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it a kept-alive connection waits out the peer's delayed ACK on every response.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise GrimoireError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; "
                            "choose another --port (or leave it out for a free one)"
                            ) from exc
    sock.listen(128)
    return sock


def serve(library: Library, *, port: int = 0, open_browser: bool = True,
          token: str | None = None, library_flags: str = "") -> None:
    """Serve ``library`` on loopback until Ctrl-C (or SIGTERM), then return: print the URL
    (stdout), open a browser.

    The library is only read: it should be opened read-only by the caller."""
    import uvicorn

    sock = bind(port)
    access = Access(token or new_token(), HOST, sock.getsockname()[1])
    url = access.url()
    print(url, flush=True)
    print("Serving the library read-only on loopback; Ctrl-C stops it.", file=sys.stderr,
          flush=True)
    if open_browser:
        open_in_browser(url, sock.getsockname()[1])
    config = uvicorn.Config(build_app(library, access, warm=True,
                                      library_flags=library_flags), log_level="warning",
                            access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C once it has shut down: that is the end
        pass
    finally:
        sock.close()
    print("Stopped.", file=sys.stderr, flush=True)


def open_in_browser(url: str, port: int) -> None:
    """Open ``url`` in the desktop's browser, in the background. Without a desktop — Linux
    or BSD with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY`` (an SSH session, a server) and
    no ``BROWSER`` chosen — Python's ``webbrowser`` runs a text browser (Debian's
    ``www-browser``: w3m, lynx) full-screen in this very terminal, over the server's lines
    and sharing its Ctrl-C: there nothing is opened and stderr says how to reach the page."""
    desktop = (sys.platform in ("darwin", "win32") or os.environ.get("BROWSER")
               or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if desktop:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        return
    print(f"No desktop to open a browser on here: open the URL in one (from another machine: "
          f"ssh -L {port}:{HOST}:{port} this-host, then the same URL there).",
          file=sys.stderr, flush=True)


def _warm(reader: Reader) -> None:
    """Load the search's models while the person opens the page (errors show on search)."""
    with contextlib.suppress(GrimoireError):
        reader.run(lambda lib: lib.warm_up())
