"""Setting one member of a JSON-with-comments file (VS Code's ``mcp.json``) as text, so the
user's comments, trailing commas and layout survive: ``set_member(text, key, name, value)``.

VS Code reads its ``mcp.json`` as JSONC — ``//`` and ``/* */`` comments and trailing commas
are allowed — so a file Python's ``json`` refuses can be one VS Code reads. Comments are
blanked to spaces of the same length (line breaks kept) and trailing commas to a space, so
every position in the blanked text is the same position in the user's text; the stdlib
decoder (``raw_decode``) then gives each value's span, and the edit is made in the user's text.
The caller checks the result by parsing it again (:func:`loads`).
"""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class JsoncError(ValueError):
    """The text is not JSONC, or not of the shape an edit needs (a message for the user)."""


def blanked(text: str) -> str:
    """``text`` with its comments and trailing commas replaced by spaces (newlines kept);
    strings, including ``//`` inside them, are untouched."""
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1  # a comma not yet followed by a value: dropped if a closer comes next
    while i < n:
        ch = text[i]
        if ch == '"':
            i = _string_end(text, i)
            last_comma = -1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JsoncError("a /* comment is never closed")
            end += 2
            out[i:end] = ["\n" if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        if ch == ",":
            last_comma = i
        elif ch in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif ch not in _SPACE:
            last_comma = -1
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """The index just past the JSON string that opens at ``start``."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    raise JsoncError("a string is never closed")


def loads(text: str) -> Any:
    """The value of a JSONC text (comments and trailing commas allowed)."""
    try:
        return json.loads(blanked(text))
    except json.JSONDecodeError as exc:
        raise JsoncError(str(exc)) from exc


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _members(plain: str, open_at: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object whose ``{`` is at ``open_at`` in blanked text: (key, key
    start, value start, value end) each, and the index of its ``}``."""
    members = []
    i = _skip(plain, open_at + 1)
    while i < len(plain) and plain[i] != "}":
        key, after_key = _DECODER.raw_decode(plain, i)
        colon = _skip(plain, after_key)
        value_start = _skip(plain, colon + 1)
        _, value_end = _DECODER.raw_decode(plain, value_start)
        members.append((key, i, value_start, value_end))
        i = _skip(plain, value_end)
        if i < len(plain) and plain[i] == ",":
            i = _skip(plain, i + 1)
    return members, i


def _indent_at(text: str, index: int) -> str:
    """The whitespace that opens the line holding ``index``."""
    line_start = text.rfind("\n", 0, index) + 1
    line = text[line_start:index]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _unit(text: str) -> str:
    """The file's step of indentation: a tab if a line is indented with one, else the
    fewest spaces a line is indented by (two in a file with no indented line)."""
    widths = []
    for line in text.splitlines():
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            if line.startswith("\t"):
                return "\t"
            widths.append(len(line) - len(line.lstrip(" ")))
    return " " * min(widths) if widths else "  "


def _dumped(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON indented by ``unit`` whose inner lines continue at ``indent``."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _insert(text: str, plain: str, open_at: int, name: str, value: Any) -> str:
    """``text`` with ``"name": value`` as the first member of the object opened at
    ``open_at`` (a comma after it when the object has members already)."""
    members, close_at = _members(plain, open_at)
    unit = _unit(text)
    indent = _indent_at(text, members[0][1]) if members else _indent_at(text, open_at) + unit
    member = f"{json.dumps(name, ensure_ascii=False)}: {_dumped(value, indent, unit)}"
    if members:
        at = open_at + 1  # after a comment on the brace's own line, which is about the object
        line_end = plain.find("\n", at)
        if line_end >= 0 and not plain[at:line_end].strip():
            at = line_end
        return text[:at] + f"\n{indent}{member}," + text[at:]
    inside = text[open_at + 1: close_at]  # only spaces and comments: kept after the member
    rest = inside if inside.strip() else f"\n{_indent_at(text, open_at)}"
    return text[: open_at + 1] + f"\n{indent}{member}" + rest + text[close_at:]


def set_member(text: str, key: str, name: str, value: Any) -> str:
    """``text`` with ``root[key][name] = value``, everything else byte for byte.

    ``root[key]`` is created when missing; :class:`JsoncError` when the root or
    ``root[key]`` is not an object."""
    try:
        return _set_member(text, key, name, value)
    except json.JSONDecodeError as exc:
        raise JsoncError(str(exc)) from exc


def _set_member(text: str, key: str, name: str, value: Any) -> str:
    plain = blanked(text)
    root_at = _skip(plain, 0)
    if root_at >= len(plain) or plain[root_at] != "{":
        raise JsoncError("the file does not hold a JSON object")
    members, _ = _members(plain, root_at)
    found = [m for m in members if m[0] == key]
    if not found:
        return _insert(text, plain, root_at, key, {name: value})
    _, _, servers_at, _ = found[-1]  # a repeated key: the last one wins, as in json.loads
    if plain[servers_at] != "{":
        raise JsoncError(f"'{key}' is not an object")
    entries, _ = _members(plain, servers_at)
    mine = [m for m in entries if m[0] == name]
    if not mine:
        return _insert(text, plain, servers_at, name, value)
    _, name_at, value_start, value_end = mine[-1]
    return (text[:value_start] + _dumped(value, _indent_at(text, name_at), _unit(text))
            + text[value_end:])
