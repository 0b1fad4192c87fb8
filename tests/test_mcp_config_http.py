"""``mcp-config CLIENT --url URL`` against a temporary HOME: each client's form of a server
over HTTP, the token named by environment variable and never written, merged like the stdio
entry; a client or an option that cannot take it is one clear line."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from user_home import backups, run_client_cli

URL = "https://books.example.org/mcp"


@pytest.mark.parametrize(("client", "file", "key", "expected"), [
    ("claude-code", ".claude.json", "mcpServers",
     {"type": "http", "url": URL, "headers": {"Authorization": "Bearer ${TEAM_TOKEN}"}}),
    ("cursor", ".cursor/mcp.json", "mcpServers",
     {"url": URL, "headers": {"Authorization": "Bearer ${env:TEAM_TOKEN}"}}),
    ("vscode", ".config/Code/User/mcp.json", "servers",
     {"type": "http", "url": URL, "headers": {"Authorization": "Bearer ${env:TEAM_TOKEN}"}}),
])
def test_json_clients_get_the_url_and_a_header_from_the_environment(
        home: Path, client: str, file: str, key: str, expected: dict[str, object]) -> None:
    path = home / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: {"other": {"url": "http://x/mcp"}}, "keep": 1}))
    written = run_client_cli(home, "mcp-config", client, "--url", URL, "--token-env", "TEAM_TOKEN",
                  "--write")
    assert written.returncode == 0, written.stderr
    data = json.loads(path.read_text())
    assert data[key]["grimoire-beholder"] == expected
    assert data[key]["other"] == {"url": "http://x/mcp"} and data["keep"] == 1
    assert len(backups(path)) == 1
    again = run_client_cli(home, "mcp-config", client, "--url", URL, "--token-env", "TEAM_TOKEN",
                "--write")
    assert "nothing changed" in again.stdout and len(backups(path)) == 1


def test_codex_reads_the_token_from_its_variable(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('# mine\nmodel = "o3"\n')
    assert run_client_cli(home, "mcp-config", "codex", "--url", URL, "--write").returncode == 0
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["grimoire-beholder"] == {
        "url": URL, "bearer_token_env_var": "GRIMOIRE_BEHOLDER_TOKEN"}
    assert path.read_text().startswith('# mine\nmodel = "o3"\n')


def test_the_printed_entry_names_the_variable_and_no_token(home: Path) -> None:
    shown = run_client_cli(home, "mcp-config", "claude-code", "--url", "http://127.0.0.1:8765/mcp")
    assert shown.returncode == 0, shown.stderr
    entry = json.loads(shown.stdout)["mcpServers"]["grimoire-beholder"]
    assert entry["headers"] == {"Authorization": "Bearer ${GRIMOIRE_BEHOLDER_TOKEN}"}
    assert "warning" not in shown.stderr  # loopback: nothing crosses a network
    plain = run_client_cli(home, "mcp-config", "cursor", "--url", "http://10.0.0.5:8765/mcp")
    assert "clear text" in plain.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["claude-desktop", "--url", URL], "Connectors"),
    (["cursor", "--url", "books.example.org/mcp"], "http(s)://HOST:PORT/mcp"),
    (["cursor", "--url", "https://user:pw@h/mcp"], "http(s)://HOST:PORT/mcp"),
    (["cursor", "--url", URL, "--token-env", "A-B"], "environment variable"),
    (["cursor", "--url", URL, "--allow-sync"], "token create"),
])
def test_what_cannot_be_written_is_one_line(home: Path, args: list[str], message: str) -> None:
    result = run_client_cli(home, "mcp-config", *args)
    assert result.returncode != 0 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line, line
