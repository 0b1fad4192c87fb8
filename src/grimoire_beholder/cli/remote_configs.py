"""``mcp-config CLIENT --url URL``: the entry for a library served over HTTP
(``serve-mcp --http``), in each client's own form, merged like the stdio entry
(``client_configs.write_setup``).

The token is never written into a client's file: the entry names an environment variable
that holds it (``--token-env``, default ``GRIMOIRE_BEHOLDER_TOKEN``), in the syntax that
client expands — Claude Code ``${VAR}``, Cursor and VS Code ``${env:VAR}`` in an
``Authorization`` header, Codex ``bearer_token_env_var``. Claude Desktop's config file takes
only local servers (remote ones are added as connectors in its settings), so it is refused
with that advice.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from grimoire_beholder.cli.client_configs import SERVER_NAME, ClientSetup, client_config_path
from grimoire_beholder.errors import ConfigError

TOKEN_ENV = "GRIMOIRE_BEHOLDER_TOKEN"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_HEADER_FORM = {"claude-code": "Bearer ${{{}}}", "cursor": "Bearer ${{env:{}}}",
                "vscode": "Bearer ${{env:{}}}"}


def check_url(url: str) -> str:
    """The server's ``/mcp`` URL as given; ConfigError unless it is http(s)://HOST[:PORT]/…"""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
            or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"--url {url[:200]!r}: give the server's address as "
                          "http(s)://HOST:PORT/mcp (what serve-mcp --http printed)")
    return url


def http_client_setup(client: str, url: str, name: str = SERVER_NAME,
                      token_env: str = TOKEN_ENV) -> ClientSetup:
    """``client``'s entry for the server at ``url``, its token read from ``token_env``."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ConfigError(f"server name {name!r} may hold only letters, digits, '-' and '_'")
    if not _ENV_NAME.fullmatch(token_env):
        raise ConfigError(f"--token-env {token_env[:100]!r}: give an environment variable's "
                          "name (letters, digits, '_')")
    check_url(url)
    entry: dict[str, Any]
    if client == "claude-desktop":
        raise ConfigError("Claude Desktop's config file takes only servers it starts itself: "
                          "add a remote server under Settings › Connectors, or run "
                          "`mcp-config claude-desktop` on the library's own machine")
    if client == "codex":
        entry = {"url": url, "bearer_token_env_var": token_env}
    else:
        entry = {"url": url,
                 "headers": {"Authorization": _HEADER_FORM[client].format(token_env)}}
        if client in ("claude-code", "vscode"):
            entry = {"type": "http", **entry}
    return ClientSetup(client, name, entry, client_config_path(client))


def cleartext_warning(url: str) -> str | None:
    """A warning when the token would cross a network unencrypted."""
    host = urlsplit(url).hostname or ""
    if urlsplit(url).scheme == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        return (f"warning: {url} is plain HTTP beyond this machine: the token would cross the "
                "network in clear text; serve it with --tls-cert/--tls-key or behind a TLS "
                "reverse proxy and use its https:// address")
    return None
