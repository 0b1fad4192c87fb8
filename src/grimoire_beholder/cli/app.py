"""The one Typer app and what every command shares: options, error mapping, opening the Library.

Command modules (``library_commands``, ``tool_commands``, …) import this module and register
on ``app``. Nothing imports them up front: ``Commands``, the app's root group, imports a
command's module when that command is looked up (``cli/command_table.py`` names it), so a
cold ``query`` or ``list`` loads only its own module and ``--help`` none. There is a single
``app`` however the CLI is started; ``cli/entry.py`` is the entry point.

stdout carries results only (tables, hits, JSON); progress bars, warnings and errors go to
stderr. Every GrimoireError becomes one ``error: …`` line and a non-zero exit code
(``cli/running.py``, re-exported here, which does it without typer).
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
import typer.main
from typer.core import TyperCommand

from grimoire_beholder.cli.command_table import COMMANDS
from grimoire_beholder.cli.help_pages import Grouped
from grimoire_beholder.cli.running import ERRORS_AS_JSON as ERRORS_AS_JSON
from grimoire_beholder.cli.running import error_line as error_line
from grimoire_beholder.cli.running import fail as fail
from grimoire_beholder.cli.running import reported_errors as reported_errors
from grimoire_beholder.cli.running import same_library as same_library
from grimoire_beholder.cli.running import with_library as with_library

if TYPE_CHECKING:
    from grimoire_beholder.mcp_server.allowed import Upkeep


class Commands(Grouped):
    """The root group: it knows every command of ``command_table.COMMANDS`` and imports one's
    module only when the command is looked up (to run it, or for its own ``--help``)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in COMMANDS:
            importlib.import_module(f"grimoire_beholder.cli.{COMMANDS[cmd_name].module}")
            found = typer.main.get_command(app).commands[cmd_name]  # type: ignore[attr-defined]
            self.add_command(found, cmd_name)
        return found

    def listed(self, ctx: Any, name: str) -> Any:
        """A command not loaded yet is listed from the table (its panel and summary)."""
        if name in self.commands or name not in COMMANDS:
            return super().listed(ctx, name)
        entry = COMMANDS[name]
        return TyperCommand(name, help=entry.summary, rich_help_panel=entry.panel)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """A mistyped command name gets typer's "Did you mean …?" from every command, loaded
        or not (typer looks only at the loaded ones)."""
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:
            if args and "Did you mean" not in exc.message:
                from difflib import get_close_matches

                if matches := get_close_matches(args[0], self.list_commands(ctx)):
                    exc.message = (exc.message.rstrip(".") + ". Did you mean "
                                   + ", ".join(repr(m) for m in matches) + "?")
            raise


def every_command() -> Any:
    """The root click group with every command's module imported and every command in its
    ``commands`` (what the help tests and the docs check walk)."""
    for module in sorted({entry.module for entry in COMMANDS.values()}):
        importlib.import_module(f"grimoire_beholder.cli.{module}")
    return typer.main.get_command(app)


app = typer.Typer(
    name="grimoire-beholder",
    help="A local, offline library of books and documents, searchable by AI assistants.",
    cls=Commands,
    epilog="\b\nStart with:\n  grimoire-beholder ingest BOOK.pdf\n"
    "  grimoire-beholder query \"what you want to know\"\n"
    "  grimoire-beholder mcp-config claude-desktop --write\n"
    "Each command's --help has examples.",
    # --install-completion / --show-completion: typer imports its completion modules either
    # way, so offering them cost nothing measurable on `--help` (12 alternating cold runs).
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command inherits it
    # Plain click help: typer's rich help renderer imports rich.markdown, pygments and more,
    # ~0.4-0.8 s of a cold `--help` on a 2-core machine (bench/cli_latency.py). Rich is still
    # used for our own output (rendering), imported only by commands that print.
    rich_markup_mode=None,
)


def _print_version(requested: bool) -> None:
    if requested:
        from importlib.metadata import version

        print(f"grimoire-beholder {version('grimoire-beholder-mcp')}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", metavar="FILE", help="The command's --config, given before it.",
        show_default=False, parser=_named_path)] = None,
    library: Annotated[Path | None, typer.Option(
        "--library", metavar="DIR", help="The command's --library, given before it.",
        show_default=False, parser=_library_locator)] = None,
) -> None:
    """Options that apply before any command; alone, the command prints its help (exit 0),
    as git and uv do. ``--config``/``--library`` here are every command's own (see
    :func:`_given_before`)."""
    ERRORS_AS_JSON["on"] = False  # until this invocation's --json says otherwise
    ctx.meta[_BEFORE] = {"config": config, "library": library}
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())
        raise typer.Exit()


_BEFORE = "grimoire_beholder.before_command"  # ctx.meta is shared by a command's contexts


