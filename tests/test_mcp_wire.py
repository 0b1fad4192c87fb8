"""Every line sent to ``serve-mcp`` gets an answer: the SDK's stdio reader dropped lines it
could not validate (a lone surrogate, a 5,000-digit integer, malformed JSON, a batch, bytes
that are not UTF-8), and the client waited for its own timeout. Raw bytes over a real pipe."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.stdio_lines import MAX_LINE_BYTES, Lines, OverLong
from grimoire_beholder.mcp_server.stdio_wire import Unanswered, read_line
from helpers import GARDEN_CHAPTERS, write_markdown_book
from mcp_helpers import cli_command, write_config

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wire")
    with Library.open(write_config(root)) as lib:
        lib.ingest(write_markdown_book(root / "garden.md", "The Garden Book", GARDEN_CHAPTERS))
    return root


def _search(request_id: int, question: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "search_book", "arguments": {"question": question}}})


def _exchange(cwd: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    """Send the initialize handshake and ``lines``; read one reply per request line (the
    test's timeout ends a wait for a reply that never comes), then close stdin."""
    head = [json.dumps(INIT).encode(),
            b'{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    proc = subprocess.Popen([*cli_command(), "serve-mcp"], cwd=cwd, env=dict(os.environ),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"\n".join(head + lines) + b"\n")
    proc.stdin.flush()
    replies = [json.loads(proc.stdout.readline()) for _ in range(1 + len(lines))]
    _out, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode(errors="replace")
    return replies


@pytest.mark.slow  # serve-mcp as a real subprocess, every kind of line
@pytest.mark.timeout(90)
def test_every_line_is_answered(library_dir: Path) -> None:
    huge = "9" * 5000
    lines = [
        _search(1, "aphids").replace("aphids", "aphids \\ud800").encode(),  # half an emoji
        ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
         '"search_book", "arguments": {"question": "aphids", "top_k": ' + huge + "}}}").encode(),
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"',  # cut short
        b"[" + _search(4, "aphids").encode() + b"]",  # a batch
        b'{"jsonrpc": "2.0", "id": 5, "method": "caf\xe9"}',  # Latin-1, not UTF-8
        b'{"jsonrpc": "2.0", "id": ' + huge.encode() + b', "method": "ping"}',
        b'"just a string"',
        b'{"jsonrpc": "2.0", "id": 8, "method": "ping"}',
    ]
    replies = _exchange(library_dir, lines)
    by_id = {r.get("id"): r for r in replies}
    assert replies[0]["id"] == 0 and "result" in replies[0]
    assert "result" in by_id[1] and not by_id[1]["result"]["isError"], by_id[1]
    assert by_id[2].get("error") or by_id[2]["result"]["isError"], by_id[2]
    nulls = [r["error"]["code"] for r in replies if r.get("id") is None]
    # cut short and Latin-1 → parse errors; the batch, a huge id, a bare string → invalid
    assert sorted(nulls) == [-32700, -32700, -32600, -32600, -32600], replies
    assert by_id[8]["result"] == {}
    assert len(replies) == 1 + len(lines)


@pytest.mark.slow  # serve-mcp as a real subprocess
@pytest.mark.timeout(90)
def test_requests_piped_in_are_all_answered_after_stdin_ends(library_dir: Path) -> None:
    """`printf … | grimoire-beholder serve-mcp`: stdin ends right after the requests, and
    every request still gets its answer (the SDK used to cancel the ones still running);
    a request the client cancels is not waited for."""
    lines = [json.dumps(INIT).encode(),
             b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
             _search(1, "aphids").encode(),
             b'{"jsonrpc": "2.0", "id": "two", "method": "tools/list"}',
             _search(3, "roses").encode(),
             b'{"jsonrpc": "2.0", "method": "notifications/cancelled", '
             b'"params": {"requestId": 3}}',
             # cancelled as "4": the SDK matches it to 4 and never answers; the wait hung
             _search(4, "roses").encode(),
             b'{"jsonrpc": "2.0", "method": "notifications/cancelled", '
             b'"params": {"requestId": "4"}}']
    proc = subprocess.run([*cli_command(), "serve-mcp"], cwd=library_dir, env=dict(os.environ),
                          input=b"\n".join(lines) + b"\n", capture_output=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    by_id = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert {0, 1, "two"} <= set(by_id) and 4 not in by_id, by_id
    assert not by_id[1]["result"]["isError"] and "aphid" in json.dumps(by_id[1]).lower()
    assert any(t["name"] == "search_book" for t in by_id["two"]["result"]["tools"])


def _initialized_server(library_dir: Path) -> subprocess.Popen[bytes]:
    """``serve-mcp`` on stdio as a real subprocess, its initialize request answered."""
    proc = subprocess.Popen([*cli_command(), "serve-mcp"], cwd=library_dir,
                            env=dict(os.environ), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n")
        proc.stdin.flush()
        assert "result" in json.loads(proc.stdout.readline())
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return proc


@pytest.mark.slow  # serve-mcp as a real subprocess, a 4 MB line
@pytest.mark.timeout(120)
def test_a_huge_request_line_is_read_in_blocks(library_dir: Path) -> None:
    """A request line just under the wire's limit is read in blocks, not a byte a system
    call (4 s of CPU for 5 MB before the question was even refused): its search is refused
    for its length and the search after it answered. How long it takes is bench/'s to say
    (``bench/mcp_latency.py --huge-line``); the read calls are counted here, where Linux
    counts them."""
    proc = _initialized_server(library_dir)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        question = "x" * (MAX_LINE_BYTES - 200)
        huge = _search(1, question).encode() + b"\n" + _search(2, "aphids").encode()
        reads_before = _read_calls(proc.pid)
        proc.stdin.write(huge + b"\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        reads_after = _read_calls(proc.pid)
        by_id = {reply["id"]: reply for reply in replies}  # answered as each is done
        assert by_id[1]["result"]["isError"] and "at most" in json.dumps(by_id[1])
        assert by_id[2]["result"]["structuredContent"]["results"]
        if reads_before is not None and reads_after is not None:
            # 64 kB blocks: about 64 reads of stdin, and the search's own reads of the
            # library; a byte a call was over four million
            assert reads_after - reads_before < MAX_LINE_BYTES // 1024, (
                reads_before, reads_after)
    finally:
        proc.kill()
        proc.communicate()


def _read_calls(pid: int) -> int | None:
    """How many read system calls the process has made (Linux's ``syscr``), else None."""
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in text.splitlines()
                 if line.startswith("syscr:")), None)


def _peak_memory(pid: int) -> int | None:
    """The process's peak resident memory in bytes (Linux), else None."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


@pytest.mark.slow  # serve-mcp as a real subprocess, 64 MB of over-long lines
@pytest.mark.timeout(120)
def test_a_line_longer_than_the_limit_is_refused_and_the_next_one_served(
        library_dir: Path) -> None:
    """16 MB lines — a request whose id comes last (as the TypeScript SDK writes it), a
    notification, bytes that are not JSON — are read to their newline without being kept:
    the request gets an Invalid Request error to its id, one whose id is null one to null
    (the client waited for ever), the others a line on stderr, and the ping after them its
    answer. The wire kept every byte until a newline came."""
    pad = "x" * 16_000_000
    lines = [
        json.dumps({"method": "ping", "params": {"pad": pad}, "jsonrpc": "2.0", "id": 7}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 1, "message": pad}}),
        pad,
        json.dumps({"jsonrpc": "2.0", "id": None, "method": "ping", "params": {"pad": pad}}),
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
    ]
    proc = _initialized_server(library_dir)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        before = _peak_memory(proc.pid)
        proc.stdin.write("\n".join(lines).encode() + b"\n")
        proc.stdin.flush()
        refused, no_id, served = (json.loads(proc.stdout.readline()) for _ in range(3))
        after = _peak_memory(proc.pid)
        assert refused["id"] == 7 and refused["error"]["code"] == -32600, refused
        # a request with an id JSON-RPC does not allow is answered to null, as a short one
        assert no_id["id"] is None and no_id["error"]["code"] == -32600, no_id
        assert "at most 4 MiB" in refused["error"]["message"]
        assert served == {"jsonrpc": "2.0", "id": 8, "result": {}}
        if before is not None and after is not None:
            assert after - before < 8 * MAX_LINE_BYTES, (before, after)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 0 and b"Traceback" not in err, err.decode(errors="replace")
    assert err.decode().count("serve-mcp: skipped a line of") == 4, err.decode()
    assert "answered request 7 with an error" in err.decode()


def test_the_line_limit_is_the_largest_http_body() -> None:
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
    assert MAX_LINE_BYTES == DEFAULT_MAX_REQUEST_BODY_SIZE


def _request(request_id: int | str) -> Any:
    message, _ = read_line(json.dumps({"jsonrpc": "2.0", "id": request_id,
                                       "method": "ping"}).encode())
    return message


@pytest.mark.anyio
async def test_each_request_waits_for_its_own_answer_even_with_one_id() -> None:
    """Two requests in flight with id 1, and an invalid line with id 1 that the wire
    answers itself: one answer for id 1 settled every request with that id, so stdin's end
    closed the server's input with a search still running and its answer was lost."""
    unanswered = Unanswered()
    sent = [unanswered.asked(_request(1)), unanswered.asked(_request(1)),
            unanswered.asked(_request("1"))]
    _, own = read_line(b'{"jsonrpc": "2.0", "id": 1, "method": 5}')
    assert own is not None and own.message.model_dump()["id"] == 1
    unanswered.answered(unanswered.own(own))
    assert unanswered.waiting == 3
    reply = read_line(b'{"jsonrpc": "2.0", "id": 1, "result": {}}')[0]
    assert reply is not None
    unanswered.answered(reply)
    assert unanswered.waiting == 2
    # the SDK settles a request it will never answer (cancelled, even as "1") by its hook
    hook = sent[2].metadata.on_request_unanswered
    await hook()
    assert unanswered.waiting == 1
    unanswered.answered(reply)
    assert unanswered.waiting == 0
    await unanswered.all_answered()


def test_an_invalid_object_is_answered_even_without_an_id() -> None:
    message, answer = read_line(b'{"jsonrpc": "2.0", "method": 7}')  # JSON-RPC's own example
    assert message is None and answer is not None
    assert answer.message.model_dump(by_alias=True)["error"]["code"] == -32600
    assert read_line(b"   \n") == (None, None)


@pytest.mark.parametrize("bad_id", [b"1.5", b"1e400", b"true", b"null", b'{"a": 1}', b"[1]"])
def test_a_request_with_an_id_json_rpc_does_not_allow_is_answered(bad_id: bytes) -> None:
    # The SDK read such a line as a notification (its models allow extra keys) and dropped
    # it: the client waited for an answer that never came. JSON-RPC: an id is a string or a
    # number (an integer here); anything else is an Invalid Request, answered with id null.
    message, answer = read_line(b'{"jsonrpc": "2.0", "id": ' + bad_id + b', "method": "ping"}')
    assert message is None and answer is not None
    dumped = answer.message.model_dump(by_alias=True)
    assert dumped["id"] is None and dumped["error"]["code"] == -32600
    # a true notification (no id) stays one, and is not answered
    note, none = read_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert note is not None and none is None


def test_a_notification_with_a_huge_number_is_still_a_notification() -> None:
    line = (b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": '
            b'{"progressToken": 1, "progress": ' + b"9" * 5000 + b"}}")
    message, answer = read_line(line)  # never raises; either passed on or answered
    assert (message is None) != (answer is None)
    assert answer is None or answer.message.model_dump(by_alias=True)["error"]["code"] in (
        -32600, -32700)


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
@pytest.mark.timeout(90)
def test_odd_ids_and_an_unknown_prompt_are_answered_without_a_traceback(
        library_dir: Path) -> None:
    lines = [b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}',
             b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
             b'{"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "nope"}}',
             b'{"jsonrpc": "2.0", "id": 4, "method": "ping"}']
    replies = _exchange(library_dir, lines)  # also: no "Traceback" on stderr
    assert [r.get("id") for r in replies] == [0, None, None, 3, 4]
    assert [r["error"]["code"] for r in replies[1:3]] == [-32600, -32600]
    assert replies[3]["error"]["code"] == -32602 and "nope" in replies[3]["error"]["message"]


