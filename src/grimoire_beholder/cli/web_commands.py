"""``web``: read the library in a browser — a local, read-only page (``web/``).

Registers on ``app.app``; ``cli.entry`` imports this module. Starlette, uvicorn and Jinja2
are imported only when the command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from grimoire_beholder.cli.app import ConfigOpt, LibraryOpt, app, reported_errors
from grimoire_beholder.cli.help_pages import command
from grimoire_beholder.cli.running import same_library


@command(app, "Read it", examples=(
    "grimoire-beholder web",
    "grimoire-beholder web --no-browser --port 8800",
))
def web(
    port: Annotated[int, typer.Option(
        min=0, max=65535, help="Port on 127.0.0.1 (default: a free one).")] = 0,
    no_browser: Annotated[bool, typer.Option(
        "--no-browser", help="Only print the URL; do not open a browser.")] = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Read the library in a browser: books, outlines, sections, search, PDF pages with the
    passage marked, quotation check and printed index. Read-only, on 127.0.0.1 only; prints
    the URL with its access token (a new one each start) and serves until Ctrl-C."""
    from grimoire_beholder.library import Library

    with reported_errors():
        lib = Library.open(config, library=library, read_only=True, create=False)
        try:
            from grimoire_beholder.web.launch import serve

            serve(lib, port=port, open_browser=not no_browser,
                  library_flags=same_library(library, config))
        finally:
            lib.close()
