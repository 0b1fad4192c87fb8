"""A new user's HOME for CLI tests: its environment, the CLI run as that user (in-process
or as a real subprocess), and what a run left on disk. Test files import from here, never
from one another; the ``home`` fixture itself is in conftest.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers import CliRun, run_cli
from mcp_helpers import cli_command

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "lighthouse-keepers-handbook.md"


def fresh_home(tmp_path: Path) -> Path:
    """A fresh HOME holding an empty working folder (``home / "work"``)."""
    (tmp_path / "home" / "work").mkdir(parents=True)
    return tmp_path / "home"


def user_env(home: Path, **env: str) -> dict[str, str | None]:
    """A new user's environment: ``home`` as HOME and its XDG folders, no library chosen."""
    environ: dict[str, str | None] = {k: None for k in os.environ
                                      if k.startswith("GRIMOIRE_BEHOLDER_")}
    environ.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
                   XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
                   COLUMNS="200", **env)
    return environ


def run(home: Path, *args: str, cwd: Path | None = None, stdin: str = "",
        **env: str) -> CliRun:
    """The CLI, in-process, as the new user at ``home`` (in ``home / "work"`` by default)."""
    return run_cli(*args, cwd=cwd or home / "work", env=user_env(home, **env), stdin=stdin)


def run_process(home: Path, *args: str, cwd: Path | None = None
                ) -> subprocess.CompletedProcess[str]:
    """The CLI as a real subprocess of the new user at ``home``."""
    environ = {k: v for k, v in {**os.environ, **user_env(home)}.items() if v is not None}
    environ.pop("ORT_DISABLE_TELEMETRY", None)  # as a user has it: unset
    return subprocess.run([*cli_command(), *args], cwd=cwd or home / "work", env=environ,
                          capture_output=True, text=True, timeout=180, check=False)


def tree(folder: Path) -> set[Path]:
    """Every file and folder under ``folder`` (to show a command created nothing)."""
    return set(folder.rglob("*"))


def user_db(home: Path) -> Path:
    """Where the per-user library of the user at ``home`` lives."""
    return home / ".local" / "share" / "grimoire-beholder" / "book.db"


def client_environ(home: Path) -> dict[str, str]:
    """The environment of a user at ``home`` whose assistants' configs are under test."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GRIMOIRE_BEHOLDER_", "CODEX_HOME"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CONFIG_HOME=str(home / ".config"))
    return env


def run_client_cli(home: Path, *args: str) -> CliRun:
    """The CLI in-process (``helpers.run_cli``) as the user at ``home``, in ``home/work``."""
    dropped = {k: None for k in os.environ if k not in client_environ(home)}
    return run_cli(*args, cwd=home / "work", env={**client_environ(home), **dropped})


def backups(path: Path) -> list[Path]:
    """The backups ``mcp-config --write`` left beside ``path``, oldest first."""
    return sorted(path.parent.glob(path.name + ".bak-*"))
