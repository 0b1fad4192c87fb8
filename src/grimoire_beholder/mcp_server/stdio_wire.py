"""serve-mcp's stdio transport: one JSON-RPC message per line each way, and an answer to
every line that asks for one.

The SDK's reader drops a line it cannot validate, so the client waits for its own timeout:
a lone surrogate escape (``"\\ud800"``, half an emoji from ``JSON.stringify``), an integer
longer than Python parses (4,300 digits), malformed JSON, a batch array, bytes that are not
UTF-8. Here each line is tried as the SDK would; a line it rejects is parsed by ``json`` and
repaired where the request is still clear (a lone surrogate becomes U+FFFD, an over-long
integer its digits as a string, which no argument accepts), or answered with ``-32700``
(not JSON, not UTF-8) or ``-32600`` (a batch, not a JSON-RPC message, an id that is not a
string or an integer — which the SDK would take for a notification and never answer).
A line longer than HTTP's largest body is not kept (``stdio_lines``): its request gets an
Invalid Request error, or, with no id to answer, a line on stderr.

While serving, fd 0 reads the null device and fd 1 writes to stderr (as the SDK does), so
stray output of a library cannot corrupt the protocol; the wire uses private duplicates.
Only ``os.dup``/``os.dup2``: nothing POSIX-only, so the same code serves on Windows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from anyio.from_thread import BlockingPortal
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.lowlevel import Server
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from grimoire_beholder.mcp_server.stdio_lines import MAX_LINE_BYTES, Lines, OverLong

MAX_INT_DIGITS = 4_000  # below Python's int_max_str_digits (4,300)


# A ``\uD800``–``\uDFFF`` escape: the SDK takes a lone one, then cannot write the reply.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class _Digits(str):
    """An integer too long to parse, kept as its digits."""


def _int_or_digits(digits: str) -> int | str:
    return int(digits) if len(digits) <= MAX_INT_DIGITS else _Digits(digits)


def _scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(value) else value
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _error(request_id: Any, code: int, message: str) -> SessionMessage:
    valid_id = request_id if isinstance(request_id, str | int) and not isinstance(
        request_id, bool) else None
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=valid_id,
                                       error=ErrorData(code=code, message=message)))


def read_line(line: bytes) -> tuple[SessionMessage | None, SessionMessage | None]:
    """One line of input → (the message for the server, the answer to write at once);
    either or both None (a blank line is neither)."""
    line = line.strip()
    if not line:
        return None, None
    if not _SURROGATE_ESCAPE.search(line):
        try:
            return _checked(jsonrpc_message_adapter.validate_json(line, by_name=False), line)
        except ValueError:
            pass
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, _error(None, PARSE_ERROR, "Parse error: the line is not UTF-8")
    try:
        data = json.loads(text, parse_int=_int_or_digits)
    except (ValueError, RecursionError):
        return None, _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if isinstance(data, list):
        return None, _error(None, INVALID_REQUEST,
                            "Invalid Request: batches are not supported; send one message a line")
    if not isinstance(data, dict):
        return None, _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    if isinstance(data.get("id"), _Digits):
        return None, _error(None, INVALID_REQUEST, "Invalid Request: the id is too long")
    data = _scrub(data)
    try:
        return _checked(jsonrpc_message_adapter.validate_python(data, by_name=False), data)
    except ValidationError:  # answered even without an id, as JSON-RPC 2.0 asks
        return None, _error(data.get("id"), INVALID_REQUEST,
                            "Invalid Request: not a valid JSON-RPC 2.0 message")


def over_long(line: OverLong) -> SessionMessage | None:
    """The answer to a line too long to read: an Invalid Request error to its id — ``null``
    when the request's id could not be used (``null``, a fraction, an object) or the line is
    a batch, as for a line of any length — or none when nothing in it asks for an answer (a
    notification, a response, not JSON-RPC); either way a line on stderr."""
    limit = f"{MAX_LINE_BYTES // (1024 * 1024)} MiB"
    if not line.answered:
        print(f"serve-mcp: skipped a line of {line.size:,} bytes, longer than the {limit} a "
              "message may have; no request id in it to answer", file=sys.stderr, flush=True)
        return None
    print(f"serve-mcp: skipped a line of {line.size:,} bytes, longer than the {limit} a "
          f"message may have; answered request {line.request_id!r} with an error",
          file=sys.stderr, flush=True)
    return _error(line.request_id, INVALID_REQUEST,
                  f"Invalid Request: the message is {line.size:,} bytes long; serve-mcp reads "
                  f"at most {limit} ({MAX_LINE_BYTES:,} bytes) a line")


def _checked(message: JSONRPCMessage, raw: bytes | dict[str, Any]
             ) -> tuple[SessionMessage | None, SessionMessage | None]:
    """``message`` for the server, unless it is a request whose id JSON-RPC does not allow
    (a fraction, ``true``, ``null``, an object): the SDK's models ignore keys they do not
    know, so that line would pass as a notification and never be answered."""
    if isinstance(message, JSONRPCNotification):
        try:
            data = raw if isinstance(raw, dict) else json.loads(raw, parse_int=_int_or_digits)
        except (ValueError, RecursionError):
            data = {}
        if isinstance(data, dict) and "id" in data:
            return None, _error(None, INVALID_REQUEST,
                                "Invalid Request: an id must be a string or an integer")
    return SessionMessage(message), None


def _encode(message: SessionMessage) -> bytes:
    """The wire line of ``message``; a string the SDK cannot encode (a lone surrogate from
    a book or a file name) is written with U+FFFD instead, never dropped."""
    try:
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:
        data = message.message.model_dump(mode="python", by_alias=True, exclude_unset=True)
        text = json.dumps(_scrub(data), ensure_ascii=False, default=str)
    return (text + "\n").encode("utf-8")


@contextmanager
def _claimed_std() -> Iterator[tuple[Lines, BinaryIO]]:
    """Private duplicates of fd 0 and 1 for the wire; fd 0 → null device, fd 1 → stderr
    while serving (restored after)."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        with os.fdopen(wire_in, "rb", buffering=0, closefd=False) as reader, \
                _unflushed_on_error(os.fdopen(wire_out, "wb", closefd=False)) as writer:
            yield Lines(reader), writer
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


