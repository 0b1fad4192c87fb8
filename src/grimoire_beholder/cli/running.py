"""What every command does around its work, without typer: open the Library, run, close it,
and tell a ``GrimoireError`` as one ``error: …`` line (or one JSON object under ``--json``)
with its exit code.

The commands' typer modules import these from ``cli/app.py``; ``cli/shortcuts.py`` runs the
plain forms of ``query`` and ``list`` with them and no option parser. An exit code leaves as
``SystemExit``, which the parser lets through and a test runner reads as the exit code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from grimoire_beholder.errors import GrimoireError

if TYPE_CHECKING:
    from grimoire_beholder.library import Library

T = TypeVar("T")

# Whether errors are told as JSON: set once --json is given (by its callback, or by
# entry.main for a usage error, when callbacks may not have run).
ERRORS_AS_JSON = {"on": False}

# Line breaks a message can carry in from a name (a file or folder named with a newline):
# escaped as Python writes them, so the error stays one line.
_BREAKS = {c: repr(chr(c))[1:-1] for c in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029)
           if c != 0x09}


def error_line(message: str, code: int) -> str:
    """How an error is told: ``error: …`` on one line (a line break inside the message
    escaped: ``\\n``), or under ``--json`` one JSON object."""
    if ERRORS_AS_JSON["on"]:
        from grimoire_beholder.cli.plain_output import json_text

        return json_text({"error": message, "exit_code": code}, sys.stderr, indent=None)
    return f"error: {message.translate(_BREAKS)}"


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line on stderr (``error_line``) and exit with ``code``."""
    from grimoire_beholder.cli.rendering import err

    err.print(error_line(message, code), markup=False, soft_wrap=True)
    raise SystemExit(code)


@contextmanager
def reported_errors(*, writes: bool = False) -> Iterator[None]:
    """Turn a GrimoireError into its one-line error and exit code; Ctrl-C into exit 130 and
    an ``interrupted`` line (JSON under ``--json``), which tells a command that ``writes``
    work a rerun resumes (ingest, sync, …) how to finish it; any other command says only
    ``interrupted``."""
    try:
        yield
    except GrimoireError as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted: committed work is kept; run the same command to resume" if writes
             else "interrupted", 130)


WAITING = ("waiting for an MCP client on stdin (this command is started by an assistant; "
           "Ctrl-C stops)")


def tell_waiting_on_a_terminal() -> None:
    """``serve-mcp`` on stdio run by hand: with stdin a terminal, one line on stderr says it
    waits for a client, so it does not look hung. Nothing when stdin is a pipe (an
    assistant started it); stdout never carries it."""
    try:
        by_hand = sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # a closed or odd stdin: an assistant's, not a person's
        by_hand = False
    if by_hand:
        print(WAITING, file=sys.stderr, flush=True)


def with_library(config: Path | None, fn: Callable[[Library], T], *, create: bool = False,
                 resumable: bool | None = None, **kwargs: Any) -> T:
    """Open the Library (``kwargs`` go to ``Library.open``: ``library``, ``read_only``, …),
    run ``fn`` on it, close it; errors reported as above. Ctrl-C is told as work a rerun
    resumes when ``resumable`` (by default: when not ``read_only``).

    A library that does not exist is created only with ``create`` (``ingest`` asks for it):
    every other command fails with the one line naming where it looked, creating nothing.
    One created here is taken away again when ``fn`` fails (a refused file leaves no empty
    library behind)."""
    from grimoire_beholder.library import Library

    if not create:
        writes = not kwargs.get("read_only", False) if resumable is None else resumable
        with (reported_errors(writes=writes),
              Library.open(config, create=False, **kwargs) as lib):
            return fn(lib)
    from grimoire_beholder.config import load_config

    with reported_errors(writes=True):
        cfg = load_config(config, library=kwargs.pop("library", None))
        new = [] if cfg.database_url else _not_yet_there(cfg.database_path)
        lib = Library.open(config=cfg, create=True, **kwargs)
        try:
            return fn(lib)
        except BaseException:
            empty = bool(new) and _holds_no_book(lib)
            lib.close()
            if empty:
                _take_away(new)
            raise
        finally:
            lib.close()
    raise AssertionError("unreachable")


def _holds_no_book(lib: Any) -> bool:
    try:
        return not lib.list_books()
    except Exception:  # a library that cannot even be read now is not taken away
        return False


def _not_yet_there(database: Path) -> list[Path]:
    """What creating a library at ``database`` would add: the database, its companions
    and its folder's marked config.toml, and each of its folders not there yet (innermost
    first); empty when the database already exists."""
    if database.exists():
        return []
    folders = [p for p in [database.parent, *database.parent.parents] if not p.exists()]
    files = [database.with_name(database.name + s) for s in ("", "-wal", "-shm", "-journal",
                                                             ".lock")]
    marker = database.parent / "config.toml"
    return [*files, *([] if marker.exists() else [marker]), *folders]


def _take_away(created: list[Path]) -> None:
    """Remove what a failed first ingest created (folders only when left empty)."""
    for path in created:
        try:
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink(missing_ok=True)
        except OSError:  # not empty, or not ours to remove: leave it
            return


def same_library(library: Path | None, config: Path | None) -> str:
    """The ``--library``/``--config`` a hit's ``show`` command needs to open the library
    this query searched (as an absolute path, so it runs from any folder); none for the
    default library, nor for a database URL (it may hold a password)."""
    from grimoire_beholder.locate import is_url

    if library is not None and not is_url(str(library)):
        import shlex

        return f" --library {shlex.quote(str(Path(library).absolute()))}"
    if config is not None:
        import shlex

        return f" --config {shlex.quote(str(Path(config).absolute()))}"
    return ""
