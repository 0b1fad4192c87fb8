"""serve-mcp's stdin as lines, each at most ``MAX_LINE_BYTES`` long (what the SDK lets an
HTTP request body have), so a client that never sends a newline cannot grow the server's
memory without end.

A longer line is not kept: it is read on to its newline in blocks, each block passed through
:class:`TopLevelKeys` (which keeps a few bytes, never the line), and comes back as
:class:`OverLong` — its length, and the request id it carries if one could be read — so the
wire can answer that request with an error and go on with the next line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import BinaryIO

MAX_LINE_BYTES = 4 * 1024 * 1024  # as mcp.server.transport_security's largest HTTP body

# A string's body up to its closing quote or a backslash it ends with (possessive: no
# backtracking state kept however long the string).
_STRING_BODY = re.compile(rb'(?:[^"\\]++|\\.)*+', re.S)
_OUTSIDE_STOP = re.compile(rb'["{}\[\],:]')  # in the outer object
_NESTED_STOP = re.compile(rb'["{}\[\]]')  # deeper: commas and colons do not matter
# Flat text and innermost bracket pairs of a nested value, up to its next string: read
# at once, they leave the depth as it was ([1, 2], {"a": 1} sit inside strings' quotes).
_FLAT = re.compile(rb'(?:[^"\[\]{}]++|\[[^"\[\]{}]*+\]|\{[^"\[\]{}]*+\})*+')
_RUN = 4096  # bytes of a nested value counted at once while the depth cannot fall to 1
_KEPT = 256  # bytes of a top-level key or of the id's value kept; longer ones are not ids


class TopLevelKeys:
    """Whether a JSON object read in pieces has a top-level ``method`` and ``id``, and the
    raw value of its ``id``.

    Only what sits directly in the outer object is looked at: strings and nested values are
    skipped by regular-expression jumps and byte counts, so a long line costs little, and
    at most a few hundred bytes are kept (not the keys: a line may have millions). Input
    that is not an object stops the reading (no id); an array is noted as ``batch``."""

    def __init__(self) -> None:
        self.has_method = False
        self.has_id = False
        self.batch = False
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._expect_key = False
        self._key: bytearray | None = None  # the top-level key being read
        self._last_key: str | None = None
        self._value: bytearray | None = None  # the id's value being read
        self._id_raw: bytes | None = None
        self._stopped = False

    @property
    def request_id(self) -> str | int | None:
        """The object's ``id`` if it was a string or an integer JSON-RPC allows, else None."""
        if self._id_raw is None:
            return None
        try:
            value = json.loads(self._id_raw)
        except ValueError:
            return None
        return value if isinstance(value, str | int) and not isinstance(value, bool) else None

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Read the next piece of the line."""
        data = bytes(data)
        i, n = 0, len(data)
        while i < n and not self._stopped:
            if self._in_string:
                i = self._string(data, i, n)
                continue
            if self._depth > 1:
                i = self._nested_run(data, i, n)
                if i >= n:
                    return
            stops = _NESTED_STOP if self._depth > 1 else _OUTSIDE_STOP
            match = stops.search(data, i)
            end = match.start() if match else n
            self._take(data[i:end])
            if match is None:
                return
            i = end + 1
            self._structural(data[end:i])

    def _string(self, data: bytes, i: int, n: int) -> int:
        """Read on inside a string from ``i``; the position after what was read."""
        if self._escaped:
            self._take(data[i:i + 1])
            self._escaped = False
            return i + 1
        match = _STRING_BODY.match(data, i)
        end = match.end() if match else i
        self._take(data[i:end])
        if end == n:
            return n
        if data[end] == 0x5C:  # a backslash ending the piece: it escapes the next byte
            self._take(data[end:end + 1])
            self._escaped = True
            return end + 1
        self._in_string = False
        if self._key is None:
            self._take(data[end:end + 1])
        self._string_ended()
        return end + 1

    def _nested_run(self, data: bytes, i: int, n: int) -> int:
        """Skip, by counting brackets, what lies before the next string inside a nested
        value while the depth cannot fall back to the outer object; where to read on."""
        quote = data.find(b'"', i)
        stop = n if quote < 0 else quote
        while i < stop:
            j = min(stop, i + _RUN)
            closes = data.count(b"}", i, j) + data.count(b"]", i, j)
            if self._depth - closes <= 1:
                break
            self._depth += data.count(b"{", i, j) + data.count(b"[", i, j) - closes
            self._take(data[i:j])
            i = j
        flat = _FLAT.match(data, i, stop)
        end = flat.end() if flat else i
        self._take(data[i:end])
        return end

    def _structural(self, char: bytes) -> None:
        if char == b'"':
            self._in_string = True
            if self._depth == 1 and self._expect_key:
                self._key = bytearray()
            else:
                self._take(char)
        elif char in (b"{", b"["):
            if self._depth == 0 and char == b"[":
                self.batch = self._stopped = True
            self._take(char)
            self._depth += 1
            self._expect_key = self._depth == 1
        elif char in (b"}", b"]"):
            self._depth -= 1
            if self._depth <= 0:
                self._end_value()
                self._stopped = True
            else:
                self._take(char)
        elif char == b"," and self._depth == 1:
            self._end_value()
            self._expect_key = True
        elif char == b":" and self._depth == 1 and self._last_key is not None:
            if self._last_key == "id":
                self._value = bytearray()
            self._last_key = None
        else:
            self._take(char)

    def _string_ended(self) -> None:
        if self._key is None:
            return
        key: str | None = self._key.decode("latin-1")  # "id" and "method" are ASCII
        if b"\\" in self._key:  # an escape (\u0069d): read as JSON does
            try:
                key = json.loads(b'"' + bytes(self._key) + b'"')
            except ValueError:
                key = None
        if key == "method":
            self.has_method = True
        elif key == "id":
            self.has_id = True
        self._key, self._last_key, self._expect_key = None, key, False

    def _end_value(self) -> None:
        if self._value is not None:
            self._id_raw = bytes(self._value).strip() if len(self._value) <= _KEPT else b""
        self._value = None

    def _take(self, data: bytes) -> None:
        kept = self._key if self._key is not None else self._value
        if kept is not None and len(kept) <= _KEPT:
            kept += data[:_KEPT + 1 - len(kept)]


@dataclass(frozen=True)
class OverLong:
    """A line longer than ``MAX_LINE_BYTES``, read to its end and not kept."""

    size: int  # bytes, without the newline
    request_id: str | int | None  # its id, when it asks for an answer (has a method)
    answered: bool = False  # it asks for an answer: a request (whatever its id) or a batch


class Lines:
    """The lines of an unbuffered binary stream, read in blocks of up to ``BLOCK`` bytes.

    ``readline`` of an unbuffered file reads one byte a call: a 5 MB request line took 4 s
    of CPU before it was even parsed. A buffered reader would not do either: its close waits
    for its lock, which a read left waiting on another thread holds (Ctrl-C while the client
    keeps stdin open would then hang), so the buffer is kept here, outside the file. The
    buffer never holds more than ``limit`` bytes and a block."""

    BLOCK = 1 << 16

    def __init__(self, raw: BinaryIO, limit: int = MAX_LINE_BYTES) -> None:
        self._raw = raw
        self._limit = limit
        self._buffer = bytearray()

    def readline(self) -> bytes | OverLong:
        """The next line with its newline; at the end of the stream what is left (or b"");
        a line longer than the limit (not counting its CR or LF) as :class:`OverLong`."""
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            if len(self._buffer) > self._limit + 1:  # + the CR of a CRLF
                return self._skip_rest()
            searched = len(self._buffer)
            block = self._raw.read(self.BLOCK)
            if not block:
                line = bytes(self._buffer)
                self._buffer.clear()
                return line
            self._buffer += block
        if end - (end > 0 and self._buffer[end - 1] == 0x0D) > self._limit:
            return self._skip_rest()
        line = bytes(self._buffer[:end + 1])
        del self._buffer[:end + 1]
        return line

    def _skip_rest(self) -> OverLong:
        """Read the over-long line in the buffer on to its newline (or the end of the
        stream), keeping only its top-level keys; the buffer keeps what follows."""
        keys = TopLevelKeys()
        size = 0
        while True:
            end = self._buffer.find(b"\n")
            piece = memoryview(self._buffer)[:end if end >= 0 else len(self._buffer)]
            for start in range(0, len(piece), self.BLOCK):
                keys.feed(piece[start:start + self.BLOCK])
            size += len(piece)
            piece.release()
            if end >= 0:
                del self._buffer[:end + 1]
                break
            self._buffer.clear()
            block = self._raw.read(self.BLOCK)
            if not block:
                break
            self._buffer += block
        asks = keys.has_method and keys.has_id
        return OverLong(size, keys.request_id if asks else None, asks or keys.batch)