@contextmanager
def _unflushed_on_error(writer: BinaryIO) -> Iterator[BinaryIO]:
    """``writer``, closed after; what a broken pipe left unwritten is dropped, not raised
    a second time over the first error."""
    try:
        yield writer
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def _read_line(reader: Lines, portal: BlockingPortal) -> bytes | OverLong:
    """The next line of ``reader``, read on a daemon thread. anyio's worker threads are not
    daemons: a read left waiting when serving ends (Ctrl-C while the client keeps stdin
    open) kept the process from exiting until stdin closed."""
    done = anyio.Event()
    got: list[bytes | OverLong] = []
    failed: list[Exception] = []

    def read() -> None:
        try:
            got.append(reader.readline())
        except Exception as exc:  # a closed or broken stdin: raised on the loop's side
            failed.append(exc)
        with contextlib.suppress(RuntimeError):  # serving has ended: nobody waits
            portal.call(done.set)

    threading.Thread(target=read, name="mcp-stdin", daemon=True).start()
    await done.wait()
    if failed:
        raise failed[0]
    return got[0]


class Unanswered:
    """The client's requests that the server has not answered yet.

    When stdin ends, the wire waits until there are none before it closes the server's
    input: the SDK cancels whatever is still running when its input ends, so a client that
    writes its requests and closes stdin (``printf … | grimoire-beholder serve-mcp``) got
    the answers that happened to be ready and nothing else. A request the server settles
    without an answer (the client cancelled it: the SDK matches ``"7"`` to ``7`` there)
    is not waited for: the SDK's ``on_request_unanswered`` hook says so. Each request
    counts once, so two in flight with one id need two answers; the wire's own answers
    (to lines the server never sees) settle nothing."""

    def __init__(self) -> None:
        self._counts: Counter[str | int] = Counter()
        self._own: set[int] = set()
        self._none = anyio.Event()
        self._none.set()

    @property
    def waiting(self) -> int:
        """How many requests read so far are still unanswered."""
        return self._counts.total()

    def asked(self, message: SessionMessage) -> SessionMessage:
        """``message`` read from the client, as it goes to the server: a request is noted,
        and carries the hook that settles it if the server ends it with no answer."""
        if not isinstance(message.message, JSONRPCRequest):
            return message
        request_id = message.message.id
        if not self._counts:
            self._none = anyio.Event()
        self._counts[request_id] += 1

        async def unanswered() -> None:
            self._settle(request_id)

        return SessionMessage(message.message,
                              ServerMessageMetadata(on_request_unanswered=unanswered))

    def own(self, answer: SessionMessage) -> SessionMessage:
        """``answer``, the wire's own (the server never saw its line): settles nothing."""
        self._own.add(id(answer))
        return answer

    def answered(self, message: SessionMessage) -> None:
        """Note a message written to the client."""
        if id(message) in self._own:
            self._own.discard(id(message))
        elif isinstance(message.message, JSONRPCResponse | JSONRPCError):
            self._settle(message.message.id)

    def _settle(self, request_id: str | int | None) -> None:
        if request_id is not None and request_id in self._counts:
            self._counts[request_id] -= 1
            if not self._counts[request_id]:
                del self._counts[request_id]
        if not self._counts:
            self._none.set()

    async def all_answered(self) -> None:
        """Return once every request read so far has been answered (or settled unanswered)."""
        await self._none.wait()


