"""Output that needs no rich: JSON, text for a stream rich would not style, and bytes.

Importing rich costs a cold ``query`` about as much as its search (bench/cli_latency.py).
When stdout is a pipe or a file — an assistant running the CLI, ``| less``, a script — rich
prints no styles, and with soft wrapping no line breaks of its own: what it writes is the
text it was given with control characters escaped (``terminal.py``), except that it expands
tabs and trims the whitespace that ends a line longer than its width. So a line with
neither is written here as rich would write it, and anything else (a terminal; rich's
``FORCE_COLOR`` and ``TTY_COMPATIBLE``, which make it style a pipe; Jupyter or IDLE;
Windows, where rich splits long writes) goes to rich. tests/test_cli_plain_output.py holds
the two to the same bytes.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from grimoire_beholder.cli.terminal import terminal_safe

# Variables with which rich styles a stream that is not a terminal, or leaves one plain.
_RICH_DECIDES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite as null (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_text(data: Any, stream: Any, *, indent: int | None = 2) -> str:
    """``data`` as JSON for ``stream``, always valid JSON once written: a NaN is null, and
    every character but ASCII is a ``\\u`` escape unless the stream writes UTF-8 (one its
    encoding lacks would come out as Python's ``\\xb7``, which JSON does not have)."""
    try:
        utf8 = codecs.lookup(getattr(stream, "encoding", None) or "").name == "utf-8"
    except LookupError:
        utf8 = False
    try:
        return json.dumps(data, ensure_ascii=not utf8, indent=indent, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(data), ensure_ascii=not utf8, indent=indent)


def print_json(data: Any) -> None:
    """JSON on stdout, unstyled, for scripts; always valid JSON (:func:`json_text`). A
    closed pipe (``… | head``) ends the command with exit code 1, as plain text does."""
    try:
        sys.stdout.write(json_text(data, sys.stdout) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet(sys.stdout)
        raise SystemExit(1) from None


def plain_stream(stderr: bool = False) -> TextIO | None:
    """The stream under stdout's (or stderr's) escaping wrapper when rich would write
    ``lines_stay_plain`` text to it unchanged: not a terminal, nothing telling rich
    otherwise. None when rich must write it."""
    stream = sys.stderr if stderr else sys.stdout
    if (stream is None or os.name == "nt" or any(v in os.environ for v in _RICH_DECIDES)
            or "IPython" in sys.modules or "idlelib" in sys.modules):
        return None
    while hasattr(stream, "rich_proxied_file"):  # as rendering's consoles write
        stream = stream.rich_proxied_file
    try:
        return None if stream.isatty() else stream
    except (AttributeError, ValueError):  # no isatty, or closed: rich decides
        return None


def lines_stay_plain(lines: Sequence[str]) -> bool:
    """Whether rich would print each of ``lines`` (soft-wrapped, unstyled, no emoji codes)
    exactly as it is: no tab, and no line in it ending in whitespace."""
    return not any("\t" in text or any(line[-1:].isspace() for line in text.split("\n"))
                   for text in lines)


def write_lines(stream: TextIO, lines: Sequence[str]) -> None:
    """Each of ``lines`` and a newline, control characters escaped, as rich writes them; a
    closed pipe (``… | head``) ends the command with exit code 1, as rich ends it."""
    try:
        stream.write("".join(terminal_safe(line) + "\n" for line in lines))
        stream.flush()
    except BrokenPipeError:
        _quiet(stream)
        raise SystemExit(1) from None


def binary_to_stdout(data: bytes) -> None:
    """``data`` and nothing else on stdout, every byte taken (``page -o -``): past the text
    layer to its byte buffer, which on Windows too writes bytes unchanged. A closed pipe
    (``… | head -c 8``) ends the command with exit code 1, as text does; stdout closed
    (``>&-``) or another failed write raises OSError for the caller's one error line. The
    caller refuses a terminal first: binary there only garbles the screen."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # terminal.py's stand-in for a closed stdout has no bytes to take
        raise OSError(errno.EBADF, "standard output is closed")
    try:
        sys.stdout.flush()  # whatever the text layer holds goes first
        view = memoryview(data)
        while view:  # a short count, without an error, when the reader goes mid-write
            written = buffer.write(view)
            if not written:
                raise OSError(errno.EAGAIN, "standard output would block")
            view = view[written:]
        buffer.flush()
    except BrokenPipeError:
        _quiet(sys.stdout)
        raise SystemExit(1) from None


def _quiet(stream: TextIO) -> None:
    """After a broken pipe, send what is left of ``stream`` nowhere, so the flush at exit
    does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
