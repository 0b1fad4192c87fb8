"""Access tokens and ``serve-mcp --http`` on a library in a real PostgreSQL server: the same
CLI, the same HTTP server and the same SDK client as on SQLite (``test_mcp_http.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from helpers import write_markdown_book
from http_helpers import HttpServer, cli, http_client, initialize, make_token
from mcp_helpers import structured, text
from pg_server import SERVER_CONFIG

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

# A real server, real CLI and HTTP server processes: the slow tier.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]
UPKEEP = {"sync_library", "add_book", "remove_book"}


class Served:
    def __init__(self, config: Path, url: str, server: HttpServer, reader: str,
                 keeper: str) -> None:
        self.config, self.db, self.server = config, url, server
        self.reader, self.keeper = reader, keeper

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, pg_admin_url: str) -> Iterator[Served]:
    from pg_server import fresh_database

    url = fresh_database(pg_admin_url)
    base = tmp_path_factory.mktemp("pg-http")
    config = base / "config.toml"
    config.write_text(SERVER_CONFIG.format(url=url), encoding="utf-8")
    runbook = write_markdown_book(base / "runbook.md", "Runbook", {
        "Deploys": {"Rollout": "Roll the release out to one canary host first, watch the "
                               "error rate, then the rest of the fleet. " * 4}})
    bread = write_markdown_book(base / "bread.md", "Bread at Home", {
        "Dough": {"Kneading": "Knead the dough until it is smooth and springs back. " * 5}})
    for book in (runbook, bread):
        cli("ingest", str(book), "--config", str(config))
    reader = make_token(config, "reader")
    keeper = make_token(config, "keeper", "--allow-sync", "--allow-remove")
    server = HttpServer(config)
    try:
        yield Served(config, url, server, reader, keeper)
    finally:
        server.close()


def _stored(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sql)]  # type: ignore[arg-type]


def test_no_live_token_gets_401_and_the_server_names_the_database_without_password(
        served: Served) -> None:
    for token in (None, "gbt_000000000000_" + "x" * 43, served.reader[:-1] + "?"):
        reply = initialize(served.url, token)
        assert reply.status_code == 401, (token, reply.text)
        assert "invalid_token" in reply.headers["www-authenticate"]
    assert initialize(served.url, served.reader).status_code == 200
    started = "".join(served.server.stderr)
    assert "postgresql://" in started and "2 token(s)" in started


async def test_a_read_only_token_searches_but_never_sees_or_calls_upkeep_tools(
        served: Served) -> None:
    async with http_client(served.url, served.reader) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "search_book" in names and not names & UPKEEP
        hits = structured(await client.call_tool("search_book", {"question": "canary rollout"}))
        assert hits["results"][0]["slug"] == "runbook"
        for tool, args in (("remove_book", {"book_id": "runbook"}),
                           ("sync_library", {"dry_run": True})):
            refused = await client.call_tool(tool, args)
            assert refused.is_error and f"Unknown tool: {tool}" in text(refused)
        listed = structured(await client.call_tool("list_books", {}))
        assert listed["count"] == 2  # nothing was removed


async def test_an_upkeep_token_lists_the_tools_it_was_made_with(served: Served) -> None:
    async with http_client(served.url, served.keeper) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"sync_library", "remove_book"} <= names and "add_book" not in names


def test_tokens_are_listed_and_revoked_by_name_and_only_digests_are_stored(
        served: Served) -> None:
    visitor = make_token(served.config, "visitor")
    assert initialize(served.url, visitor).status_code == 200
    listed = {t["name"]: t for t in json.loads(
        cli("token", "list", "--json", "--config", str(served.config)).stdout)}
    assert set(listed) == {"keeper", "reader", "visitor"}
    assert listed["keeper"]["rights"] == "sync, remove" and listed["reader"]["rights"] == (
        "read-only")
    assert listed["visitor"]["last_used"] is not None  # its use above was recorded
    rows = _stored(served.db, "SELECT name, key_id, secret_sha256 FROM access_tokens")
    for token in (served.reader, served.keeper, visitor):
        secret = token.split("_", 2)[2]  # gbt_<key id>_<secret>; the secret may hold "_"
        assert all(secret not in str(row) for row in rows)
    assert cli("token", "revoke", "visitor", "--config", str(served.config)).stdout.startswith(
        "revoked token 'visitor'")
    assert initialize(served.url, visitor).status_code == 401  # at once, no restart
    again = cli("token", "create", "reader", "--config", str(served.config), check=False)
    assert again.returncode != 0 and "already exists" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
