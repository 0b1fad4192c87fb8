"""``serve-mcp`` that cannot start — a mistaken option, a missing or damaged library, a library
without tokens for ``--http`` — says so in one line with a non-zero exit before the MCP SDK
is imported: importing it (pydantic, Starlette, uvicorn) is most of a server's start, and
a mistake should be told as quickly as ``list`` tells one. Each case runs the CLI as the
script does, in a fresh process, and reports what it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grimoire_beholder.access import create_token
from grimoire_beholder.library import Library
from helpers import fake_garden_env

pytestmark = pytest.mark.slow  # a fresh interpreter per case

HERE = Path(__file__).resolve().parent
SERVER_PACKAGES = ("mcp", "starlette", "uvicorn")
# Run the CLI as the script does; at exit, say which of SERVER_PACKAGES it imported.
PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.__stderr__.write('LOADED ' + json.dumps("
    f"[m for m in {SERVER_PACKAGES!r} if m in sys.modules]) + '\\n'))\n"
    "sys.argv = ['grimoire-beholder', *sys.argv[1:]]\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


def _serve(*args: str, env: dict[str, str | None]) -> tuple[int, list[str], list[str]]:
    """(exit code, stderr lines but the probe's, the server packages imported)."""
    environ = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    proc = subprocess.run([sys.executable, "-c", PROBE, "serve-mcp", *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=environ, check=False)
    lines = proc.stderr.splitlines()
    loaded = next(x for x in lines if x.startswith("LOADED "))
    return (proc.returncode, [x for x in lines if x != loaded],
            json.loads(loaded[len("LOADED "):]))


@pytest.fixture(scope="module")
def libraries(garden_template: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, dict[str, str | None]]:
    """The CLI environments of: a library with a token, one without, a missing one, a
    damaged one (a file of another kind where the database should be) and a missing config
    file."""
    root = tmp_path_factory.mktemp("serve-early")
    with_token = fake_garden_env(garden_template, root / "tokens")
    with Library.open(with_token["GRIMOIRE_BEHOLDER_CONFIG"]) as lib:
        create_token(lib, "reader")
    without = fake_garden_env(garden_template, root / "no-tokens")
    damaged = fake_garden_env(garden_template, root / "damaged")
    (root / "damaged" / "book.db").write_bytes(b"not a database, " * 512)
    missing = fake_garden_env(garden_template, root / "missing")
    (root / "missing" / "book.db").unlink()
    no_config = {"GRIMOIRE_BEHOLDER_CONFIG": str(root / "no-such" / "config.toml")}
    return {"tokens": with_token, "no-tokens": without, "damaged": damaged,
            "missing": missing, "no-config": no_config}


@pytest.mark.parametrize(("library", "args", "said"), [
    ("tokens", ["--http", "nonsense"], "--http 'nonsense'"),
    ("tokens", ["--http", "::1:8765"], "IPv6 address in brackets"),
    ("tokens", ["--http", "8765", "--allowed-host", "https://books.example"],
     "--allowed-host 'https://books.example'"),
    ("tokens", ["--http", "8765", "--allowed-origin", "books.example"],
     "--allowed-origin 'books.example'"),
    ("tokens", ["--http", "8765", "--tls-cert", "no-such.pem", "--tls-key", "no-such.key"],
     "--tls-cert no-such.pem: no such file"),
    # a folder named for a file: it was "no such file", though the folder is there
    ("tokens", ["--http", "8765", "--tls-cert", str(HERE), "--tls-key", __file__],
     f"--tls-cert {HERE}: is a folder, not a certificate file"),
    ("tokens", ["--http", "8765", "--tls-cert", __file__, "--tls-key", str(HERE)],
     f"--tls-key {HERE}: is a folder, not a private key file"),
    ("tokens", ["--http", "8765", "--allow-sync"], "each token carries its own upkeep"),
    ("tokens", ["--http", "0.0.0.0:0"], "listening on every address"),
    # a port in other digits than ASCII's: "²" was a traceback, "٨٠" and "８０" port 80
    ("tokens", ["--http", "²"], "--http '²': expected [HOST:]PORT"),
    ("tokens", ["--http", "127.0.0.1:\u0668\u0660"], "with a port from 0 to 65535"),
    ("tokens", ["--http", "\uff18\uff10"], "with a port from 0 to 65535"),
    # a port no Host header can carry: every request would have been refused
    ("tokens", ["--http", "8765", "--allowed-host", "books.example:99999"],
     "--allowed-host 'books.example:99999': the port is beyond 65535"),
    ("tokens", ["--http", "8765", "--allowed-origin", "https://books.example:99999"],
     "--allowed-origin 'https://books.example:99999': the port is beyond 65535"),
    ("tokens", ["--allowed-host", "books.example"], "go with --http"),
    ("no-tokens", ["--http", "0"], "no access token yet"),
    ("missing", [], "no library database"),
    ("missing", ["--allow-sync"], "no library database"),
    ("missing", ["--http", "0"], "no library database"),
    ("damaged", [], "not a library database"),
    ("damaged", ["--http", "0"], "not a library database"),
    ("no-config", [], "config file that does not exist"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_server_that_cannot_start_says_so_before_importing_the_sdk(
        libraries: dict[str, dict[str, str | None]], library: str, args: list[str],
        said: str) -> None:
    code, lines, loaded = _serve(*args, env=libraries[library])
    assert code != 0
    assert len(lines) == 1 and lines[0].startswith("error: ") and said in lines[0], lines
    assert loaded == []


def test_a_server_that_starts_does_import_the_sdk(
        libraries: dict[str, dict[str, str | None]]) -> None:
    """The probe sees the SDK when it is imported: stdin at its end stops a stdio server
    that started (exit 0)."""
    code, lines, loaded = _serve(env=libraries["tokens"])
    assert code == 0, lines
    assert "mcp" in loaded
