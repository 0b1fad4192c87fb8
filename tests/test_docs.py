"""Every CLI command and every config key is documented in the README; every module of
src/ is named in ARCHITECTURE.md's layer table, and the table names no module that is gone."""

from __future__ import annotations

import re
from pathlib import Path

import grimoire_beholder
from grimoire_beholder.cli.app import every_command
from grimoire_beholder.config import Config, config_keys

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
SRC = Path(grimoire_beholder.__file__).parent
MODULE_FILE = re.compile(r"`(?:[a-z_]+/)*([a-z_]+\.(?:py|json|sql))`")


def _commands() -> list[str]:
    root = every_command()
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


def _layer_table() -> list[str]:
    """The rows of ARCHITECTURE.md's "Layers and who owns what" table."""
    section = ARCHITECTURE.split("## Layers and who owns what", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ")][2:]


def test_every_module_is_in_the_architecture_table_and_only_those() -> None:
    rows = _layer_table()
    files = {p.relative_to(SRC) for p in SRC.rglob("*") if p.suffix in {".py", ".json", ".sql"}
             and p.name != "__init__.py" and "__pycache__" not in p.parts}
    # A module is named in the row of its folder (`cli/`, `search/engine.py`, then bare names).
    missing = sorted(str(f) for f in files
                     if not any(f"`{f.name}`" in row or f"`{f.as_posix()}`" in row
                                for row in rows if len(f.parts) == 1
                                or f"`{f.parts[0]}/" in row))
    assert not missing, f"modules missing from ARCHITECTURE.md's layer table: {missing}"
    named = {m.group(1) for row in rows for m in MODULE_FILE.finditer(row)}
    gone = sorted(named - {f.name for f in files})
    assert not gone, f"ARCHITECTURE.md's layer table names modules that do not exist: {gone}"
