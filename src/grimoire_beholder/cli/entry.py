"""The CLI's entry point (the ``grimoire-beholder`` script, ``python -m grimoire_beholder`` and
``python -m grimoire_beholder.cli.entry``).

The command modules register their commands on the one ``app.app`` when a command is looked
up (``app.Commands``); this module imports none of them, and not even typer until the
parser is needed: the plain forms of the hot commands run without it (``shortcuts.py``).
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

__all__ = ["main", "script"]

# The plain forms (shortcuts.py) whose process may end without the interpreter's teardown.
_QUICK_EXIT = ("query", "list", "hook", "serve-mcp")


def __getattr__(name: str) -> Any:
    """``entry.app``: the one Typer app (``app.app``), imported when first asked for."""
    if name == "app":
        from grimoire_beholder.cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the CLI: usage mistakes become one ``error:`` line, exit code 2 (1 for ``hook``:
    Claude Code takes a hook's exit code 2 as blocking the prompt, any other as an error it
    shows and goes on); a module the
    command needs that cannot be imported (a broken or partial install) one line, exit 1;
    Ctrl-C exit code 130, without a traceback; results that could not be written (stdout
    closed, a full disk) one line, exit 1."""
    try:
        try:
            _main()
        except ImportError as exc:
            sys.exit(_missing(exc))
        except KeyboardInterrupt:  # Ctrl-C before a command's own handling (while importing)
            sys.exit(130)
    except SystemExit as exc:
        if exc.code in (0, None) and sys.argv[1:2] != ["hook"]:  # hooks never fail
            _results_written()
        raise


def script() -> None:
    """The ``grimoire-beholder`` script and ``python -m``: :func:`main`, and after a plain
    form of ``query``, ``list``, ``hook`` or ``serve-mcp`` the process ends at once, its
    output flushed, without tearing the interpreter down — unloading numpy and onnxruntime
    took a cold ``query`` about a sixth of its CPU time (README, "Performance"), and the MCP
    SDK's modules more of a server's. Those forms leave nothing the teardown would finish:
    the library is closed (a server's lifespan waits for its warm-up first), and no thread of
    theirs has work left. Ctrl-C (exit code 130) ends any command so too, once its own
    handling has run: the teardown joins every worker thread, and one the interrupt caught
    while its pool was starting it is never told to stop — a ``query`` hung there for good.
    In-process callers of :func:`main` (the tests) keep the ordinary exit."""
    from grimoire_beholder.cli.shortcuts import shortcut

    quick = sys.argv[1:2] != [] and sys.argv[1] in _QUICK_EXIT and (
        shortcut(sys.argv[1:]) is not None)
    try:
        main()
    except SystemExit as exc:
        if (quick and (exc.code is None or isinstance(exc.code, int))) or exc.code == 130:
            _leave(exc.code or 0)
        raise


def _leave(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``code``; a flush that fails is
    left to the ordinary exit, which reports it."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


def _results_written() -> None:
    """Exit 1 with one line on stderr when what the command wrote to stdout was lost."""
    from grimoire_beholder.cli.running import error_line
    from grimoire_beholder.cli.terminal import results_lost

    why = results_lost()
    if why is not None:
        print(error_line(f"the results were not written: {why}", 1), file=sys.stderr)
        sys.exit(1)


def _missing(exc: ImportError) -> int:
    """Tell a failed import in one line on stderr (JSON under ``--json``): the commands'
    modules load only when one runs, so this is the command's dependency, not the CLI's."""
    from grimoire_beholder.cli.plain_output import json_text

    what = (f"the Python module {exc.name!r} it needs is not installed" if exc.name
            else f"a module it needs does not load ({' '.join(str(exc).split())})")
    message = f"this command cannot run: {what}; reinstall grimoire-beholder-mcp"
    print(json_text({"error": message, "exit_code": 1}, sys.stderr, indent=None)
          if "--json" in sys.argv[1:] else f"error: {message}", file=sys.stderr)
    return 1


def _main() -> None:
    from grimoire_beholder.cli.shortcuts import shortcut
    from grimoire_beholder.cli.terminal import install

    install()  # no control character from a book or a file name reaches the terminal raw
    if sys.argv[1:2] == ["help"]:  # as git's and uv's: `help [COMMAND…]` is `… --help`
        sys.argv[1:] = [*sys.argv[2:], "--help"]
    plain = shortcut(sys.argv[1:])
    if plain is not None:
        sys.exit(plain())
    from typer import Abort, TyperException

    from grimoire_beholder.cli.app import ERRORS_AS_JSON, app, error_line

    try:
        code = app(standalone_mode=False)
    except TyperException as exc:  # a usage error (exit code 2) carries its command's ctx
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        if "--json" in sys.argv[1:]:  # its callback may not have run: the usage was wrong
            ERRORS_AS_JSON["on"] = True
        code = exc.exit_code
        if code == 2 and sys.argv[1:2] == ["hook"]:  # 2 from a hook: Claude Code blocks the prompt
            code = 1
        print(error_line(f"{exc.format_message()}{hint}", code), file=sys.stderr)
        sys.exit(code)
    except Abort:
        print("aborted", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    script()
