"""``mcp-config CLIENT [--write]`` against a temporary HOME: the entry names absolute paths
that exist, ``--write`` keeps everything else in the client's file, backs it up, and is
idempotent; the written entry starts a server a real MCP client can use."""

from __future__ import annotations

import json
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from mcp_helpers import structured
from user_home import SAMPLE, backups, client_environ, run_client_cli

OTHER = {"command": "/opt/other/bin/other-server", "args": ["--flag"], "env": {"K": "v"}}


@pytest.fixture
def shelf(home: Path) -> Path:
    """A small library (fake embedder) in ``home / "shelf"``."""
    shelf = home / "shelf"
    shelf.mkdir()
    (shelf / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nchunk_size = 120\n'
        'chunk_overlap = 20\n')
    ingest = run_client_cli(home, "ingest", str(SAMPLE), "-q", "--library", str(shelf))
    assert ingest.returncode == 0
    return shelf


def assert_points_at(entry: dict[str, object], shelf: Path) -> None:
    command, args = entry["command"], entry["args"]
    assert isinstance(command, str) and isinstance(args, list)
    assert Path(command).is_absolute() and Path(command).is_file()
    assert Path(command).name != "uv"
    library = Path(args[args.index("--library") + 1])
    assert library.is_absolute() and library == shelf and (library / "book.db").is_file()


def test_claude_desktop_write_keeps_other_servers_backs_up_and_is_idempotent(
        home: Path, shelf: Path) -> None:
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    original = {"globalShortcut": "Ctrl+Space", "mcpServers": {"other": OTHER}}
    path.write_text(json.dumps(original))

    proc = run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    written = json.loads(path.read_text())
    assert written["globalShortcut"] == "Ctrl+Space"
    assert written["mcpServers"]["other"] == OTHER
    assert_points_at(written["mcpServers"]["grimoire-beholder"], shelf)
    [backup] = backups(path)
    assert json.loads(backup.read_text()) == original

    again = run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library", str(shelf))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert json.loads(path.read_text()) == written and len(backups(path)) == 1


def test_claude_code_writes_the_user_scope_of_claude_json(home: Path, shelf: Path) -> None:
    path = home / ".claude.json"
    state = {"numStartups": 12, "projects": {"/src/app": {"mcpServers": {}}},
             "mcpServers": {"other": {"type": "stdio", **OTHER}}}
    path.write_text(json.dumps(state))
    path.chmod(0o600)
    assert run_client_cli(home, "mcp-config", "claude-code", "--write", "--library",
               str(shelf)).returncode == 0
    written = json.loads(path.read_text())
    assert {k: written[k] for k in ("numStartups", "projects")} == {
        "numStartups": 12, "projects": state["projects"]}
    assert written["mcpServers"]["other"] == state["mcpServers"]["other"]
    entry = written["mcpServers"]["grimoire-beholder"]
    assert entry["type"] == "stdio"
    assert_points_at(entry, shelf)
    assert path.stat().st_mode & 0o777 == 0o600


