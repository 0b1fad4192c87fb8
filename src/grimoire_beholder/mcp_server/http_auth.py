"""Bearer tokens for the MCP server over HTTP, through the SDK's own auth plumbing.

The SDK checks every request to ``/mcp`` with a ``TokenVerifier`` (its
``BearerAuthBackend`` and ``RequireAuthMiddleware``): a request without a live token of this
library gets 401 with ``WWW-Authenticate: Bearer error="invalid_token"``, and a session
belongs to the token that opened it. :class:`LibraryTokens` is that verifier, over the
library's own token rows (``grimoire_beholder.access``): the token's name is its client id,
its upkeep rights its scopes. :meth:`TokenAuth.upkeep` turns the current request's token back
into the :class:`Upkeep` the tools obey (``server.create_server``), read-only when there is
none — so a read-only token neither lists nor calls an upkeep tool.

The token checker is our own, not an OAuth server: ``AuthSettings.issuer_url`` (which the
SDK requires) names this server itself, and no OAuth metadata route is published.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from grimoire_beholder.access import LibraryUnavailable, TokenChecker, TokenRights
from grimoire_beholder.errors import ConfigError
from grimoire_beholder.mcp_server.allowed import AllowedFolders, Upkeep

log = logging.getLogger("grimoire_beholder.mcp")

READ = "library:read"
SYNC, ADD, REMOVE = "upkeep:sync", "upkeep:add", "upkeep:remove"
ADD_FOLDERS = "add_folders"  # the claim holding the folders a token may add books from
# Set per request by ``http_serving.OutageAnswer``: why the library could not check a token
# (its PostgreSQL server down or restarting), so the answer is 503, not a false 401.
OUTAGE: ContextVar[list[str] | None] = ContextVar("grimoire_token_outage", default=None)


def scopes(rights: TokenRights) -> list[str]:
    """A token's rights as scopes: every token reads; the upkeep ones as it was made."""
    return [READ] + [scope for scope, on in ((SYNC, rights.sync), (ADD, bool(rights.add)),
                                             (REMOVE, rights.remove)) if on]


class LibraryTokens:
    """The SDK ``TokenVerifier`` over the library's tokens (checked at every request, so a
    revoked token is refused at once; its last use written at most once a minute)."""

    def __init__(self, checker: TokenChecker) -> None:
        self.checker = checker

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            if self.checker.config.database_url is None:  # a local file: checked at once
                found = self.checker.check(token)
            else:  # a round trip to the server (a reconnect, maybe): off the event loop
                found = await anyio.to_thread.run_sync(self.checker.check, token)
        except LibraryUnavailable as exc:
            reasons = OUTAGE.get()
            if reasons is not None:
                reasons.append(str(exc))
            log.warning("a token could not be checked: %s", exc)
            return None
        if found is None:
            return None
        info, key_id = found
        if self.checker.due(key_id, time.monotonic()):
            await anyio.to_thread.run_sync(self.checker.record_use, key_id)
        return AccessToken(token=f"gbt_{key_id}", client_id=info.name,
                           scopes=scopes(info.rights),
                           claims={ADD_FOLDERS: list(info.rights.add)})


@dataclass
class TokenAuth:
    """What ``create_server`` needs to serve over HTTP with the library's tokens."""

    verifier: LibraryTokens
    settings: AuthSettings
    _folders: dict[tuple[str, ...], AllowedFolders | None] = field(default_factory=dict)

    @classmethod
    def of(cls, checker: TokenChecker, base_url: str) -> TokenAuth:
        return cls(LibraryTokens(checker),
                   AuthSettings(issuer_url=AnyHttpUrl(base_url), resource_server_url=None,
                                required_scopes=[READ]))

    def upkeep(self) -> Upkeep:
        """The upkeep the current request's token allows (none outside a request)."""
        token = get_access_token()
        if token is None:
            return Upkeep()
        folders = tuple((token.claims or {}).get(ADD_FOLDERS) or ())
        return Upkeep(sync=SYNC in token.scopes, remove=REMOVE in token.scopes,
                      add=self._allowed(folders) if ADD in token.scopes else None)

    def _allowed(self, folders: tuple[str, ...]) -> AllowedFolders | None:
        """The token's folders, resolved once; None (no add_book) when one is gone."""
        if folders not in self._folders:
            try:
                self._folders[folders] = AllowedFolders.of(folders)
            except ConfigError as exc:
                log.warning("a token's add_book is off: %s", exc)
                self._folders[folders] = None
        return self._folders[folders]
