"""What reaches the terminal: control characters from books and file names, made visible.

A file name, a heading or a line of a book can hold terminal escape sequences
(``\\x1b[2J`` clears the screen, ``\\x1b]0;…`` retitles the window, a bare ``\\r`` overwrites
the line). The CLI prints such text as it comes, so every C0 control but tab and newline,
DEL, every C1 control, the bidirectional overrides (U+202A–U+202E, U+2066–U+2069, which
reorder the rest of a line) and every lone surrogate (the undecodable bytes of an argument or
a path, which a UTF-8 stream cannot write: a strict one raises, a lenient one writes the
invalid bytes) is written as its ``\\u001b`` escape instead, at the two exits
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
import errno
import io
import os
import re
import sys
from collections.abc import Iterable
from typing import Any, TextIO

# C0 but tab and newline, DEL, C1; and the bidirectional embeddings, overrides and isolates
# (U+202A–U+202E, U+2066–U+2069), which reorder the rest of a line ("Trojan Source"); lone
# surrogates (undecodable bytes of an argument or a path), which no UTF-8 stream writes.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """``text`` with each control character but tab and newline as a ``\\u001b`` escape."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TerminalSafeStream:
    """A text stream that escapes control characters in everything written through it."""

    def __init__(self, inner: TextIO | ResultsStream | NotesStream) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(terminal_safe(text))  # bytes raise TypeError, as on a text stream
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    @property
    def rich_proxied_file(self) -> TextIO | ResultsStream | NotesStream:
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


class _Closed:
    """What stands for a stdout closed before the CLI started (``>&-``: Python then has
    no ``sys.stdout``, and ``print`` would drop the results without a word)."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("standard output is closed")


_LONG_TEXT = 8192  # characters: the text layer's own chunk; shorter writes are buffered


class ResultsStream:
    """stdout under the escaping, remembering why results written to it were lost — it
    was closed, or a write failed (a full disk) — instead of failing mid-command or not at
    all; :func:`results_lost` tells ``entry.main``, which then exits 1 with one line. A
    broken pipe (``… | head``) still raises, for the commands' own quiet exit.

    A long text (a query's ``--json``, a whole table) goes to the byte buffer until every
    byte is taken: CPython's buffered writer returns a short count, without an error, when
    the pipe's reader goes away during a write larger than its buffer, and the text layer
    drops that count — the results were cut and the command exited 0."""

    def __init__(self, inner: TextIO | _Closed) -> None:
        self._inner = inner
        self.lost: str | None = None

    def write(self, text: str) -> int:
        if isinstance(self._inner, _Closed):
            self.lost = self.lost or ("standard output is closed" if text else None)
        elif self.lost is None:
            try:
                return self._write(text)
            except BrokenPipeError:
                raise
            except OSError as exc:
                self._failed(exc)
        return len(text)

    def _write(self, text: str) -> int:
        inner = self._inner
        buffer = getattr(inner, "buffer", None)
        if len(text) < _LONG_TEXT or buffer is None or os.linesep != "\n":
            return inner.write(text)
        data = memoryview(text.encode(inner.encoding, getattr(inner, "errors", None) or "strict"))
        inner.flush()  # what the text layer holds goes first
        while data:
            written = buffer.write(data)
            if not written:  # a non-blocking stream that is full: what is left is lost
                raise OSError(errno.EAGAIN, "standard output would block")
            data = data[written:]
        return len(text)

    def flush(self) -> None:
        if self.lost is None:
            try:
                self._inner.flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.lost = exc.strerror or str(exc)
        with contextlib.suppress(OSError, ValueError):  # what is buffered would fail at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._inner.fileno())

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer …
        return getattr(self._inner, name)


class NotesStream:
    """stderr under the escaping: a note, warning, progress bar or error line that cannot be
    written (stderr on a full disk, its pipe closed) is dropped instead of ending the command
    — before, ``query … 2>/dev/full`` lost its results to the low-confidence note that went
    first. stderr is where a failure would be told, so there is nowhere else to tell it; the
    results on stdout and the exit code are still right."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        try:
            self._inner.write(text)
        except OSError:
            self._drop()
        return len(text)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except OSError:
            self._drop()

    def _drop(self) -> None:
        """Send the rest of stderr nowhere, so what is buffered does not fail again."""
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._inner.fileno())

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer …
        return getattr(self._inner, name)


def results_lost() -> str | None:
    """Why what the command wrote to stdout did not get there (after flushing it), or
    None: nothing was lost, or stdout is not the one :func:`install` set up."""
    stream: Any = sys.stdout
    while stream is not None and not isinstance(stream, ResultsStream):
        stream = getattr(stream, "rich_proxied_file", None)
    if stream is None:
        return None
    stream.flush()
    return str(stream.lost) if stream.lost else None


def install() -> None:
    """Escape control characters in all further writes to stdout and stderr, make
    neither raise for a character its encoding cannot write, have stdout remember
    results it lost (:class:`ResultsStream`) and stderr drop what it cannot write
    (:class:`NotesStream`)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not isinstance(stream, TerminalSafeStream):
            _never_fail_encoding(stream)
    if not isinstance(sys.stdout, TerminalSafeStream):
        sys.stdout = TerminalSafeStream(ResultsStream(sys.stdout or _Closed()))
    if sys.stderr is not None and not isinstance(sys.stderr, TerminalSafeStream):
        sys.stderr = TerminalSafeStream(NotesStream(sys.stderr))
