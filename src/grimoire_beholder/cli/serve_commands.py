"""``serve-mcp``: the MCP server, on stdio (what a local assistant starts) or, with
``--http [HOST:]PORT``, over Streamable HTTP for assistants elsewhere (``mcp_server/``).
Registers on ``app.app``; ``cli.entry`` imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grimoire_beholder.cli.app import (
    AllowAddOpt,
    AllowRemoveOpt,
    AllowSyncOpt,
    ConfigOpt,
    LibraryOpt,
    allowed_upkeep,
    app,
    reported_errors,
)
from grimoire_beholder.cli.help_pages import command
from grimoire_beholder.cli.running import tell_waiting_on_a_terminal
from grimoire_beholder.errors import ConfigError

FileOpt = Annotated[Path | None, typer.Option(metavar="FILE", show_default=False)]

@command(app, 'Assistants', "serve-mcp", examples=(
    'grimoire-beholder serve-mcp',
    'grimoire-beholder serve-mcp --allow-sync --allow-add ~/Books',
    'grimoire-beholder serve-mcp --http 8765',
    'grimoire-beholder serve-mcp --http 0.0.0.0:443 --allowed-host books.example.org '
    '--tls-cert cert.pem --tls-key key.pem',
))
def serve_mcp(
    allow_sync: AllowSyncOpt = False,
    allow_add: AllowAddOpt = None,
    allow_remove: AllowRemoveOpt = False,
    http: Annotated[str | None, typer.Option(
        "--http", metavar="[HOST:]PORT", show_default=False,
        help="Serve over Streamable HTTP at /mcp instead of stdio: PORT alone listens on "
        "127.0.0.1; another address must be named. Every request needs a token "
        "(`grimoire-beholder token create`), whose own --allow-* rights apply.")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", metavar="NAME[:PORT]", show_default=False,
        help="With --http: another Host name clients use (a reverse proxy's public name); "
        "requests naming any other host are refused (repeatable).")] = None,
    allowed_origin: Annotated[list[str] | None, typer.Option(
        "--allowed-origin", metavar="ORIGIN", show_default=False,
        help="With --http: a web origin (https://app.example.org) whose pages may call the "
        "server; other origins are refused (repeatable).")] = None,
    tls_cert: Annotated[Path | None, typer.Option(
        "--tls-cert", metavar="FILE", show_default=False,
        help="With --http: serve HTTPS with this certificate (PEM; with --tls-key).")] = None,
    tls_key: Annotated[Path | None, typer.Option(
        "--tls-key", metavar="FILE", show_default=False,
        help="With --http: the certificate's private key (PEM).")] = None,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Serve the library to AI assistants over MCP: on stdio, read-only unless an --allow-*
    option adds an upkeep tool; or with --http over the network, each request with a token.

    stdout carries only the protocol; logs and start-up errors go to stderr. A mistaken
    option, a missing config file or library database fails here, before the protocol starts,
    with a non-zero exit.
    """
    # Those start-up checks run before the MCP SDK is imported (mcp_server/starting.py).
    with reported_errors(writes=False):  # Ctrl-C: a server has no work to resume
        upkeep = allowed_upkeep(allow_sync, allow_add, allow_remove)
        from grimoire_beholder.mcp_server import starting  # the MCP SDK is not imported yet

        if http is None:
            if allowed_host or allowed_origin or tls_cert or tls_key:
                raise ConfigError("--allowed-host, --allowed-origin and --tls-* go with "
                                  "--http")
            opened = starting.open_library(config, library)
            tell_waiting_on_a_terminal()
            from grimoire_beholder.mcp_server.server import serve  # the SDK, only now

            serve(opened, upkeep if upkeep.any else None)
            return
        start = starting.start_http(http, upkeep, config_path=config, library_dir=library,
                                    allowed_hosts=allowed_host or (),
                                    allowed_origins=allowed_origin or (), tls_cert=tls_cert,
                                    tls_key=tls_key)
        from grimoire_beholder.mcp_server.http_serving import run_http  # the SDK, only now

        run_http(start)
