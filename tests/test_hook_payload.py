"""The prompt hook's stdin is read bounded: a payload whose writer keeps the pipe open, a
huge one, an endless one, one that never comes — each ends at once, in bounded memory, with
exit code 0 (a hook must never break the assistant's session)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grimoire_beholder.cli.assistant_hooks import HEADER, PAYLOAD_LIMIT, prompt_text, read_payload
from helpers import hook_library

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="os.wait4 is POSIX")
QUESTION = "how do copper tape and beer traps stop slugs? "
WAIT = 60  # seconds before a hook that hangs fails the test
# Runs the hook and writes its peak memory (KB) last on stderr: a child forked from the
# test's own large process would count the test's pages in its peak.
MEASURE = """import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(proc.pid, 0)
sys.stderr.write(f"\\n{usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.fixture
def config(tmp_path: Path, sample_book: Path) -> Path:
    return hook_library(tmp_path, sample_book)


def _hook(config: Path, feed: bytes, *, close: bool = True) -> tuple[int, str, float, int]:
    """``hook prompt`` as Claude Code runs it, fed ``feed`` (from a thread, so a hook that
    stops reading early breaks the pipe rather than the test); ``close``: end the input
    after it, else keep the pipe open until the hook exits. Returns the exit code, stdout,
    seconds taken and the peak resident memory in MB."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", MEASURE, sys.executable, "-m",
                             "grimoire_beholder", "hook", "prompt", "-c", str(config)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def write() -> None:
        try:
            proc.stdin.write(feed)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            if close:
                proc.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass

    threading.Thread(target=write, daemon=True).start()
    timer = threading.Timer(WAIT, os.killpg, (proc.pid, signal.SIGKILL))  # and the hook
    timer.start()
    out = proc.stdout.read().decode()
    told = proc.stderr.read().split()
    code = proc.wait()
    assert told, f"the hook was killed after {WAIT} s (exit code {code})"
    peak_kb = int(told[-1])
    timer.cancel()
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    return code, out, time.monotonic() - started, peak_kb // 1024


@pytest.mark.slow
def test_a_payload_whose_pipe_stays_open_is_answered(config: Path) -> None:
    code, out, seconds, _ = _hook(config, json.dumps({"prompt": QUESTION}).encode(),
                                  close=False)
    assert seconds < WAIT and code == 0
    assert out.startswith(HEADER) and "Pests › Slugs" in out


@pytest.mark.slow
def test_a_huge_payload_is_read_bounded_and_searched_by_its_prompt(config: Path) -> None:
    """17 MB of pasted log after the question (an old reader kept it all: 68 MB took
    993 MB of memory): the hook reads its first PAYLOAD_LIMIT bytes and searches the
    prompt's beginning, as it searches any long prompt."""
    payload = json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit",
                          "prompt": QUESTION + "Pasted log line. " * 1_000_000}).encode()
    code, out, _, peak_mb = _hook(config, payload)
    assert code == 0 and out.startswith(HEADER) and "Pests › Slugs" in out
    assert peak_mb < 150, peak_mb


@pytest.mark.slow
def test_an_endless_or_silent_stdin_ends_in_silence(config: Path) -> None:
    """A stream that never ends (/dev/zero's worth of bytes) stops at the bound; a pipe
    nothing is written to and nobody closes is given up after READ_SECONDS."""
    code, out, _, peak_mb = _hook(config, b"\0" * (8 * PAYLOAD_LIMIT), close=False)
    assert (code, out) == (0, "") and peak_mb < 150
    code, out, seconds, _ = _hook(config, b"", close=False)
    assert (code, out) == (0, "") and seconds < 15


def test_the_prompt_of_a_payload_cut_short() -> None:
    payload = json.dumps({"cwd": "/x", "prompt": 'say "hi" \\ café ' + "word " * 50})
    assert prompt_text(payload[:60], whole=False).startswith('say "hi" \\ caf')
    assert prompt_text(payload[:34], whole=False) == 'say "hi'  # a cut escape is dropped
    assert prompt_text('{"cwd": "/x", "promp', whole=False) == ""
    with pytest.raises(ValueError):
        prompt_text(payload[:60])  # whole, yet not JSON: an error (silence, for the hook)


class _Pipe:
    """A pipe fed ``feed`` from a thread; ``stream`` is its read end as a file. ``close``:
    end the input after it, else the write end stays open until :meth:`done`."""

    def __init__(self, feed: bytes, *, close: bool) -> None:
        read_fd, self.write_fd = os.pipe()
        self.stream = os.fdopen(read_fd, "r")
        self.thread = threading.Thread(target=self._write, args=(feed, close), daemon=True)
        self.thread.start()

    def _write(self, feed: bytes, close: bool) -> None:
        view = memoryview(feed)
        with contextlib.suppress(OSError):
            while view:
                view = view[os.write(self.write_fd, view):]
            if close:
                os.close(self.write_fd)

    def done(self) -> None:
        """Close both ends once the writer has stopped (no fd closed under it)."""
        self.stream.close()  # a writer still blocked gets a broken pipe
        self.thread.join(10)
        with contextlib.suppress(OSError):
            os.close(self.write_fd)


def test_read_payload_stops_at_a_whole_payload_the_bound_or_the_time() -> None:
    payload = json.dumps({"prompt": QUESTION}).encode()
    pipe = _Pipe(payload, close=False)  # the writer keeps the pipe open
    started = time.monotonic()
    assert read_payload(pipe.stream, seconds=30) == (payload.decode(), True)
    assert time.monotonic() - started < 10
    pipe.done()

    pipe = _Pipe(b"x" * (3 * 65536), close=False)  # more than the limit
    text, whole = read_payload(pipe.stream, limit=65536, seconds=30)
    assert (len(text), whole) == (65536, False)
    pipe.done()

    pipe = _Pipe(b"", close=False)  # nothing comes, nobody closes
    started = time.monotonic()
    assert read_payload(pipe.stream, seconds=0.3) == ("", False)
    assert time.monotonic() - started < 5
    pipe.done()

    pipe = _Pipe(b'{"prompt": "cut', close=True)  # ended, but not JSON: whole as sent
    assert read_payload(pipe.stream, seconds=30) == ('{"prompt": "cut', True)
    pipe.done()