@pytest.mark.slow  # serve-mcp as a real subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event on Windows")
@pytest.mark.timeout(90)
def test_ctrl_c_ends_the_server_while_the_client_keeps_stdin_open(library_dir: Path) -> None:
    """Ctrl-C in the terminal running ``serve-mcp`` (the client still connected, stdin
    open) ends it with 130; its stdin reader was a non-daemon anyio worker thread, so the
    process hung at exit until the client closed stdin."""
    proc = subprocess.Popen([*cli_command(), "serve-mcp"], cwd=library_dir,
                            env=dict(os.environ), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n" + _search(1, "aphids").encode()
                         + b"\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert replies[1]["result"]["structuredContent"]["results"]
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 130, "serve-mcp still running 30 s after Ctrl-C"
        assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.communicate()


def _serve_with_searches(cwd: Path, searches: int) -> subprocess.Popen[bytes]:
    """serve-mcp started in ``cwd`` and sent initialize and ``searches`` search_book requests
    (ids 1…``searches``), its stdin still open."""
    proc = subprocess.Popen([*cli_command(), "serve-mcp"], cwd=cwd, env=dict(os.environ),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b"\n".join([json.dumps(INIT).encode()] + [
        _search(i, "aphids").encode() for i in range(1, searches + 1)]) + b"\n")
    return proc


@pytest.mark.slow  # serve-mcp as a real subprocess
@pytest.mark.timeout(90)
def test_a_client_that_closes_stdout_ends_the_server_without_a_traceback(
        library_dir: Path) -> None:
    """The client stops reading (closes its end of the server's stdout) with searches still
    running: serve-mcp exits 1 like any command whose output is closed, not with a
    traceback of every task the SDK had running."""
    proc = _serve_with_searches(library_dir, 49)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        proc.stdout.close()
        _out, err = proc.communicate(timeout=30)  # stdin stays open until here
        assert proc.returncode == 1 and b"Traceback" not in err, err.decode(errors="replace")
    finally:
        proc.kill()


@pytest.mark.slow  # serve-mcp as a real subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event on Windows")
@pytest.mark.timeout(90)
def test_ctrl_c_during_a_burst_of_requests_exits_130_without_a_traceback(
        library_dir: Path) -> None:
    """Ctrl-C while hundreds of piped-in requests are still being passed to the server: the
    sends on the torn-down streams broke, and serve-mcp exited 1 with their traceback."""
    proc = _serve_with_searches(library_dir, 499)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.close()
        for _ in range(3):
            json.loads(proc.stdout.readline())
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # a reading client
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        err = proc.stderr.read()  # type: ignore[union-attr]
        assert code == 130 and b"Traceback" not in err, err.decode(errors="replace")
    finally:
        proc.kill()


@pytest.mark.parametrize(("line", "request_id", "answered"), [
    (b'{"jsonrpc":"2.0","id":7,"method":"m","params":{"id":9,"s":"a\\"b,\\\\"}}', 7, True),
    (b'{"method":"m","params":{"id":9,"q":"\\"id\\":3"},"jsonrpc":"2.0","id":"a\\"b"}', 'a"b',
     True),
    (b'{"\\u0069d": 12, "method": "m"}', 12, True),
    (b'{"method":"m","params":[1,{"id":2}],"id":{"a":1}}', None, True),
    (b'{"id": true, "method": "m"}', None, True),
    (b'{"id": null, "method": "m"}', None, True),  # answered to null, as a short line is
    (b'{"method":"m","params":{"v":[[1],[2,[3,{"id":4}]],"]}"]},"id":5}', 5, True),
    (b'{"method":"m","params":{"s":"\\\\\\\\\\"]}"},"id":6}', 6, True),
    (b'{"method":"notifications/m","params":{"id":3}}', None, False),
    (b'{"jsonrpc":"2.0","id":5,"result":{}}', None, False),  # a response asks for no answer
    (b'[{"id":1,"method":"m"}]', None, True),  # a batch: answered to null, as a short one
])
def test_an_over_long_line_is_answered_to_its_own_top_level_id(
        line: bytes, request_id: str | int | None, answered: bool) -> None:
    """Only the outer object's id counts, wherever it sits, read in pieces that split
    strings and escapes anywhere; a request whose id cannot be used, and a batch, are
    answered (to null) as they are when short."""
    pad = b"x" * 300
    padded = line[:-1] + (b',"pad":"' + pad + b'"}' if line.endswith(b"}") else
                          b',"' + pad + b'"]')
    json.loads(padded)
    for block in (3, 1 << 16):
        raw = io.BytesIO(padded + b"\n" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        lines = Lines(raw, limit=len(padded) - 1)
        lines.BLOCK = block
        over = lines.readline()
        assert over == OverLong(len(padded), request_id, answered)
        assert lines.readline() == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        assert lines.readline() == b""


def test_an_over_long_line_of_many_keys_or_brackets_is_skipped_in_bounded_memory() -> None:
    """The scan keeps a few bytes, whatever the line holds: each distinct top-level key
    was kept (a 37 MB line of them grew the server by 364 MB, and a line with no newline
    grew it without end); nested arrays are skipped by counting, not a step a bracket."""
    keys = b'{"method":"m",' + b",".join(b'"k%07d":0' % i for i in range(20_000)) + b',"id":3}'
    tracemalloc.start()
    try:
        over = Lines(io.BytesIO(keys + b"\n"), limit=1024).readline()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert over == OverLong(len(keys), 3, True)
    assert peak < 1024 * 1024, peak  # the line read (260 kB) and a block; 4.3 MB before
    nested = (b'{"method":"m","params":{"v":[' + b"[1,{},2]," * 20_000 + b'[[[]]]]},"id":4}')
    over = Lines(io.BytesIO(nested + b"\n"), limit=1024).readline()
    assert over == OverLong(len(nested), 4, True)


def test_a_crlf_line_at_the_limit_is_read() -> None:
    """The CR of a CRLF line is not the message's: a message of exactly the limit is read."""
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    lines = Lines(io.BytesIO(ping + b"\r\n" + ping + b"x\r\n"), limit=len(ping))
    assert lines.readline() == ping + b"\r\n"
    assert lines.readline() == OverLong(len(ping) + 2, 1, True)
