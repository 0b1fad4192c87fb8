"""An empty or blank option value is a one-line usage error, the library unchanged:
``query x --author ''`` searched unfiltered with exit 0 (while ``--book ''`` was an error),
and ``ingest f.txt --force --name ''`` kept the old name and printed ``replaced``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    root = tmp_path_factory.mktemp("blank")
    (root / "lib").mkdir()
    (root / "lib" / "config.toml").write_text(
        '[grimoire-beholder]\nembedding_backend = "fake"\nocr = "off"\n')
    book = root / "tides.txt"
    book.write_text("The moon pulls the sea twice a day, and the tides follow it.\n")
    lib = ["--library", str(root / "lib")]
    assert run_cli("ingest", str(book), "--name", "Tides", "-q", *lib).returncode == 0
    return lib, book


def _books(lib: list[str]) -> list[tuple[str, str]]:
    run = run_cli("list", "--json", *lib)
    return [(b["slug"], b["name"]) for b in json.loads(run.stdout)]


@pytest.mark.parametrize("option", ["--author", "--book", "--group", "--path-prefix",
                                    "--tag", "--collection", "--series", "--until"])
@pytest.mark.parametrize("value", ["", "   "])
def test_a_blank_query_filter_is_a_usage_error(library: tuple[list[str], Path], option: str,
                                               value: str) -> None:
    run = run_cli("query", "moon", option, value, *library[0])
    assert run.returncode == 2, run.stdout
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith(f"error: Invalid value for '{option}': is empty")


@pytest.mark.parametrize("value", ["", "   "])
def test_a_blank_name_leaves_the_book_as_it_was(library: tuple[list[str], Path],
                                                value: str) -> None:
    lib, book = library
    before = _books(lib)
    run = run_cli("ingest", str(book), "--force", "--name", value, *lib)
    assert run.returncode == 2
    assert "replaced" not in run.stdout + run.stderr
    assert run.stderr.startswith("error: Invalid value for '--name': is empty")
    assert _books(lib) == before == [("tides", "Tides")]


@pytest.mark.parametrize("command", [["verify", "moon"], ["lookup", "moon"], ["reindex-fts"]])
def test_a_blank_book_elsewhere_is_a_usage_error(library: tuple[list[str], Path],
                                                 command: list[str]) -> None:
    run = run_cli(*command, "--book", "", *library[0])
    assert run.returncode == 2
    assert run.stderr.startswith("error: Invalid value for '--book': is empty")
