"""``serve-mcp --http`` on the loopback address spelt another way (``LOCALHOST:P``,
``127.1:P``) is the loopback server it is: no warning that it listens beyond this machine
and tokens cross the network in clear text, and the loopback names (``127.0.0.1``,
``localhost``) are its own Host, as with ``--http P``. It warned falsely, and refused a
client that reached it as ``127.0.0.1:P`` with 421. A real server process, raw HTTP."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from http_helpers import initialize, make_token
from mcp_helpers import cli_command, folder_library

pytestmark = pytest.mark.slow  # a real server process per case

LISTENING = re.compile(r" on http://\S+:(\d+)/mcp ")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    config = folder_library(tmp_path_factory.mktemp("loopback") / "lib")
    return config, make_token(config, "reader")


@pytest.mark.parametrize("host", ["LOCALHOST", "LocalHost", "127.1"])
def test_loopback_spelt_another_way_is_served_as_loopback(
        library: tuple[Path, str], host: str) -> None:
    config, token = library
    proc = subprocess.Popen([*cli_command(), "serve-mcp", "--http", f"{host}:0", "--config",
                             str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        match = LISTENING.search(first)
        assert match, first
        port = match.group(1)
        url = f"http://127.0.0.1:{port}/mcp"
        for name in ("127.0.0.1", "localhost"):
            assert initialize(url, None, host=f"{name}:{port}").status_code == 401
            assert initialize(url, token, host=f"{name}:{port}").status_code == 200
        assert initialize(url, token, host=f"evil.example:{port}").status_code == 421
    finally:
        proc.terminate()
        _, rest = proc.communicate(timeout=60)
    assert "warning" not in first + rest, first + rest
