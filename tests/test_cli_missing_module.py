"""A command whose code cannot be imported — a dependency missing from a broken or partial
install — is one ``error:`` line naming the module, not a traceback, and every other command
(and ``--help``) still works: the CLI imports a command's module only when it runs. Ctrl-C
while the CLI is still importing exits 130 without a traceback, as it does later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import fake_garden_env

# Run the CLI as the script does, with importing MODULE (argv[1]) failing as it does when the
# package is not installed (or, with GB_TEST_CTRL_C set, as Ctrl-C pressed meanwhile does).
HIDING = (
    "import importlib.abc, os, sys\n"
    "hidden = sys.argv.pop(1)\n"
    "class Missing(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == hidden or name.startswith(hidden + '.'):\n"
    "            if os.environ.get('GB_TEST_CTRL_C'):\n"
    "                raise KeyboardInterrupt\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, Missing())\n"
    "sys.argv[0] = 'grimoire-beholder'\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


def _run(hidden: str, *args: str, ctrl_c: bool = False,
         library: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRIMOIRE_BEHOLDER_LIBRARY": str(library or os.devnull + "-none"),
           **({"GB_TEST_CTRL_C": "1"} if ctrl_c else {})}
    return subprocess.run([sys.executable, "-c", HIDING, hidden, *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=env,
                          check=False)


@pytest.mark.parametrize(("hidden", "argv"), [
    ("mcp", ["serve-mcp"]),  # imported when the server starts, once the library is open
    ("grimoire_beholder.cli.web_commands", ["web"]),  # the command's own module
    ("rich", ["list"]),  # the plain form, run without the parser
])
def test_a_missing_module_is_one_line_naming_it(hidden: str, argv: list[str],
                                                garden_template: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    fake_garden_env(garden_template, library)
    run = _run(hidden, *argv, library=library)
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith("error: "), run.stderr
    assert len(run.stderr.splitlines()) == 1, run.stderr
    assert repr(hidden) in run.stderr
    assert "Traceback" not in run.stderr


def test_under_json_the_missing_module_is_a_json_error() -> None:
    run = _run("rich", "list", "--json")
    assert run.returncode == 1
    error = json.loads(run.stderr)
    assert error["exit_code"] == 1 and "'rich'" in error["error"]


def test_help_and_other_commands_work_without_a_commands_module() -> None:
    run = _run("grimoire_beholder.cli.web_commands", "--help")
    assert run.returncode == 0, run.stderr
    assert " web " in run.stdout and " query " in run.stdout
    run = _run("grimoire_beholder.cli.web_commands", "status", "--json")
    assert "Traceback" not in run.stderr and "web_commands" not in run.stderr


@pytest.mark.parametrize(("hidden", "argv"), [
    ("typer", ["--help"]),
    ("grimoire_beholder.cli.app", ["status"]),
    ("grimoire_beholder.cli.library_commands", ["status"]),  # the command's module
    ("grimoire_beholder.library", ["query", "tea"]),  # the plain form, without the parser
])
def test_ctrl_c_while_importing_exits_130_without_a_traceback(hidden: str,
                                                              argv: list[str]) -> None:
    run = _run(hidden, *argv, ctrl_c=True)
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