def test_codex_keeps_comments_and_other_tables_and_replaces_a_stale_entry(
        home: Path, shelf: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('# my settings\nmodel = "o3"\n\n[mcp_servers.other]\n'
                    'command = "/opt/other"  # keep this comment\nargs = []\n\n'
                    '[mcp_servers.grimoire-beholder]\ncommand = "uv"\nargs = ["run"]\n'
                    '[mcp_servers.grimoire-beholder.env]\nX = "1"\n\n'
                    '# the quick profile\n[profiles.fast]\nmodel = "o4-mini"\n')
    proc = run_client_cli(home, "mcp-config", "codex", "--write", "--library", str(shelf))
    assert proc.returncode == 0 and "replaced" in proc.stdout, proc.stderr
    text = path.read_text()
    assert text.startswith("# my settings\n") and "# keep this comment" in text
    assert "\n# the quick profile\n[profiles.fast]\n" in text
    data = tomllib.loads(text)
    assert data["model"] == "o3" and data["profiles"] == {"fast": {"model": "o4-mini"}}
    assert data["mcp_servers"]["other"] == {"command": "/opt/other", "args": []}
    entry = data["mcp_servers"]["grimoire-beholder"]
    assert "env" not in entry
    assert_points_at(entry, shelf)
    assert run_client_cli(home, "mcp-config", "codex", "--write", "--library",
               str(shelf)).stdout.endswith("nothing changed\n")


def test_a_symlinked_client_file_is_written_through_the_link(home: Path, shelf: Path) -> None:
    """Dotfiles kept in a repository and linked into place stay linked."""
    kept = home / "dotfiles" / "claude.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    link = home / ".claude.json"
    link.symlink_to(kept)
    proc = run_client_cli(home, "mcp-config", "claude-code", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and link.resolve() == kept
    servers = json.loads(kept.read_text())["mcpServers"]
    assert servers["other"] == OTHER
    assert_points_at(servers["grimoire-beholder"], shelf)


@pytest.mark.parametrize("text", ["", "\n"], ids=["empty", "blank line"])
def test_an_empty_client_file_takes_the_entry(home: Path, shelf: Path, text: str) -> None:
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)  # as `touch` leaves it
    proc = run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert_points_at(json.loads(path.read_text())["mcpServers"]["grimoire-beholder"], shelf)


def test_writes_within_one_second_keep_every_backup(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-pointing the entry twice in a row keeps the backup of the user's original file."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli import client_configs as clients
    from grimoire_beholder.cli.entry import app

    for key, value in client_environ(home).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(clients.time, "strftime", lambda _format: "20260101-120000")
    path = home / ".claude.json"
    original = json.dumps({"numStartups": 3})
    path.write_text(original)
    for name in ("first", "second", "third"):
        result = CliRunner().invoke(app, ["mcp-config", "claude-code", "--write",
                                          "--library", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    saved = backups(path)
    assert len(saved) == 3 and saved[0].read_text() == original


def test_an_entry_naming_a_cached_uvx_environment_is_warned_about(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``uvx --from … grimoire-beholder mcp-config`` would pin a path in uv's cache."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli import client_configs as clients
    from grimoire_beholder.cli.entry import app

    cache = tmp_path / "uv-cache"
    command = cache / "archive-v0" / "Xy12" / "bin" / "grimoire-beholder"
    command.parent.mkdir(parents=True)
    (command.parents[1] / "CACHEDIR.TAG").write_text("")  # uv tags every environment
    for key, value in client_environ(home).items():
        monkeypatch.setenv(key, value)
    args = ["mcp-config", "codex", "--library", str(tmp_path)]
    monkeypatch.setattr(clients, "executable", lambda: [str(command)])
    assert "warning" not in CliRunner().invoke(app, args).stderr
    (cache / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and "uv tool install" in result.stderr.split("\n")[0]


def test_without_write_it_prints_the_entry_and_writes_nothing(home: Path, shelf: Path) -> None:
    before = set(home.rglob("*"))
    printed = run_client_cli(home, "mcp-config", "codex", "--library", str(shelf))
    entry = tomllib.loads(printed.stdout)["mcp_servers"]["grimoire-beholder"]
    assert_points_at(entry, shelf)
    desktop = run_client_cli(home, "mcp-config", "claude-desktop", "--library", str(shelf))
    assert_points_at(json.loads(desktop.stdout)["mcpServers"]["grimoire-beholder"], shelf)
    assert set(home.rglob("*")) == before


def test_a_client_file_that_does_not_parse_is_left_alone(home: Path, shelf: Path) -> None:
    path = home / ".claude.json"
    path.write_text('{"mcpServers": {,}')
    proc = run_client_cli(home, "mcp-config", "claude-code", "--write", "--library", str(shelf))
    assert proc.returncode != 0 and proc.stderr.startswith("error:") and "left as it is" in \
        proc.stderr
    assert path.read_text() == '{"mcpServers": {,}' and not backups(path)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.slow  # a real server over stdio
async def test_the_written_entry_starts_a_server_that_answers(
        home: Path, shelf: Path, anyio_backend: str) -> None:
    assert run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library",
               str(shelf)).returncode == 0
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    entry = json.loads(path.read_text())["mcpServers"]["grimoire-beholder"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                   cwd=str(home / "work"), env=client_environ(home))
    async with Client(params) as client:
        found = structured(await client.call_tool(
            "search_book", {"question": "how far can a lighthouse beam reach?"}))
        served = client.server_info
    assert found["results"][0]["book"] == "The Lighthouse Keeper's Handbook"
    # The client's server list and logs show which release answers (it was blank).
    assert (served.name, served.version) == ("grimoire-beholder",
                                             version("grimoire-beholder-mcp"))


@pytest.mark.slow  # a real server over stdio
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_allow_options_go_into_the_entry_and_start_the_upkeep_tools(
        home: Path, shelf: Path, anyio_backend: str) -> None:
    inbox = home / "inbox"
    inbox.mkdir()
    proc = run_client_cli(home, "mcp-config", "claude-code", "--write", "--library", str(shelf),
               "--allow-sync", "--allow-add", "../inbox", "--allow-remove")
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["grimoire-beholder"]
    assert_points_at(entry, shelf)
    args = entry["args"]
    assert {"--allow-sync", "--allow-remove"} <= set(args)
    assert args[args.index("--allow-add") + 1] == str(inbox)  # absolute, as resolved here
    params = StdioServerParameters(command=entry["command"], args=args, cwd=str(home),
                                   env=client_environ(home))
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"search_book", "sync_library", "add_book", "remove_book"} <= names


def test_an_allowed_folder_that_does_not_exist_is_refused_before_writing(
        home: Path, shelf: Path) -> None:
    proc = run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library", str(shelf),
               "--allow-add", str(home / "missing"))
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.strip() == f"error: allowed folder {home / 'missing'} does not exist"
    assert not (home / ".config" / "Claude").exists()


def test_cursor_writes_its_global_mcp_json(home: Path, shelf: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    proc = run_client_cli(home, "mcp-config", "cursor", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    written = json.loads(path.read_text())
    assert written["mcpServers"]["other"] == OTHER
    assert_points_at(written["mcpServers"]["grimoire-beholder"], shelf)
    assert run_client_cli(home, "mcp-config", "cursor", "--write", "--library",
               str(shelf)).stdout.endswith("nothing changed\n")


def test_vscode_writes_servers_with_stdio_in_the_user_profile(home: Path, shelf: Path) -> None:
    # VS Code's user mcp.json on Linux: $XDG_CONFIG_HOME/Code/User/mcp.json; its own shape,
    # {"servers": {NAME: {"type": "stdio", ...}}} next to "inputs".
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"inputs": [], "servers": {"other": OTHER}}))
    proc = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    written = json.loads(path.read_text())
    assert written["inputs"] == [] and written["servers"]["other"] == OTHER
    assert "mcpServers" not in written
    entry = written["servers"]["grimoire-beholder"]
    assert entry["type"] == "stdio"
    assert_points_at(entry, shelf)


def test_vscode_without_write_prints_its_shape(home: Path, shelf: Path) -> None:
    proc = run_client_cli(home, "mcp-config", "vscode", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)) == {"servers"}
    assert str(home / ".config" / "Code" / "User" / "mcp.json") in proc.stderr
