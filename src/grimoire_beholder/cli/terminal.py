"""What reaches the terminal: control characters from books and file names, made visible.

A file name, a heading or a line of a book can hold terminal escape sequences
(``\\x1b[2J`` clears the screen, ``\\x1b]0;…`` retitles the window, a bare ``\\r`` overwrites
the line). The CLI prints such text as it comes, so every C0 control but tab and newline,
DEL, every C1 control and the bidirectional overrides (U+202A–U+202E, U+2066–U+2069, which
reorder the rest of a line) is written as its ``\\u001b`` escape instead, at the two exits
everything printed goes through — not command by command, which one would forget:

* ``install()`` (called by ``cli.main``) wraps ``sys.stdout`` and ``sys.stderr``, so
  ``print``, click's prompts and messages, and any command's plain output are escaped;
* the rich consoles of ``rendering`` escape the text they are given (``render_str``)
  and write past the wrappers, since their own styles are escape codes.

JSON stays exact: ``json.dumps`` already escapes C0 controls, and ``\\u009b`` is how JSON
itself writes a C1 one, so a JSON document through the wrapper decodes to the same data.
Imports nothing heavy: every command, ``--help`` included, goes through ``install``.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable
from typing import Any, TextIO

# C0 but tab and newline, DEL, C1; and the bidirectional embeddings, overrides and isolates
# (U+202A–U+202E, U+2066–U+2069), which reorder the rest of a line ("Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with each control character but tab and newline as a ``\\u001b`` escape."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TerminalSafeStream:
    """A text stream that escapes control characters in everything written through it."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(terminal_safe(text))  # bytes raise TypeError, as on a text stream
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    @property
    def rich_proxied_file(self) -> TextIO:
        """Where rich writes (rich looks for this attribute): past the escaping, because
        rendering's consoles escape their text themselves and add styles after."""
        return self._inner

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer, flush …
        return getattr(self._inner, name)


def _never_fail_encoding(stream: TextIO) -> None:
    """A character the stream's encoding lacks (``·`` on an ASCII or C-locale terminal) is
    written as its ``\\xb7`` escape instead of raising UnicodeEncodeError mid-command."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and (stream.encoding or "").lower().replace("-", "") != "utf8":
        with contextlib.suppress(ValueError, OSError):  # one that cannot change: leave it
            reconfigure(errors="backslashreplace")


def install() -> None:
    """Escape control characters in all further writes to stdout and stderr, and make
    neither raise for a character its encoding cannot write."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not isinstance(stream, TerminalSafeStream):
            _never_fail_encoding(stream)
    if sys.stdout is not None and not isinstance(sys.stdout, TerminalSafeStream):
        sys.stdout = TerminalSafeStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, TerminalSafeStream):
        sys.stderr = TerminalSafeStream(sys.stderr)
