"""The plain forms of the commands run most often — ``query QUESTION``, ``list``, Claude
Code's ``hook prompt`` / ``hook session-start`` and ``serve-mcp`` as an assistant starts it —
run without the option parser.

typer checks every option of the command it runs through a pydantic ``TypeAdapter``; importing
pydantic for that is about a fifth of a cold ``query``'s CPU time, and more of the hooks'
(bench/cli_latency.py); ``serve-mcp``, whose MCP SDK imports pydantic anyway, saves typer's
own import and parse (bench/mcp_latency.py --cold). In the forms below no value needs more
checking than "a plain word", "a path" or "digits", so ``entry.main`` calls what the typer
command itself calls (``query_and_list``, ``assistant_hooks.print_hook``,
``mcp_server.server.serve`` after ``starting.open_library``) with exactly what the parser
would pass it, and typer is not imported (nor pydantic, but by serve-mcp's SDK). Anything
else — another option, ``--name=value``, a value that starts with ``-``, an option given
twice, ``--help``, a mistake, shell completion, Windows (where click expands wildcards in
arguments), serve-mcp's rights set in the environment — goes through the parser as before.
tests/test_cli_shortcuts.py runs every form both ways and compares what a person sees.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

# What each form accepts: flags, options taking a word, options taking digits, and how many
# arguments; the names are the command function's parameters.
_QUERY = ({"--json": "json_out", "--expand": "expand", "--explain": "explain"},
          {"--book": "book", "--author": "author", "--group": "group",
           "--path-prefix": "path_prefix", "--until": "until", "--tag": "tag",
           "--collection": "collection", "--series": "series"},
          {"--top-k": "top_k", "-k": "top_k"})
_LIST: tuple[dict[str, str], dict[str, str], dict[str, str]] = ({"--json": "json_out"}, {}, {})
_HOOK: tuple[dict[str, str], dict[str, str], dict[str, str]] = ({}, {}, {"--budget": "budget"})
_SERVE: tuple[dict[str, str], dict[str, str], dict[str, str]] = (
    {"--allow-sync": "allow_sync", "--allow-remove": "allow_remove"},
    {"--config": "config", "-c": "config", "--library": "library"}, {})
# serve-mcp's options that the environment can set too: the parser reads those.
_SERVE_ENV = ("GRIMOIRE_BEHOLDER_ALLOW_SYNC", "GRIMOIRE_BEHOLDER_ALLOW_ADD",
              "GRIMOIRE_BEHOLDER_ALLOW_REMOVE")
# More digits than int() takes (sys.get_int_max_str_digits, 4300 by default) raise ValueError;
# no count or budget is anywhere near this long, so such a value goes to the parser's error.
_MOST_DIGITS = 640


def shortcut(argv: Sequence[str]) -> Callable[[], int] | None:
    """What runs ``argv`` (the arguments after the program name) without the parser, as a
    function returning the exit code; None when the parser must run it."""
    if os.name == "nt" or "_GRIMOIRE_BEHOLDER_COMPLETE" in os.environ or not argv:
        return None
    name, rest = argv[0], argv[1:]
    if name == "query":
        command, found = _query, _plain(rest, *_QUERY, arguments=("question",))
        from grimoire_beholder.text import MOST_HITS  # run_query's own import: free

        if found is not None and not 1 <= found.get("top_k", 1) <= MOST_HITS:
            found = None  # the parser's usage error, exit 2
    elif name == "list":
        command, found = _list, _plain(rest, *_LIST, arguments=())
    elif name == "hook" and rest and rest[0] in ("prompt", "session-start"):
        command, found = _hook, _plain(rest[1:], *_HOOK, arguments=())
        if found is not None and found.get("budget", 1) < 1:
            found = None  # the parser's usage error, exit 2
        found = None if found is None else {**found, "hook": rest[0]}
    elif name == "serve-mcp" and not any(os.environ.get(v) is not None for v in _SERVE_ENV):
        command, found = _serve, _plain(rest, *_SERVE, arguments=())
        if found is not None and not all(_plain_path(found[k]) for k in ("config", "library")
                                         if k in found):
            found = None
    else:
        return None
    return None if found is None else partial(_run, command, found)


def _plain(args: Sequence[str], flags: Mapping[str, str], words: Mapping[str, str],
           numbers: Mapping[str, str], *, arguments: Sequence[str]) -> dict[str, Any] | None:
    """The parameters ``args`` give, when they are in the plain form; else None."""
    found: dict[str, Any] = {}
    positional: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if not token.startswith("-"):
            positional.append(token)
            continue
        name = flags.get(token) or words.get(token) or numbers.get(token)
        if name is None or name in found:
            return None
        if token in flags:
            found[name] = True
            continue
        value = next(tokens, None)
        if value is None or value.startswith("-"):
            return None
        if token in numbers:
            if not (value.isascii() and value.isdigit()) or len(value) > _MOST_DIGITS:
                return None  # the parser says what is wrong with it
            found[name] = int(value)
        else:
            found[name] = value
    if len(positional) != len(arguments):
        return None
    return {**found, **dict(zip(arguments, positional, strict=True))}


def _query(params: dict[str, Any]) -> None:
    from grimoire_beholder.cli.query_and_list import run_query
    from grimoire_beholder.cli.running import ERRORS_AS_JSON

    ERRORS_AS_JSON["on"] = bool(params.get("json_out"))
    run_query(**params)


def _list(params: dict[str, Any]) -> None:
    from grimoire_beholder.cli.query_and_list import run_list
    from grimoire_beholder.cli.running import ERRORS_AS_JSON

    ERRORS_AS_JSON["on"] = bool(params.get("json_out"))
    run_list(**params)


def _hook(params: dict[str, Any]) -> None:
    from grimoire_beholder.cli.assistant_hooks import print_hook

    print_hook(params["hook"], params.get("budget"))


def _plain_path(value: str) -> bool:
    """A path the parser would take as it is: not blank, not a drive letter or ``\\\\server``
    (refused off Windows), not a URL (``--library postgresql://…``)."""
    text = value.strip()
    return bool(text) and not text.startswith("\\\\") and "://" not in text and (
        len(text) < 3 or text[1] != ":" or text[2] not in "\\/")


def _serve(params: dict[str, Any]) -> None:
    from pathlib import Path

    from grimoire_beholder.cli.running import reported_errors, tell_waiting_on_a_terminal
    from grimoire_beholder.mcp_server.allowed import Upkeep
    from grimoire_beholder.mcp_server.starting import open_library

    upkeep = Upkeep(sync=params.get("allow_sync", False),
                    remove=params.get("allow_remove", False), add=None)
    with reported_errors(writes=False):  # Ctrl-C: a server has no work to resume
        library = open_library(Path(params["config"]) if "config" in params else None,
                               Path(params["library"]) if "library" in params else None)
        tell_waiting_on_a_terminal()
        from grimoire_beholder.mcp_server.server import serve  # the SDK, only now

        serve(library, upkeep if upkeep.any else None)


def _run(command: Callable[[dict[str, Any]], None], params: dict[str, Any]) -> int:
    """Run the command as ``entry.main`` runs the parser: an error's exit code leaves as
    ``SystemExit`` (``running.fail``), Ctrl-C is 130, end of input "aborted" (1), a closed
    stdout (``… | head``) 1 without a traceback."""
    try:
        command(params)
    except KeyboardInterrupt:
        return 130
    except EOFError:
        print("\naborted", file=sys.stderr)
        return 1
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    return 0


def _quiet_stdout() -> None:
    """After a broken pipe, send what is left of stdout nowhere, so the flush at exit does
    not fail again."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    except (OSError, ValueError):
        pass
