"""Helpers for driving the MCP server in tests: small libraries and a connected client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.allowed import Upkeep
from grimoire_beholder.mcp_server.server import create_server, open_library
from helpers import GARDEN_CHAPTERS, write_markdown_book

FAKE_CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "none"
chunk_size = 120
chunk_overlap = 20
"""


def write_config(directory: Path, extra: str = "") -> Path:
    """A config.toml for a fake-model library in ``directory``."""
    path = directory / "config.toml"
    path.write_text(FAKE_CONFIG + extra, encoding="utf-8")
    return path


def folder_library(base: Path) -> Path:
    """A library of one ingested folder (three Markdown books); returns its config."""
    base.mkdir(parents=True, exist_ok=True)
    config = write_config(base)
    wiki = write_wiki(base / "wiki")
    with Library.open(config) as lib:
        lib.ingest_folder(wiki)
    return config


def write_wiki(wiki: Path) -> Path:
    """A folder of three Markdown books: garden.md, ops/runbook.md, bread.md."""
    (wiki / "ops").mkdir(parents=True)
    write_markdown_book(wiki / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    write_markdown_book(wiki / "ops" / "runbook.md", "Runbook", {
        "Deploys": {"Rollout": "Roll the release out to one canary host first, watch the "
                               "error rate, then the rest of the fleet. " * 4,
                    "Rollback": "Rolling back means redeploying the previous tag; never "
                                "patch a host by hand during an incident. " * 4}})
    write_markdown_book(wiki / "bread.md", "Bread at Home", {
        "Dough": {"Kneading": "Knead the dough until it is smooth and springs back. " * 5}})
    return wiki


@asynccontextmanager
async def connect(config_path: Path, opened: list[Library] | None = None,
                  open_lib: Callable[[], Library] | None = None,
                  upkeep: Upkeep | None = None) -> AsyncIterator[Client]:
    """An in-memory client on a fresh server; ``opened`` collects the Library it opened;
    ``upkeep`` adds the write tools, as ``serve-mcp --allow-…`` does."""

    def factory() -> Library:
        lib = open_lib() if open_lib else open_library(config_path)
        if opened is not None:
            opened.append(lib)
        return lib

    async with Client(create_server(factory, upkeep)) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def cli_command() -> list[str]:
    """How tests start the real CLI (same interpreter, so no network or uv needed)."""
    return [sys.executable, "-m", "grimoire_beholder.cli.entry"]


class RawStdioServer:
    """``serve-mcp`` as a subprocess spoken to in raw JSON-RPC lines, to see its exact stdout."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*cli_command(), "serve-mcp"], cwd=cwd, env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None,
             notify: bool = False) -> dict[str, Any] | None:
        """Send one message; for a request, read stdout lines up to its response."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self._next_id += 1
            message["id"] = self._next_id
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            line = self.proc.stdout.readline()
            assert line, "server closed stdout early (see its stderr)"
            self.lines.append(line)
            reply = json.loads(line)
            if reply.get("id") == self._next_id:
                return dict(reply)

    def close(self, timeout: float = 20) -> tuple[str, str]:
        """EOF on stdin; the rest of stdout and all of stderr once the server has exited."""
        out, err = self.proc.communicate(timeout=timeout)
        self.lines += out.splitlines(keepends=True)
        return out, err


HUGE_PARAGRAPH = ("The lighthouse keeper logged every ship, every storm and every lamp wick "
                  "trimmed before dawn. ") * 40  # ~3.7k chars


def three_book_library(root: Path) -> Path:
    """Three books in ``root`` (fake embedder): a garden manual, a cookbook by someone else,
    and a log with a huge section; returns ``root``."""
    config = write_config(root)
    books = root / "books"
    books.mkdir()
    write_markdown_book(books / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    cook = write_markdown_book(books / "bread.md", "Bread at Home", {
        "Dough": {"Kneading": "Knead the dough until it is smooth and springs back; "
                              "gluten strands trap the gas of the yeast. " * 5},
    })
    cook.write_text(cook.read_text(encoding="utf-8").replace("Test Author", "Ada Baker"),
                    encoding="utf-8")
    write_markdown_book(books / "log.md", "Lighthouse Log", {
        "Winter": {"Every night": "\n\n".join([HUGE_PARAGRAPH] * 16)},  # ~60k chars
    })
    with Library.open(config) as lib:
        for name in ("garden.md", "bread.md", "log.md"):
            lib.ingest(books / name)
    return root


async def books_by_slug(client: Client) -> dict[str, dict[str, Any]]:
    """``list_books`` of a connected client, by slug."""
    listed = structured(await client.call_tool("list_books", {}))
    return {b["slug"]: b for b in listed["books"]}