def _given_before(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """A command's ``--config``/``--library``: its own value, else the one given before the
    command name (``grimoire-beholder --library L query …``); both is a usage error."""
    before = ctx.meta.get(_BEFORE, {}).get(param.name)
    if before is not None and value is not None:
        raise typer.BadParameter("given before the command too; give it once")
    return value if value is not None else before


def _named_path(text: str) -> Path:
    """A path option's value, refusing a blank one: ``Path("")`` is the working folder, so
    ``--library "$LIB"`` with LIB unset would otherwise make it a library."""
    if not text.strip():
        raise typer.BadParameter("is empty; name a path or leave the option out")
    if sys.platform != "win32" and _WINDOWS_PATH.match(text.strip()):
        raise typer.BadParameter(f"{text.strip()} is a Windows path (a drive letter or "
                                 f"\\\\server); on this system name a path like /home/…")
    if text.startswith("~") and not Path(text).exists():
        try:
            Path(text).expanduser()
        except RuntimeError:  # ~name of no user here: Python raises where the shell says no
            first = re.split(r"[\\/]", text, maxsplit=1)[0]
            raise typer.BadParameter(f"{text}: no home folder for {first!r} on this machine "
                                     "(no such user)") from None
    return Path(text)


def unit_share(text: str) -> float:
    """A number from 0 to 1 (``--min-confidence``), refused in words naming that range
    otherwise: typer's own bound check (pydantic's) told ``nan`` it "should be less than or
    equal to 1", and a float option takes ``nan``, ``inf`` and ``-inf`` as numbers."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise typer.BadParameter(f"must be a number from 0 to 1, not {text.strip()!r}")
    return value


def non_blank(text: str) -> str:
    """A text option that names something (``--name``, ``--book``, ``--author`` and the
    other filters): an empty or blank one is a usage error, not a filter silently dropped
    or a name silently kept."""
    if not text.strip():
        raise typer.BadParameter("is empty; give a value or leave the option out")
    return text


def input_path(text: str) -> Path:
    """A file or folder argument (``ingest``, ``sync``, ``unfollow``, ``eval``), refusing
    what would silently name something else: a blank one (``Path("")`` is the working folder,
    so ``ingest "$BOOK"`` with BOOK unset ingested every file under it and followed it) and a
    URL (a Path folds ``https://x`` into ``https:/x``, then "file not found"). A leading
    ``~`` the shell left alone (typed inside quotes: ``"~/Calibre Library"``) is the home
    folder, as ``--library`` reads it, unless a file of that very name exists."""
    from grimoire_beholder.locate import is_url

    if not text.strip():
        raise typer.BadParameter("is empty; name a file or folder (\".\" for this one)")
    path = _named_path(text)
    if is_url(text.strip()):
        url = text.strip()
        if url.lower().startswith("file://"):  # a browser's or file manager's copied link
            from urllib.parse import urlsplit
            from urllib.request import url2pathname

            local = url2pathname(urlsplit(url).path)
            raise typer.BadParameter(f"{url} is a file URL; name the file itself: {local}")
        raise typer.BadParameter(f"{url} is a URL; name a file or folder on this "
                                 f"machine (download it first)")
    if text.startswith("~") and not path.exists():
        return path.expanduser()
    return path


# ``C:\x``, ``c:/x``, ``\\server\share``: no path on a system that is not Windows, where
# it would be taken as a relative name and a folder of that name made in the working folder.
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\[^\\/])")


def _library_locator(text: str) -> Path:
    """``--library``: a folder, or a ``postgresql://`` URL kept as typed (a Path would fold
    its ``//``); ``load_config`` and ``Library.open`` take either."""
    from grimoire_beholder.locate import is_url

    if is_url(text):  # locate.py refuses a URL that names no PostgreSQL server
        return text.strip()  # type: ignore[return-value]  # str is what locate.py reads
    return _named_path(text)


# Choices as help and completion show them (the same as the core's: tests/test_cli_help.py).
Mode = Literal["hybrid", "vector", "keyword"]
SourceType = Literal["pdf", "epub", "markdown", "text", "html", "docx"]


class Role(StrEnum):
    """A section's role (typer takes a list of Enum members, not of Literal values)."""

    body = "body"
    front_matter = "front_matter"
    contents = "contents"
    index_ = "index"  # str.index is taken
    notes = "notes"
    bibliography = "bibliography"
    glossary = "glossary"


ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", "-c", metavar="FILE", help="Config file (default: "
    "$GRIMOIRE_BEHOLDER_CONFIG, else the library's own; see --library).",
    show_default=False, parser=_named_path, callback=_given_before)]
LibraryOpt = Annotated[Path | None, typer.Option(
    "--library", metavar="DIR", help="Library folder (default: "
    "$GRIMOIRE_BEHOLDER_LIBRARY, else the nearest folder above with a config.toml holding "
    "[grimoire-beholder], else the per-user library; or a postgresql:// URL).",
    show_default=False, parser=_library_locator, callback=_given_before)]


def _json_errors(given: bool) -> bool:
    """``--json`` also makes errors JSON (see ``error_line``)."""
    if given:
        ERRORS_AS_JSON["on"] = True
    return given

JsonOpt = Annotated[bool, typer.Option(
    "--json", callback=_json_errors, is_eager=True,
    help="Print JSON for scripts (an error too: {\"error\": …, \"exit_code\": …} on stderr).")]
# What serve-mcp lets an assistant change (mcp-config writes the same into a client).
AllowSyncOpt = Annotated[bool, typer.Option(
    "--allow-sync", envvar="GRIMOIRE_BEHOLDER_ALLOW_SYNC", help="Add the sync_library "
    "tool: the assistant may sync the library with its files (as `sync` does; books of "
    "deleted files are removed).")]
AllowAddOpt = Annotated[list[Path] | None, typer.Option(
    # path_type=str: split like paths, but kept as typed, so "" is not read as "."
    "--allow-add", metavar="DIR", envvar="GRIMOIRE_BEHOLDER_ALLOW_ADD", path_type=str,
    help="Add the add_book tool for files and folders inside DIR (repeatable; in the "
    "environment, folders separated by the path separator); any other path is refused.",
    show_default=False)]
AllowRemoveOpt = Annotated[bool, typer.Option(
    "--allow-remove", envvar="GRIMOIRE_BEHOLDER_ALLOW_REMOVE",
    help="Add the remove_book tool.")]


def allowed_upkeep(sync: bool, add: list[Path] | None, remove: bool) -> Upkeep:
    """The upkeep the --allow-* options ask for (allowed folders must exist)."""
    from grimoire_beholder.mcp_server.allowed import AllowedFolders, Upkeep

    return Upkeep(sync=sync, remove=remove, add=AllowedFolders.of(add) if add else None)
