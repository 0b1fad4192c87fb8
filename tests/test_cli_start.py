"""A command starts with only what it uses: its own module, not every command's, and no model
runtime, MCP SDK or web server it does not need. ``--help`` lists every command without
importing any of them (cli/command_table.py), and says of each what the command itself says.

Speed itself is measured by bench/cli_latency.py with the load average; these tests pin what
a person notices as a slow start: which packages a command loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.core import TyperCommand

from grimoire_beholder.cli.app import app, every_command
from grimoire_beholder.cli.command_table import COMMANDS
from grimoire_beholder.cli.help_pages import PANELS
from grimoire_beholder.library import Library
from helpers import GARDEN_CHAPTERS, write_markdown_book

WATCHED = ("numpy", "onnxruntime", "mcp", "starlette", "uvicorn", "jinja2", "rich", "pymupdf",
           "ollama", "httpx", "pydantic", "typer")
# Run the CLI as the script does, then say which of WATCHED and which of our modules it loaded.
PROBE = (
    "import atexit, json, sys\n"
    "def _report():\n"
    f"    sys.__stderr__.write('LOADED ' + json.dumps([[m for m in {WATCHED!r} if m in "
    "sys.modules], sorted(m for m in sys.modules if m.startswith('grimoire_beholder.'))]) "
    "+ '\\n')\n"
    "atexit.register(_report)\n"
    "sys.argv = ['grimoire-beholder', *sys.argv[1:]]\n"
    "from grimoire_beholder.cli.entry import main\n"
    "main()\n")


def _loaded(*args: str, env: dict[str, str] | None = None, stdin: str = ""
            ) -> tuple[set[str], set[str]]:
    """(the WATCHED packages, the grimoire_beholder modules) a CLI run imported."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=120, input=stdin, check=False,
                          env={**os.environ, **(env or {})})
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED "))
    packages, modules = json.loads(line[len("LOADED "):])
    assert proc.returncode == 0, proc.stderr
    return set(packages), set(modules)


