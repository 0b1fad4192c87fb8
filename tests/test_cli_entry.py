"""However the CLI is started, it is the same CLI: one Typer app with every command on it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from grimoire_beholder.cli.app import every_command
from grimoire_beholder.cli.help_pages import PANELS

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "grimoire_beholder"
COMMANDS = {"ingest", "sync", "list", "delete", "status", "check", "reindex-fts", "query",
            "serve-mcp", "eval", "stats", "hook", "verify", "page", "health", "lookup", "outline",
            "show", "mcp-config", "unfollow", "web", "token"}
INVOCATIONS = {
    "console script": [str(Path(sys.executable).with_name("grimoire-beholder"))],
    "python -m grimoire_beholder": [sys.executable, "-m", "grimoire_beholder"],
    "python -m grimoire_beholder.cli.entry": [sys.executable, "-m", "grimoire_beholder.cli.entry"],
}


def _listed_commands(help_text: str) -> set[str]:
    """Command names from the command panels (``Build the library:`` …) of ``--help``."""
    names: set[str] = set()
    for panel in PANELS:
        section = help_text.split(f"\n{panel}:\n", 1)[1].split("\n\n", 1)[0]
        names |= {line.split()[0] for line in section.splitlines() if line.startswith("  ")}
    return names


def test_the_app_has_every_command() -> None:
    assert set(every_command().commands) == COMMANDS


@pytest.mark.parametrize("command", INVOCATIONS.values(), ids=INVOCATIONS.keys())
def test_help_lists_every_command(command: list[str]) -> None:
    proc = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert _listed_commands(proc.stdout) == COMMANDS


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Package modules ``path`` imports anywhere: top level, in functions, under TYPE_CHECKING."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(p for p in (base, node.module) if p)
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}
    return found & modules


def test_no_cli_module_is_part_of_an_import_cycle() -> None:
    paths = list(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    graph = {_module_name(p): _imports(p, modules) for p in paths}
    cli_modules = {m for m in modules
                   if m.startswith("grimoire_beholder.cli") or m.endswith("__main__")}
    assert {"grimoire_beholder.cli.entry", "grimoire_beholder.cli.app"} <= cli_modules
    for start in cli_modules:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            module = todo.pop()
            assert module != start, f"{start} imports itself back"
            if module not in seen:
                seen.add(module)
                todo += graph[module]


def test_ctrl_c_ends_the_process_even_with_a_worker_thread_left_waiting() -> None:
    """Ctrl-C during a search can catch a worker thread of a pool as it starts, before the
    pool knows it: the interpreter's teardown then waited for it forever (a hung ``query``
    after Ctrl-C). The script ends at once with 130 instead."""
    code = "\n".join([
        "import sys, threading",
        "from grimoire_beholder.cli import entry",
        "def interrupted():",
        "    threading.Thread(target=threading.Event().wait).start()  # never told to stop",
        "    raise KeyboardInterrupt",
        "entry._main = interrupted",
        "sys.argv = ['grimoire-beholder', 'status']",
        "entry.script()"])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert proc.returncode == 130, proc.stderr
