"""Every way a person asks for help gets it: ``--help``, ``-h`` and ``help [COMMAND…]``, at
the top and for every command, the same page each way."""

from __future__ import annotations

import pytest

from grimoire_beholder.cli.command_table import COMMANDS
from helpers import run_cli

FORMS = [[], ["query"], ["hook"], ["hook", "prompt"], ["token", "create"], ["serve-mcp"]]


@pytest.mark.parametrize("command", FORMS, ids=lambda c: " ".join(c) or "(top)")
def test_dash_h_and_help_show_the_help_page(command: list[str]) -> None:
    page = run_cli(*command, "--help")
    assert page.returncode == 0 and page.stdout.startswith("Usage: grimoire-beholder")
    assert run_cli(*command, "-h") == page
    assert run_cli("help", *command) == page


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_names_every_command(name: str) -> None:
    run = run_cli("help", name)
    assert run.returncode == 0, run.stderr
    assert f"grimoire-beholder {name}" in run.stdout


def test_help_for_a_mistyped_command_is_told_the_near_name() -> None:
    run = run_cli("help", "qurey")
    assert run.returncode == 2
    assert "Did you mean 'query'?" in run.stderr
