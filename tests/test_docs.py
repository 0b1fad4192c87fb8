"""Every CLI command and every config key is documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from grimoire_beholder.cli.entry import app
from grimoire_beholder.config import Config, config_keys

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[str]:
    root = typer.main.get_command(app)
    names: list[str] = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        names += [f"{name} {sub}" for sub in subs] if subs else [name]
    return names


def test_every_command_is_in_the_readme_commands_table() -> None:
    table_rows = [line for line in README.splitlines() if line.startswith("| `")]
    missing = [c for c in _commands()
               if not any(re.search(rf"`{re.escape(c)}(\b|`)", row) for row in table_rows)]
    assert not missing, f"commands missing from README's table: {missing}"


def test_every_config_key_is_in_the_readme_with_its_default() -> None:
    defaults = Config()
    for key in config_keys():
        row = next((line for line in README.splitlines() if line.startswith(f"| `{key}` |")),
                   None)
        assert row is not None, f"config key {key} missing from README"
        value = getattr(defaults, key)
        shown = '""' if value == "" else str(value)
        assert f"`{shown}`".lower() in row.lower(), f"README gives another default for {key}"
