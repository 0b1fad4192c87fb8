"""``mcp-config``: set up an AI assistant (Claude Desktop, Claude Code, Codex, Cursor,
VS Code) to use this library, by printing its server entry or merging it into the client's
config file.

The entry and the merging are ``cli/client_configs.py``'s; this module parses the arguments,
reports what happened, and registers on ``app.app`` (``cli/entry.py`` imports it).
"""

from __future__ import annotations

from typing import Annotated, Literal

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
from grimoire_beholder.errors import ConfigError

# The same as client_configs.CLIENTS (tests/test_cli_help.py), spelled out for typer.
Client = Literal["claude-desktop", "claude-code", "codex", "cursor", "vscode"]


@command(app, 'Assistants', "mcp-config", examples=(
    'grimoire-beholder mcp-config claude-desktop --write',
    'grimoire-beholder mcp-config claude-code',
    'grimoire-beholder mcp-config cursor --write',
    'grimoire-beholder mcp-config claude-code --url https://books.example.org/mcp --write',
))
def mcp_config(
    client: Annotated[Client, typer.Argument(
        help="The assistant to set up (vscode: VS Code's user mcp.json).")],
    write: Annotated[bool, typer.Option(
        "--write", help="Merge the entry into the client's config file (a backup is made "
        "first; other servers are untouched).")] = False,
    name: Annotated[str, typer.Option(help="The server's name in the client.")]
    = "grimoire-beholder",
    allow_sync: AllowSyncOpt = False,
    allow_add: AllowAddOpt = None,
    allow_remove: AllowRemoveOpt = False,
    url: Annotated[str | None, typer.Option(
        "--url", metavar="URL", show_default=False,
        help="Instead: the entry for a library served with serve-mcp --http at URL "
        "(http(s)://HOST:PORT/mcp); the client sends the token from --token-env.")] = None,
    token_env: Annotated[str, typer.Option(
        "--token-env", metavar="VAR", help="With --url: the environment variable the client "
        "reads the token from (the token itself is never written into its file).")]
    = "GRIMOIRE_BEHOLDER_TOKEN",
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Print the MCP server entry for an assistant, with absolute paths to this installation
    and the library; --write merges it into the assistant's config file. The --allow-*
    options go into the entry as they are given to serve-mcp. With --url, the entry for a
    library served over HTTP instead (its rights are its token's)."""
    from grimoire_beholder.cli.client_configs import client_setup, in_a_cache, write_setup
    from grimoire_beholder.cli.rendering import err
    from grimoire_beholder.config import load_config

    with reported_errors():
        if url is not None:
            _http_config(client, url, name, token_env, write,
                         allowed_upkeep(allow_sync, allow_add, allow_remove).any)
            return
        cfg = load_config(config, library=library)
        setup = client_setup(client, cfg, name,
                             allowed_upkeep(allow_sync, allow_add, allow_remove))
        if in_a_cache(setup.entry["command"]):
            err.print(f"warning: {setup.entry['command']} is in a cache (uvx runs from one) "
                      "that `uv cache clean` deletes; install the tool with `uv tool install` "
                      "and run mcp-config from there", markup=False)
        if cfg.database_url is None and not cfg.database_path.exists():
            err.print(f"note: there is no library at {cfg.database_path} yet; fill it with "
                      "`grimoire-beholder ingest FILE` first", markup=False)
        if not write:
            print(setup.snippet())
            err.print(f"(goes in {setup.path}; --write merges it there)", markup=False)
            return
        action, backup = write_setup(setup)
    if action == "unchanged":
        print(f"{setup.path} already has this '{setup.name}' entry; nothing changed")
        return
    print(f"{action} '{setup.name}' in {setup.path}"
          + (f" (backup: {backup})" if backup else ""))
    err.print(f"restart {client} to load it", markup=False)


def _http_config(client: str, url: str, name: str, token_env: str, write: bool,
                 upkeep: bool) -> None:
    """``mcp-config CLIENT --url URL``: print or merge the entry for a server over HTTP."""
    from grimoire_beholder.cli.client_configs import write_setup
    from grimoire_beholder.cli.remote_configs import cleartext_warning, http_client_setup
    from grimoire_beholder.cli.rendering import err

    if upkeep:
        raise ConfigError("over HTTP the upkeep rights are the token's: give the --allow-* "
                          "options to `grimoire-beholder token create` instead")
    setup = http_client_setup(client, url, name, token_env)
    warning = cleartext_warning(url)
    if warning:
        err.print(warning, markup=False)
    if not write:
        print(setup.snippet())
        err.print(f"(goes in {setup.path}; --write merges it there; the client reads the "
                  f"token from ${token_env})", markup=False)
        return
    action, backup = write_setup(setup)
    if action == "unchanged":
        print(f"{setup.path} already has this '{setup.name}' entry; nothing changed")
    else:
        print(f"{action} '{setup.name}' in {setup.path}"
              + (f" (backup: {backup})" if backup else ""))
    err.print(f"set {token_env} to the token (`grimoire-beholder token create NAME` printed "
              f"it) where {client} runs, then restart {client}", markup=False)
