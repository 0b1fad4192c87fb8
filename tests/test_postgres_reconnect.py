"""A long-running ``serve-mcp`` on a PostgreSQL library outlives its database server's
restarts: on stdio and over HTTP, the next request after a restart is answered; while the
server is down a request gets one clear error (an MCP tool error, or HTTP 503 with
``Retry-After``) and the process stays up. The database server here is a real one of the
test's own (restarting the shared test server would break other tests)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pgserver
import psycopg
import pytest

from helpers import write_markdown_book
from http_helpers import HttpServer, cli, http_client, initialize, make_token
from mcp_helpers import RawStdioServer, structured
from pg_server import SERVER_CONFIG

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a server of its own, restarted



class Database:
    """A PostgreSQL server of this module's own, with one library in it."""

    def __init__(self, folder: Path) -> None:
        # Not under pytest's private temporary folder: as root the wheel runs the server as
        # its own user, which must reach the data folder (as tests/pg_server.py does).
        self.data = Path(tempfile.mkdtemp(prefix=f"grimoire-pgrestart-{os.getuid()}-"))
        self.data.chmod(0o755)
        self.server = pgserver.get_server(self.data / "pgdata", cleanup_mode="delete")
        admin = self.server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "books"')
        self.url = self.server.get_uri("books")
        self.config = folder / "config.toml"
        self.config.write_text(SERVER_CONFIG.format(url=self.url), encoding="utf-8")

    def restart(self) -> None:
        pgserver.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=self.server.pgdata,
                        user=self.server.system_user)

    def stop(self) -> None:
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata,
                        user=self.server.system_user)

    def start(self) -> None:
        self.server.ensure_postgres_running()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    folder = tmp_path_factory.mktemp("pg-restart")
    db = Database(folder)
    try:
        book = write_markdown_book(folder / "runbook.md", "Runbook", {
            "Deploys": {"Rollout": "Roll the release out to one canary host first, watch "
                                   "the error rate, then the rest of the fleet. " * 4}})
        cli("ingest", str(book), "--config", str(db.config))
        yield db
    finally:
        db.start()  # a test that failed while it was down: stop it the normal way
        db.server.cleanup()
        shutil.rmtree(db.data, ignore_errors=True)


def _search(server: RawStdioServer, question: str) -> dict[str, Any]:
    reply = server.send("tools/call", {"name": "search_book",
                                       "arguments": {"question": question}})
    assert reply is not None
    return dict(reply["result"])


def test_serve_mcp_on_stdio_answers_after_the_database_restarts(database: Database,
                                                                tmp_path: Path) -> None:
    server = RawStdioServer(tmp_path, env={"GRIMOIRE_BEHOLDER_CONFIG": str(database.config)})
    try:
        server.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "test", "version": "0"}})
        server.send("notifications/initialized", notify=True)
        first = _search(server, "canary rollout")
        assert not first.get("isError") and first["structuredContent"]["results"]

        database.restart()
        after = _search(server, "canary rollout")  # the next request: answered
        assert not after.get("isError"), after
        assert after["structuredContent"]["results"][0]["slug"] == "runbook"

        database.stop()
        down = _search(server, "canary rollout")
        assert down.get("isError") is True
        message = down["content"][0]["text"]
        assert "PostgreSQL library" in message and len(message.splitlines()) == 1
        assert "Traceback" not in message
        assert server.proc.poll() is None  # the server process is still there

        database.start()
        back = _search(server, "canary rollout")
        assert not back.get("isError"), back
        assert back["structuredContent"]["results"][0]["slug"] == "runbook"
    finally:
        database.start()
        _, err = server.close()
    assert "Traceback" not in err, err


async def test_serve_mcp_over_http_answers_after_the_database_restarts(
        database: Database) -> None:
    token = make_token(database.config, "restart-reader")
    server = HttpServer(database.config)
    try:
        async with http_client(server.url, token) as client:
            hits = structured(await client.call_tool("search_book", {"question": "canary"}))
            assert hits["results"][0]["slug"] == "runbook"
            database.restart()
            # the same session, the next request: its token checked and its search run
            again = structured(await client.call_tool("search_book", {"question": "canary"}))
            assert again["results"][0]["slug"] == "runbook"

        database.stop()
        refused = initialize(server.url, token)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"].isdigit()
        assert "did not answer" in refused.json()["error_description"]
        assert server.proc.poll() is None

        database.start()
        assert initialize(server.url, token).status_code == 200
        async with http_client(server.url, token) as client:
            back = structured(await client.call_tool("search_book", {"question": "canary"}))
            assert back["results"][0]["slug"] == "runbook"
    finally:
        database.start()
        err = server.close()
    assert "Traceback" not in err, err
