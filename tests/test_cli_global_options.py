"""``--library`` and ``--config`` before the command name mean what they mean after it, for
every command (a nested one like ``token list`` too); given both before and after, a usage
error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import fake_garden_env, run_cli

NO_LIBRARY_FROM_ENV: dict[str, str | None] = {"GRIMOIRE_BEHOLDER_CONFIG": None,
                                              "GRIMOIRE_BEHOLDER_LIBRARY": None}


@pytest.fixture
def garden(garden_template: Path, tmp_path: Path) -> Path:
    """A copy of the garden library (fake models); its folder."""
    fake_garden_env(garden_template, tmp_path / "library")
    return tmp_path / "library"


def _same(before: list[str], after: list[str], cwd: Path) -> str:
    """Run both ways from a folder with no library; the output, once shown to be equal."""
    first = run_cli(*before, env=NO_LIBRARY_FROM_ENV, cwd=cwd)
    second = run_cli(*after, env=NO_LIBRARY_FROM_ENV, cwd=cwd)
    assert first.returncode == 0, first.stderr
    strip = ("timings_ms",)
    if first.stdout.startswith("{"):
        one, two = json.loads(first.stdout), json.loads(second.stdout)
        for key in strip:
            one.pop(key, None)
            two.pop(key, None)
        assert one == two
    else:
        assert first == second
    return first.stdout


@pytest.mark.parametrize("command", [["query", "compost heap", "--json"], ["list"],
                                     ["status", "--json"], ["token", "list"],
                                     ["outline", "the-garden-book"]], ids=" ".join)
@pytest.mark.parametrize("option", ["--library", "--config", "-c"])
def test_an_option_before_the_command_means_what_it_means_after(
        garden: Path, tmp_path: Path, command: list[str], option: str) -> None:
    value = str(garden if option == "--library" else garden / "config.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _same([option, value, *command], [*command, option, value], cwd=elsewhere)
    if command[0] == "query":
        assert json.loads(out)["results"]


def test_a_missing_library_named_before_the_command_is_the_same_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "none")
    first = run_cli("--library", missing, "list", env=NO_LIBRARY_FROM_ENV, cwd=tmp_path)
    second = run_cli("list", "--library", missing, env=NO_LIBRARY_FROM_ENV, cwd=tmp_path)
    assert first == second and first.returncode == 1
    assert first.stderr.startswith(f"error: no library database at {missing}/book.db")
    assert not Path(missing).exists()


def test_an_option_given_before_and_after_the_command_is_a_usage_error(
        garden: Path, tmp_path: Path) -> None:
    run = run_cli("--library", str(garden), "list", "--library", str(tmp_path / "other"),
                  env=NO_LIBRARY_FROM_ENV, cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == ("error: Invalid value for '--library': given before the command "
                          "too; give it once (see 'grimoire-beholder list --help')\n")
    both = run_cli("--library", str(garden), "list", "--config", str(garden / "config.toml"),
                   env=NO_LIBRARY_FROM_ENV, cwd=tmp_path)
    assert both.returncode != 0 and both.stderr.count("\n") == 1
    assert "--config or --library, not both" in both.stderr