async def _pump_in(reader: Lines, to_server: MemoryObjectSendStream[Any],
                   answers: MemoryObjectSendStream[SessionMessage],
                   unanswered: Unanswered) -> None:
    async with to_server, answers, BlockingPortal() as portal:
        while line := await _read_line(reader, portal):
            message, answer = (None, over_long(line)) if isinstance(line, OverLong) \
                else read_line(line)
            if message is not None:
                await to_server.send(unanswered.asked(message))
            if answer is not None:
                await answers.send(unanswered.own(answer))
        await unanswered.all_answered()


async def serve(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin ends and every request
    read has been answered (see :class:`Unanswered`). A client that closes its end of stdout
    ends serving at the next answer: ``BrokenPipeError`` (the CLI's quiet exit 1), not a
    traceback of every task the SDK had running."""
    to_server, server_reads = anyio.create_memory_object_stream[Any](0)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](16)
    unanswered = Unanswered()
    with _claimed_std() as (reader, writer):

        reader_gone: list[OSError] = []

        async def pump_out() -> None:
            async with out_receive:
                async for message in out_receive:
                    try:
                        await anyio.to_thread.run_sync(_write, writer, _encode(message))
                    except OSError as exc:  # the client closed stdout: nobody reads
                        reader_gone.append(exc)
                        tasks.cancel_scope.cancel()
                        return
                    unanswered.answered(message)

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(pump_out)
                tasks.start_soon(_pump_in, reader, to_server, out_send.clone(), unanswered)
                async with out_send:
                    await server.run(server_reads, out_send,
                                     server.create_initialization_options())
        except* anyio.BrokenResourceError:
            if _cancelled():  # Ctrl-C while lines were still passed on: the sends broke
                raise asyncio.CancelledError from None  # so it ends as Ctrl-C: 130, quiet
            raise
    if reader_gone:
        raise BrokenPipeError("the client closed its end of stdout") from reader_gone[0]


def _cancelled() -> bool:
    """Whether serving is being cancelled (asyncio's runner cancels it on Ctrl-C)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _write(writer: BinaryIO, data: bytes) -> None:
    writer.write(data)
    writer.flush()
