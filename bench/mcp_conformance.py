"""The official MCP conformance suite's server scenarios against ``serve-mcp --http``.

Runs ``@modelcontextprotocol/conformance server --url …`` (from npm; it needs Node.js 22 or
later — give another ``node`` with ``--node``) against the real HTTP application
(``http_serving.http_app``: Host/Origin gate, the SDK's bearer auth over the library's
tokens, the tools) on a small library. The suite's client cannot send a bearer token, so the
server is started here, in-process, behind one extra ASGI layer that adds the
``Authorization`` header of a read-only token to each request — everything else is what
``serve-mcp --http`` serves. Prints each scenario's checks (passed / failed / warnings) and
whether the scenario applies: most server scenarios call the suite's own "everything
server" tools, resources and prompts (``test_simple_text``, ``test_image_content``, …),
which this server does not have, so their failures say nothing about it.

    uv run python bench/mcp_conformance.py
    uv run python bench/mcp_conformance.py --node /path/to/node22 --package-dir /tmp/conf
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "lighthouse-keepers-handbook.md"
PACKAGE = "@modelcontextprotocol/conformance@0.1.16"
# Scenarios whose checks concern any server (the rest need the suite's own test tools,
# resources or prompts).
# (logging-set-level needs the optional logging capability, which this server does not
# declare: its "Method not found" is the specification's answer then;
# server-sse-polling (pending suite) calls a test tool of the suite's own.)
APPLY = {"server-initialize", "ping", "tools-list", "server-sse-multiple-streams",
         "dns-rebinding-protection"}


def library(folder: Path) -> tuple[Path, str]:
    """A one-book library (the fake embedder when the test plugin is there, else the
    embedded model) and a read-only token of it."""
    from importlib.metadata import entry_points

    from grimoire_beholder.access import create_token
    from grimoire_beholder.library import Library

    fake = any(e.name == "fake" for e in entry_points(group="grimoire_beholder.embedding_backends"))
    config = folder / "config.toml"
    config.write_text('[grimoire-beholder]\ndb_path = "book.db"\nllm_backend = "none"\n'
                      f'embedding_backend = "{"fake" if fake else "embedded"}"\n',
                      encoding="utf-8")
    with Library.open(config) as lib:
        lib.ingest(SAMPLE)
        return config, create_token(lib, "conformance")[1]


def serve(config: Path, token: str) -> tuple[Any, int]:
    """The HTTP app on a free loopback port, in a thread; (uvicorn server, port)."""
    import uvicorn

    from grimoire_beholder.access import TokenChecker
    from grimoire_beholder.mcp_server.http_serving import http_app
    from grimoire_beholder.mcp_server.starting import Bind, bound_socket, open_library

    lib = open_library(config)
    sock = bound_socket(Bind("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    app = http_app(lib, TokenChecker(lib.config), Bind("127.0.0.1", 0), port)
    header = (b"authorization", f"Bearer {token}".encode())

    async def with_token(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [*scope["headers"], header]}
        await app(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(with_token, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 120
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.1)
    return server, port


def suite_command(node: str, package_dir: Path) -> list[str]:
    """``node …/conformance/dist/index.js``, installed into ``package_dir`` once."""
    entry = package_dir / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" \
        / "index.js"
    if not entry.is_file():
        package_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                        str(package_dir), PACKAGE], check=True, stdout=subprocess.DEVNULL)
    return [node, str(entry)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--node", default=shutil.which("node") or "node",
                        help="Node.js 22 or later")
    parser.add_argument("--suite", default="active", choices=["active", "all", "pending"])
    parser.add_argument("--package-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "grimoire-conformance")
    args = parser.parse_args()
    command = suite_command(args.node, args.package_dir)
    with tempfile.TemporaryDirectory() as tmp:
        config, token = library(Path(tmp))
        server, port = serve(config, token)
        out = Path(tmp) / "results"
        started = time.perf_counter()
        proc = subprocess.run([*command, "server", "--url", f"http://localhost:{port}/mcp",
                               "--suite", args.suite, "--output-dir", str(out)],
                              capture_output=True, text=True, timeout=900)
        took = time.perf_counter() - started
        server.should_exit = True
        rows = []
        for checks_file in sorted(out.rglob("checks.json")):
            checks = json.loads(checks_file.read_text(encoding="utf-8"))
            # the folder is server-SCENARIO-TIMESTAMP (the timestamp has dashes of its own)
            scenario = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "",
                              checks_file.parent.name.removeprefix("server-"))
            counts = {status: sum(c.get("status") == status for c in checks)
                      for status in ("SUCCESS", "FAILURE", "WARNING")}
            failed = [f"{c.get('id', '?')}: {c.get('errorMessage', '')}"[:160]
                      for c in checks if c.get("status") == "FAILURE"]
            rows.append((scenario, scenario in APPLY, counts, failed))
    print(f"conformance {PACKAGE} against serve-mcp --http: {took:.0f} s, exit {proc.returncode},"
          f" load average {os.getloadavg()[0]:.2f}")
    print("| scenario | applies | passed | failed | warnings | failed checks |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, applies, counts, failed in rows:
        print(f"| {name} | {'yes' if applies else 'no'} | {counts['SUCCESS']} | "
              f"{counts['FAILURE']} | {counts['WARNING']} | {'; '.join(failed[:2])} |")
    if not rows:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
