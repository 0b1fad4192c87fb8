"""Ctrl-C as ``serve-mcp --http`` starts stops it as Ctrl-C does once it serves: one
``stopped`` line after the ``serving`` one, exit 0, nothing on stdout, the port free again.
Between the ``serving`` line and the moment uvicorn listens for Ctrl-C itself, it was, by
luck of timing, a traceback, a "coroutine never awaited" warning or the ``interrupted:
committed work is kept; run the same command to resume`` line of a writing command (exit
130). The CLI runs in a fresh process as the script does; the Ctrl-C is a real SIGINT the
process sends itself at a chosen point, so the window is hit every time."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from http_helpers import make_token
from mcp_helpers import folder_library

pytestmark = pytest.mark.slow  # a fresh interpreter and a real server per case

# Run the CLI as the script does, with a SIGINT sent to itself right after the line that
# starts with WHEN (the window before uvicorn's own signal handler).
PROBE = (
    "import os, signal, sys\n"
    "from grimoire_beholder.mcp_server import http_serving\n"
    "told = http_serving._tell\n"
    "def tell(line):\n"
    "    told(line)\n"
    "    if line.startswith(os.environ['PROBE_WHEN']):\n"
    "        signal.raise_signal(signal.SIGINT)\n"
    "http_serving._tell = tell\n"
    "from grimoire_beholder.mcp_server import starting\n"
    "for name in ('open_library', 'start_http'):\n"
    "    def opened(*a, _f=getattr(starting, name), _n=name, **k):\n"
    "        got = _f(*a, **k)\n"
    "        if os.environ['PROBE_WHEN'] == _n:\n"
    "            signal.raise_signal(signal.SIGINT)\n"
    "        return got\n"
    "    setattr(starting, name, opened)\n"
    "sys.argv = ['grimoire-beholder', *sys.argv[1:]]\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _answers(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10)
    except httpx.TransportError:
        return False
    return True


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = folder_library(tmp_path_factory.mktemp("interrupted") / "lib")
    make_token(config, "reader")
    return config


def test_ctrl_c_right_after_the_serving_line_stops_the_server_cleanly(config: Path) -> None:
    port = _free_port()
    args = ["serve-mcp", "--http", str(port), "--config", str(config)]
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
                          env={**os.environ, "PROBE_WHEN": "serving "})
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert lines[0].startswith("serving ") and lines[-1] == "stopped", lines
    assert not any("Traceback" in x or "Warning" in x or "error" in x for x in lines), lines
    assert _refused(port)


@pytest.mark.parametrize("when", ["open_library", "start_http"])
def test_ctrl_c_with_the_library_open_before_the_sdk_is_imported_says_interrupted(
        config: Path, when: str) -> None:
    """Ctrl-C once the library is open (and, for --http, the port bound), before the SDK is
    imported: exit 130 and one ``interrupted`` line — a server has no work to resume."""
    port = _free_port()
    http = ["--http", str(port)] if when == "start_http" else []
    proc = subprocess.run([sys.executable, "-c", PROBE, "serve-mcp", *http, "--config",
                           str(config)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False,
                          env={**os.environ, "PROBE_WHEN": when})
    assert proc.returncode == 130, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == ["error: interrupted"]
    assert _refused(port)


def test_ctrl_c_once_serving_stops_it_the_same_way(config: Path) -> None:
    """The ordinary case, for comparison: a real Ctrl-C once the server answers."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "grimoire_beholder", "serve-mcp", "--http", str(port),
         "--config", str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("serving "), first
        while not _answers(port):  # until it serves (it listens before the "serving" line)
            assert proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out == "" and err.splitlines() == ["stopped"], err
    assert _refused(port)
