"""A tool call's wrong arguments in words: one line per argument, as the CLI words them.

The server checks every call's arguments against a strict pydantic model of the tool's
parameters (``server.StrictServer``); what pydantic says of a failure is written for a
programmer ("2 validation errors for get_book_outline_arguments / book_id.int / Input
should be a valid integer [type=int_type, …] / For further information visit …"). An
assistant reads :func:`argument_problems` instead: ``book_id: must be an id (integer) or a
slug (text), got true``; ``offset: must be ≥ 0, got -1``; ``folders: no such argument;
list_books takes folder, offset``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from grimoire_beholder.text import clip

NAME_MAX = 80  # characters of an argument's name echoed (an unknown one may be any length)
VALUE_MAX = 60  # characters of a wrong value echoed

# What a value of each JSON kind is called, by pydantic's error type for it.
_KINDS = {"int_type": "an integer", "int_from_float": "an integer", "string_type": "text",
          "bool_type": "true or false", "float_type": "a number", "list_type": "a list",
          "dict_type": "an object", "none_required": "null"}
# Arguments that take one of two kinds, named by what each kind means.
_MEANINGS = {"book_id": "an id (integer) or a slug (text)",
             "page": "a page number (integer) or a printed page label (text)",
             "until_chapter": "a chapter index (integer) or a chapter title (text)"}
# Bounds, by pydantic's error type: what the value must be, from the bound in its context.
_BOUNDS = {"greater_than_equal": ("ge", "≥"), "greater_than": ("gt", ">"),
           "less_than_equal": ("le", "≤"), "less_than": ("lt", "<")}


def argument_problems(tool: str, exc: ValidationError, parameters: Sequence[str]) -> list[str]:
    """One line per wrong argument of a call to ``tool``, in the order of its
    ``parameters`` (the names it takes); every unknown argument named in one last line.

    A value of a kind the argument does not take is named with the kinds it does take; a
    value of the right kind out of bounds with the bound; a required argument left out as
    missing. Values are echoed as JSON, clipped; a long text by its length."""
    by_field: dict[str, list[ErrorDetails]] = {}
    unknown: list[str] = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        name = str(loc[0]) if loc else ""
        if error["type"] == "extra_forbidden":
            unknown.append(name)
        else:
            by_field.setdefault(name, []).append(error)
    order = {p: i for i, p in enumerate(parameters)}
    lines = [f"{clip(name, NAME_MAX)}: {_problem(name, errors)}" for name, errors
             in sorted(by_field.items(), key=lambda item: order.get(item[0], len(order)))]
    if unknown:
        lines.append(_unknown_line(tool, unknown, parameters))
    return lines


def _problem(name: str, errors: list[ErrorDetails]) -> str:
    """What is wrong with one argument, from pydantic's errors for it (one per member of a
    union it failed)."""
    if any(e["type"] == "missing" for e in errors):
        return "missing; it is required"
    value = errors[0]["input"]
    kinds = [_KINDS[e["type"]] for e in errors if e["type"] in _KINDS]
    others = [e for e in errors if e["type"] not in _KINDS]
    if others:  # the value is of a kind the argument takes, and that kind's check failed
        return _rule(others[0])
    wanted = _MEANINGS.get(name) or " or ".join(dict.fromkeys(kinds))
    return f"must be {wanted}, got {_shown(value)}"


def _rule(error: ErrorDetails) -> str:
    """The rule a value of the right kind broke: a bound, a length, or pydantic's own
    words when neither (a validator's message)."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error["input"]
    if kind in _BOUNDS:
        key, sign = _BOUNDS[kind]
        return f"must be {sign} {ctx.get(key)}, got {_shown(value)}"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters, got {len(value):,}"
    if kind == "string_too_short":
        return f"must be at least {ctx.get('min_length')} characters, got {len(value):,}"
    message = str(error["msg"]).removeprefix("Value error, ")
    message = message.replace("Input should be", "must be", 1)
    return f"{message}, got {_shown(value)}"


def _unknown_line(tool: str, unknown: list[str], parameters: Sequence[str]) -> str:
    """The unknown arguments, each with the argument its name is likely a misspelling of,
    and the arguments ``tool`` takes."""
    named = []
    for name in unknown[:5]:
        close = difflib.get_close_matches(name[:NAME_MAX], parameters, n=1)
        named.append(clip(name, NAME_MAX) + (f" (did you mean {close[0]}?)" if close else ""))
    if len(unknown) > 5:
        named.append(f"and {len(unknown) - 5:,} more")
    what = "no such argument" if len(unknown) == 1 else "no such arguments"
    takes = ", ".join(parameters) if parameters else "no arguments"
    return f"{', '.join(named)}: {what}; {tool} takes {takes}"


def _shown(value: Any) -> str:
    """``value`` as the JSON the caller sent, clipped; a long text by its length."""
    if isinstance(value, str) and len(value) > VALUE_MAX:
        return f"text of {len(value):,} characters"
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return clip(shown, VALUE_MAX)
