"""From a hit to its text: every `query` hit (text and --json) names the `show` command that
opens its section, `show` with it prints that section, and the book's own section number
(§1.2) is shown where its headings print one — beside the outline positions, never instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grimoire_beholder.citation import own_number
from helpers import run_cli
from mcp_helpers import write_config

NUMBERED = """\
# 1 Basics

## 1.1 Setup

Unpack the lantern crate and set the lens on its pedestal before nightfall.

## 1.2 Lamps and wicks

Trim the wicks every four hours so the flame burns white and steady without smoke.

# 2 Storms

## 2.1 Fog signals

Sound the fog horn every thirty seconds while the far buoy cannot be seen.
"""
PLAIN = """\
# Harbour

## Moorings

Check the mooring ropes of the supply boat at every change of tide.
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("opens")
    write_config(root)
    (root / "keeper.md").write_text(NUMBERED, encoding="utf-8")
    (root / "harbour.md").write_text(PLAIN, encoding="utf-8")
    for name in ("keeper.md", "harbour.md"):
        assert run_cli("ingest", name, "-q", cwd=root).returncode == 0
    return root


def _hit(lib: Path, question: str) -> dict[str, object]:
    found = run_cli("query", question, "-k", "1", "--json", "--mode", "keyword", cwd=lib)
    assert found.returncode == 0, found.stderr
    hit: dict[str, object] = json.loads(found.stdout)["results"][0]
    return hit


def test_a_json_hit_names_the_show_command_and_the_books_own_number(lib: Path) -> None:
    hit = _hit(lib, "trim the wicks flame")
    assert hit["open"] == f"grimoire-beholder show {hit['slug']} 0 1"  # positions from 0
    assert (hit["chapter_index"], hit["section_index"], hit["number"]) == (0, 1, "1.2")
    _, _, slug, chapter, section = str(hit["open"]).split()
    shown = run_cli("show", slug, chapter, section, cwd=lib)
    assert shown.returncode == 0 and "1.2 Lamps and wicks" in shown.stdout.splitlines()[0]
    assert "Trim the wicks every four hours" in shown.stdout


def test_the_text_hit_says_the_command_and_the_number(lib: Path) -> None:
    found = run_cli("query", "trim the wicks flame", "-k", "1", "--mode", "keyword", cwd=lib)
    slug = _hit(lib, "trim the wicks flame")["slug"]
    assert f"read it: grimoire-beholder show {slug} 0 1 (the book's §1.2)" in found.stdout


def test_a_book_without_numbers_gets_the_command_and_no_number(lib: Path) -> None:
    hit = _hit(lib, "mooring ropes supply boat")
    assert hit["number"] is None and hit["open"] == f"grimoire-beholder show {hit['slug']} 0 0"
    found = run_cli("query", "mooring ropes supply boat", "-k", "1", "--mode", "keyword",
                    cwd=lib)
    assert f"read it: grimoire-beholder show {hit['slug']} 0 0\n" in found.stdout
    assert "the book's" not in found.stdout


@pytest.mark.parametrize(("breadcrumb", "number"), [
    ("Guide › 5 Arrays › 5.7.2 Index matrices", "5.7.2"),
    ("Art of War › IV. Tactical Dispositions", "IV"),
    ("Manual › Chapter 5: Networking › Bridges", "Chapter 5"),
    ("Harbour › Moorings", None),
    ("Notes › 2024 was a good year", None),  # a year, not a section
    ("Notes › 12 Angry Men", "12"),
])
def test_own_number_reads_the_deepest_numbered_heading(breadcrumb: str,
                                                       number: str | None) -> None:
    assert own_number(breadcrumb) == number


def test_a_hit_found_with_library_opens_as_printed_from_anywhere(lib: Path,
                                                                 tmp_path: Path) -> None:
    """`query … --library DIR` printed `show SLUG 0 1` without the library: run as written
    (from another folder) it looked in the default library and found nothing."""
    import shlex

    found = run_cli("query", "fog horn", "-k", "1", "--json", "--mode", "keyword",
                    "--library", str(lib), cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    command = shlex.split(json.loads(found.stdout)["results"][0]["open"])
    shown = run_cli(*command[1:], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Sound the fog horn every thirty seconds" in shown.stdout


def test_outline_with_library_names_it_in_its_show_line(lib: Path, tmp_path: Path) -> None:
    shown = run_cli("outline", "keeper", "--library", str(lib), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"SECTION --library {lib.absolute()}" in " ".join(shown.stdout.split())
