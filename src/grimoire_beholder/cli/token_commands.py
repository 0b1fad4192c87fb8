"""``token create|list|revoke``: the bearer tokens ``serve-mcp --http`` asks every request
for (``grimoire_beholder.access``). Registers on ``app.app``; ``cli.entry`` imports it.

A token is printed once, by ``create``, on stdout alone (so ``TOKEN=$(… token create NAME)``
keeps it); the library keeps only its digest. ``list`` never shows a secret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from grimoire_beholder.cli.app import (
    AllowAddOpt,
    AllowRemoveOpt,
    AllowSyncOpt,
    ConfigOpt,
    JsonOpt,
    LibraryOpt,
    allowed_upkeep,
    app,
    reported_errors,
    with_library,
)
from grimoire_beholder.cli.help_pages import command, examples_epilog, help_when_bare

if TYPE_CHECKING:
    from grimoire_beholder.access import TokenInfo
    from grimoire_beholder.library import Library

token_app = typer.Typer(
    help="Access tokens for serve-mcp --http: make one (printed once), list them, revoke one.",
    rich_markup_mode=None, epilog=examples_epilog((
        "grimoire-beholder token create laptop",
        "grimoire-beholder token create ci --allow-sync",
        "grimoire-beholder token list",
        "grimoire-beholder token revoke laptop",
    )))
help_when_bare(token_app)
app.add_typer(token_app, name="token", rich_help_panel="Assistants")

NameArg = Annotated[str, typer.Argument(
    help="The token's name: letters, digits, '.', '-', '_' (who or what uses it).")]


def _as_dict(info: TokenInfo) -> dict[str, Any]:
    return {"name": info.name, "rights": info.rights.words(), "sync": info.rights.sync,
            "add": list(info.rights.add), "remove": info.rights.remove,
            "created": info.created_at, "last_used": info.last_used_at}


@command(token_app, "Assistants", "create", examples=(
    "grimoire-beholder token create laptop",
    "grimoire-beholder token create librarian --allow-sync --allow-add ~/Books",
))
def token_create(
    name: NameArg,
    allow_sync: AllowSyncOpt = False,
    allow_add: AllowAddOpt = None,
    allow_remove: AllowRemoveOpt = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Make a token for serve-mcp --http and print it, once: the library keeps only its
    digest. Read-only unless an --allow-* option gives it the same upkeep serve-mcp's
    options give (over HTTP the rights are the token's)."""
    from grimoire_beholder.access import TokenRights, create_token, list_tokens
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import err

    with reported_errors():
        upkeep = allowed_upkeep(allow_sync, allow_add, allow_remove)
        rights = TokenRights(sync=upkeep.sync, remove=upkeep.remove,
                             add=tuple(str(f) for f in upkeep.add.folders) if upkeep.add
                             else ())

    def run(lib: Library) -> tuple[TokenInfo, str, int]:
        info, token = create_token(lib, name, rights)
        return info, token, len(list_tokens(lib))

    info, token, count = with_library(config, run, library=library, resumable=False)
    if json_out:
        print_json({**_as_dict(info), "token": token})
        return
    print(token)
    err.print(f"token '{info.name}' ({info.rights.words()}) made; it is shown only now — "
              "give it to the assistant as a bearer token (Authorization: Bearer …); "
              f"{count} token(s) in this library", markup=False)


@command(token_app, "Assistants", "list", examples=("grimoire-beholder token list",))
def token_list(json_out: JsonOpt = False, config: ConfigOpt = None,
               library: LibraryOpt = None) -> None:
    """List the library's tokens: name, rights, when made and last used (never a secret)."""
    from grimoire_beholder.access import list_tokens
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import err

    tokens = with_library(config, list_tokens, library=library, read_only=True)
    if json_out:
        print_json([_as_dict(t) for t in tokens])
        return
    if not tokens:
        err.print("no tokens yet: `grimoire-beholder token create NAME` makes one",
                  markup=False)
        return
    width = max(4, *(len(t.name) for t in tokens))
    print(f"{'NAME':<{width}}  {'CREATED':<20}  {'LAST USED':<20}  RIGHTS")
    for t in tokens:
        print(f"{t.name:<{width}}  {t.created_at:<20}  {t.last_used_at or 'never':<20}  "
              f"{t.rights.words()}")


@command(token_app, "Assistants", "revoke", examples=("grimoire-beholder token revoke laptop",))
def token_revoke(name: NameArg, json_out: JsonOpt = False, config: ConfigOpt = None,
                 library: LibraryOpt = None) -> None:
    """Revoke a token: every request bearing it is refused from now on (401), by any server
    serving this library, without a restart."""
    from grimoire_beholder.access import revoke_token
    from grimoire_beholder.cli.plain_output import print_json

    info = with_library(config, lambda lib: revoke_token(lib, name), library=library,
                        resumable=False)
    if json_out:
        print_json(_as_dict(info))
        return
    print(f"revoked token '{info.name}'")
