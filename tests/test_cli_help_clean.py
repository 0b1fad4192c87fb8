"""No command's ``--help`` shows the code's internals: ``serve-mcp --help`` named
``mcp_server/starting.py``, and ``page --help`` showed reST double backticks (````-o -````).
Every command and subcommand's help is walked."""

from __future__ import annotations

import pytest
import typer.main

from grimoire_beholder.cli.command_table import COMMANDS
from helpers import run_cli


def _command_paths() -> list[list[str]]:
    import importlib

    from grimoire_beholder.cli.app import app

    for listed in COMMANDS.values():  # every command registers on the app
        importlib.import_module(f"grimoire_beholder.cli.{listed.module}")
    root = typer.main.get_command(app)
    paths: list[list[str]] = [[]]
    for name in sorted(COMMANDS):
        paths.append([name])
        command = root.commands[name]  # type: ignore[attr-defined]
        paths += [[name, sub] for sub in sorted(getattr(command, "commands", {}))]
    return paths


PATHS = _command_paths()


def test_the_walk_reaches_subcommands() -> None:
    assert ["token", "create"] in PATHS and ["hook", "prompt"] in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "top")
def test_help_names_no_source_file_and_no_double_backticks(path: list[str]) -> None:
    for columns in ("80", "200"):
        run = run_cli(*path, "--help", env={"COLUMNS": columns})
        assert run.returncode == 0, run.stderr
        assert "``" not in run.stdout, run.stdout
        assert ".py" not in run.stdout, run.stdout
