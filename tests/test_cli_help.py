"""Help that teaches: the bare command prints the grouped help and exits 0; every help page
names values in words (no Python types), shows the choices, and has examples."""

from __future__ import annotations

import re
import subprocess
from typing import get_args

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.app import Mode, Role, SourceType, every_command
from grimoire_beholder.cli.client_configs import CLIENTS
from grimoire_beholder.cli.entry import app
from grimoire_beholder.cli.help_pages import PANELS
from grimoire_beholder.cli.setup_commands import Client
from grimoire_beholder.store.hit_queries import SOURCE_TYPES
from grimoire_beholder.structure.roles import ROLES
from mcp_helpers import cli_command

GROUP = every_command()
COMMANDS = sorted(GROUP.commands)  # type: ignore[attr-defined]
PAGES = [*([name] for name in COMMANDS), ["hook", "session-start"], ["hook", "prompt"]]
PYTHON_TYPES = re.compile(r"list\[|<(str|int|float|Path|path|bool)\b|\{\w+\}|<float range>")


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_bare_command_prints_the_grouped_help_and_exits_0() -> None:
    proc = subprocess.run(cli_command(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    panels = [line[:-1] for line in proc.stdout.splitlines() if line[:-1] in PANELS]
    assert panels == list(PANELS)
    build = proc.stdout.split("Build the library:\n", 1)[1].split("\n\n", 1)[0]
    assert build.split()[0] == "ingest"  # what a new user needs first comes first


@pytest.mark.parametrize("group", ["hook", "token"])
def test_a_bare_command_group_prints_its_help_and_exits_0(group: str) -> None:
    """`grimoire-beholder token` alone is a question, not a mistake: its help on stdout, exit
    0, like the bare command (it printed "error: Usage: …" and exited 2)."""
    result = CliRunner().invoke(app, [group])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: grimoire-beholder {group} ")
    assert "error" not in result.output.lower().split("commands:")[0]


def test_each_group_starts_with_what_a_new_user_needs_first() -> None:
    shown = _help()
    firsts = {}
    for panel in PANELS:
        rows = shown.split(f"{panel}:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        firsts[panel] = [row.split()[0] for row in rows if row.startswith("  ") and
                         not row.startswith("   ")]
    assert firsts["Build the library"][:2] == ["ingest", "sync"]
    assert firsts["Ask it"][0] == "query"
    assert firsts["Read it"][:3] == ["list", "outline", "show"]
    assert firsts["Check it"][0] == "status"
    assert firsts["Assistants"][:2] == ["mcp-config", "serve-mcp"]


@pytest.mark.parametrize("page", [[], *PAGES, ["hook"]], ids=" ".join)
def test_no_help_page_breaks_a_name_at_its_hyphen(page: list[str]) -> None:
    """Help is wrapped to the terminal (at most 78 columns) at spaces only: `claude-code`,
    `serve-mcp` and `grimoire-beholder` are typed as they are, so never cut in two."""
    broken = [line for line in _help(*page).splitlines() if re.search(r"\w-$", line)]
    assert not broken, broken


@pytest.mark.parametrize("page", PAGES, ids=" ".join)
def test_no_help_page_shows_a_python_type(page: list[str]) -> None:
    text = _help(*page)
    assert not PYTHON_TYPES.search(text), PYTHON_TYPES.search(text)


@pytest.mark.parametrize("name", [n for n in COMMANDS if n != "hook"])
def test_every_command_has_an_example(name: str) -> None:
    text = _help(name)
    examples = text.split("Examples:\n", 1)[1].splitlines()
    assert examples and examples[0].strip().startswith(f"grimoire-beholder {name}")


@pytest.mark.parametrize(("command", "option", "choices"), [
    ("query", "--mode", ("hybrid", "vector", "keyword")),
    ("query", "--type", SOURCE_TYPES),
    ("mcp-config", "CLIENT", CLIENTS),
])
def test_choices_are_shown(command: str, option: str, choices: tuple[str, ...]) -> None:
    text = _help(command)
    assert "|".join(choices) in text, text


def test_the_cli_choices_are_the_cores() -> None:
    assert get_args(SourceType) == SOURCE_TYPES
    assert tuple(Role) == ROLES
    assert get_args(Client) == CLIENTS
    assert set(get_args(Mode)) == {"hybrid", "vector", "keyword"}


def test_a_wrong_choice_is_one_line_naming_the_choices() -> None:
    proc = subprocess.run([*cli_command(), "query", "x", "--mode", "fuzzy"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith("error:") and "'hybrid', 'vector', 'keyword'" in line
