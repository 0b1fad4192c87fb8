"""``mcp-config`` on each platform's conventions: every client's file where that client reads
it on macOS, Windows and Linux (the platform seam ``portable.PLATFORM`` set, the CLI run in
this process), and ``--write`` into a HOME that cannot be written: one line, exit 1, the
client's file as it was."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from grimoire_beholder import portable
from helpers import CliRun, run_cli

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "lighthouse-keepers-handbook.md"

# Where each client reads its config, relative to the user's home, by platform (the clients'
# own documentation; Claude Desktop has no official Linux build: its XDG place is kept).
EXPECTED = {
    "darwin": {
        "claude-desktop": "Library/Application Support/Claude/claude_desktop_config.json",
        "vscode": "Library/Application Support/Code/User/mcp.json",
    },
    "win32": {  # %APPDATA% is HOME/AppData/Roaming, %USERPROFILE% is HOME
        "claude-desktop": "AppData/Roaming/Claude/claude_desktop_config.json",
        "vscode": "AppData/Roaming/Code/User/mcp.json",
    },
    "linux": {
        "claude-desktop": ".config/Claude/claude_desktop_config.json",
        "vscode": ".config/Code/User/mcp.json",
    },
}
EVERYWHERE = {"claude-code": ".claude.json", "codex": ".codex/config.toml",
              "cursor": ".cursor/mcp.json"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    shelf = home / "shelf"
    shelf.mkdir()
    (shelf / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nchunk_size = 120\n'
        'chunk_overlap = 20\n')
    assert run(home, "ingest", str(SAMPLE), "-q", "--library", str(shelf)).returncode == 0
    return home


def run(home: Path, *args: str) -> CliRun:
    """The CLI in-process as the user at ``home``: HOME, USERPROFILE and APPDATA point there
    (what Windows sets), XDG_CONFIG_HOME is unset (the default ~/.config applies)."""
    env: dict[str, str | None] = {k: None for k in os.environ
                                  if k.startswith(("GRIMOIRE_BEHOLDER_", "CODEX_HOME", "XDG_"))}
    env.update(HOME=str(home), USERPROFILE=str(home),
               APPDATA=str(home / "AppData" / "Roaming"),
               XDG_DATA_HOME=str(home / ".local" / "share"))
    return run_cli(*args, cwd=home / "work", env=env)


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_each_client_file_is_where_that_client_reads_it(
        home: Path, platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portable, "PLATFORM", platform)
    for client, relative in {**EXPECTED[platform], **EVERYWHERE}.items():
        target = home / relative
        shown = run(home, "mcp-config", client, "--library", str(home / "shelf"))
        assert shown.returncode == 0, shown.stderr
        assert f"(goes in {target};" in shown.stderr.replace("\n", ""), (client, shown.stderr)
        done = run(home, "mcp-config", client, "--write", "--library", str(home / "shelf"))
        assert done.returncode == 0, done.stderr
        assert target.is_file(), (client, done.stdout)
        assert "grimoire-beholder" in target.read_text()
        assert str(target) in done.stdout
    made = sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and "shelf" not in p.parts and ".local" not in p.parts)
    assert made == sorted({**EXPECTED[platform], **EVERYWHERE}.values())


def test_codex_home_is_honoured_on_every_platform(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(portable, "PLATFORM", platform)
        codex = home / f"codex-{platform}"
        env_run = run_cli("mcp-config", "codex", "--write", "--library", str(home / "shelf"),
                          cwd=home / "work",
                          env={"HOME": str(home), "USERPROFILE": str(home),
                               "CODEX_HOME": str(codex)})
        assert env_run.returncode == 0, env_run.stderr
        assert (codex / "config.toml").is_file()


@pytest.fixture
def frozen(home: Path) -> Iterator[Path]:
    """``home`` made unwritable even for root (the immutable flag), or by its mode."""
    if os.geteuid() == 0:
        if not shutil.which("chattr") or subprocess.run(
                ["chattr", "+i", str(home)], capture_output=True).returncode != 0:
            pytest.skip("cannot make a folder unwritable for root here")
        try:
            yield home
        finally:
            subprocess.run(["chattr", "-i", str(home)], check=False)
    else:
        home.chmod(0o555)
        try:
            yield home
        finally:
            home.chmod(0o755)


@pytest.mark.parametrize("existing", [None, {"mcpServers": {"other": {"command": "x"}}}])
def test_write_into_a_read_only_home_is_one_line_and_changes_nothing(
        home: Path, existing: dict[str, object] | None, request: pytest.FixtureRequest) -> None:
    target = home / ".claude.json"
    if existing is not None:
        target.write_text(json.dumps(existing))
    request.getfixturevalue("frozen")
    before = sorted(p.name for p in home.iterdir())
    done = run(home, "mcp-config", "claude-code", "--write", "--library", str(home / "shelf"))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert f"cannot write {target}" in done.stderr
    assert sorted(p.name for p in home.iterdir()) == before
    if existing is not None:
        assert json.loads(target.read_text()) == existing
