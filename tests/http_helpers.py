"""Helpers for the MCP server over HTTP: a real ``serve-mcp --http`` process on a free
loopback port, tokens made with the real CLI, and a real MCP client speaking Streamable HTTP."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_helpers import cli_command

LISTENING = re.compile(r" on (https?://\S+/mcp) ")


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*cli_command(), *args], capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def make_token(config: Path, name: str, *allow: str) -> str:
    """``token create NAME`` through the CLI: the token printed on stdout."""
    token = cli("token", "create", name, "--config", str(config), *allow).stdout.strip()
    assert token.startswith("gbt_"), token
    return token


class HttpServer:
    """``serve-mcp --http 127.0.0.1:0`` as a subprocess; ``url`` once it listens."""

    def __init__(self, config: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*cli_command(), "serve-mcp", "--http", "127.0.0.1:0", "--config", str(config),
             *extra], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.stderr: list[str] = []
        self.url = ""
        found = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                match = LISTENING.search(line)
                if match and not self.url:
                    self.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        try:
            found.wait(60)
            assert self.url, "".join(self.stderr)
            self.wait_ready()
        except BaseException:  # never leave a server behind
            self.close()
            raise

    @property
    def authority(self) -> str:
        return self.url.split("://", 1)[1].split("/", 1)[0]

    def wait_ready(self, timeout: float = 60) -> None:
        """Until the server answers HTTP (its lifespan has warmed the library); whether its
        certificate is trusted is each test's business."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url, timeout=2, verify=False)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("server never answered: " + "".join(self.stderr))

    def close(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        return "".join(self.stderr)


def initialize(url: str, token: str | None = None, **headers: str) -> httpx.Response:
    """A raw ``initialize`` POST, as a client's first request."""
    sent = {"accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return httpx.post(url, headers=sent, timeout=30, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})


def raw_status(port: int, target: str, headers: list[tuple[str, str]]) -> int:
    """The status of ``GET target`` sent to 127.0.0.1:``port`` with exactly ``headers``, in
    their order, repeats included (an HTTP client would merge or refuse them)."""
    lines = [f"GET {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers),
             "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall("\r\n".join(lines).encode("latin-1"))
        answer = b""
        while b"\r\n" not in answer and (block := sock.recv(4096)):
            answer += block
    return int(answer.split(b" ", 2)[1])


@asynccontextmanager
async def http_client(url: str, token: str, mode: str = "auto",
                      verify: Any = True) -> AsyncIterator[Client]:
    """The SDK's MCP client over Streamable HTTP, with the bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=60, verify=verify) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client