@pytest.fixture(scope="module")
def small_library(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment pointing the CLI at a one-book library on the fake embedder."""
    from fakes import FakeEmbedder

    folder = tmp_path_factory.mktemp("cold-library")
    config = folder / "config.toml"
    config.write_text('[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
                      'llm_backend = "none"\nchunk_size = 120\nchunk_overlap = 20\n',
                      encoding="utf-8")
    book = write_markdown_book(folder / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
    return {"GRIMOIRE_BEHOLDER_CONFIG": str(config)}


def _command_modules(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in modules if m.endswith("_commands")}


@pytest.mark.slow
def test_help_imports_no_command_and_no_heavy_package() -> None:
    packages, modules = _loaded("--help")
    assert packages == {"typer"}
    assert _command_modules(modules) == set()
    assert "grimoire_beholder.library" not in modules


@pytest.mark.slow
def test_list_loads_its_own_module_and_no_model_or_server(small_library: dict[str, str]
                                                         ) -> None:
    packages, modules = _loaded("list", env=small_library)
    assert not packages & {"numpy", "onnxruntime", "mcp", "starlette", "uvicorn", "jinja2",
                           "pydantic", "typer"}
    assert _command_modules(modules) == set()  # its plain form runs without the parser
    assert not {m for m in modules if m.startswith("grimoire_beholder.search")}
    assert "grimoire_beholder.models.embedded" not in modules


@pytest.mark.slow
def test_query_loads_no_mcp_or_web_adapter(small_library: dict[str, str]) -> None:
    packages, modules = _loaded("query", "how deep are tomatoes planted", env=small_library)
    # its hits go to a pipe here, which rich would write unstyled: rich is not loaded
    assert not packages & {"mcp", "starlette", "uvicorn", "jinja2", "pymupdf", "ollama",
                           "pydantic", "typer", "rich"}
    assert _command_modules(modules) == set()
    assert not {m for m in modules if m.startswith(("grimoire_beholder.mcp_server",
                                                    "grimoire_beholder.web"))}
    # a search cuts no chunk, parses no file and writes nothing: none of ingest's code, nor
    # the results of other commands (views)
    assert not {m for m in modules if m.startswith(("grimoire_beholder.parse",
                                                    "grimoire_beholder.structure.chunks",
                                                    "grimoire_beholder.ingest",
                                                    "grimoire_beholder.views"))}


@pytest.mark.slow
def test_a_parsed_command_loads_its_own_module_only(small_library: dict[str, str]) -> None:
    """``--mode`` is not a plain form: the parser runs it, with library_commands alone."""
    _, modules = _loaded("query", "tomatoes", "--mode", "keyword", env=small_library)
    assert _command_modules(modules) == {"library_commands"}


@pytest.mark.slow
def test_the_script_ends_a_query_with_all_its_output_and_its_exit_code(
        small_library: dict[str, str]) -> None:
    """The script ends a plain ``query`` without the interpreter's teardown: what it wrote
    to a pipe (more than one buffer's worth here) must all arrive, and an error keep its
    exit code."""
    script = [str(Path(sys.executable).with_name("grimoire-beholder"))]
    env = {**os.environ, **small_library}
    proc = subprocess.run([*script, "query", "tomatoes compost", "--expand", "--json",
                           "--top-k", "20"], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["results"]
    assert len(proc.stdout) > 8192 and all(hit["section_text"] for hit in hits)
    proc = subprocess.run([*script, "query", "tomatoes", "--book", "no-such-book"],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("error: no book 'no-such-book'")


@pytest.mark.slow
def test_the_prompt_hook_loads_no_model_runtime_or_server(small_library: dict[str, str]
                                                          ) -> None:
    """Claude Code runs it on every prompt: not even the CLI framework is loaded."""
    packages, _ = _loaded("hook", "prompt", env=small_library,
                          stdin=json.dumps({"prompt": "how deep are tomatoes planted?"}))
    assert not packages & {"onnxruntime", "mcp", "starlette", "uvicorn", "jinja2", "rich",
                           "typer", "pydantic"}


def _module_of(name: str) -> str:
    """The module that registers the top-level command ``name``."""
    every_command()
    callbacks = {info.name or info.callback.__name__: info.callback  # type: ignore[union-attr]
                 for info in app.registered_commands}
    callbacks |= {info.name: info.typer_instance.registered_commands[0].callback
                  for info in app.registered_groups if info.typer_instance}
    return str(callbacks[name].__module__).rsplit(".", 1)[1]


def test_the_table_names_every_command_and_its_module() -> None:
    assert set(COMMANDS) == set(every_command().commands)
    for name, entry in COMMANDS.items():
        assert entry.module == _module_of(name), name
        assert entry.panel in PANELS, name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_says_what_the_command_says(name: str) -> None:
    """Its panel, and its one-line help at every width ``--help`` may be given."""
    real = every_command().commands[name]
    listed = TyperCommand(name, help=COMMANDS[name].summary)
    assert COMMANDS[name].panel == real.rich_help_panel
    for limit in (*range(10, 200), 10_000):
        assert listed.get_short_help_str(limit) == real.get_short_help_str(limit), limit
    assert not real.hidden


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_help_from_the_table_is_the_help_of_the_loaded_commands() -> None:
    """A fresh process lists commands from the table, as it lists them once all are loaded."""
    loading_all = ("import sys\nfrom grimoire_beholder.cli.app import every_command\n"
                   "every_command()\nsys.argv = ['grimoire-beholder', '--help']\n"
                   "from grimoire_beholder.cli.entry import main\nmain()\n")
    for width in ("60", "80", "120"):
        env = {**os.environ, "COLUMNS": width}
        fresh, loaded = (subprocess.run(command, capture_output=True, text=True, timeout=60,
                                        check=True, env=env).stdout
                         for command in ([str(Path(sys.executable).with_name(
                             "grimoire-beholder")), "--help"],
                                         [sys.executable, "-c", loading_all]))
        assert fresh == loaded, width
        assert "grimoire-beholder [OPTIONS] COMMAND" in fresh


def test_a_mistyped_command_is_told_the_near_name() -> None:
    proc = subprocess.run([sys.executable, "-m", "grimoire_beholder", "qurey", "tea"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "Did you mean 'query'?" in proc.stderr
