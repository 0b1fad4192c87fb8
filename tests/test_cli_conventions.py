"""What people expect of a CLI's output: ``list`` readable at 80 columns with every slug on one
line, counts with the right plural, and a low-confidence notice before the hits it
qualifies (CLI and MCP)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from helpers import run_cli, write_markdown_book
from mcp_helpers import connect, text, write_config

UNRELATED = "who won the 1966 world cup final at wembley"


@pytest.fixture
def shelf(tmp_path: Path) -> list[str]:
    """A library with a one-chapter book and a long-named, long-slugged one."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    write_config(folder)
    args = ["--library", str(folder)]
    one = write_markdown_book(tmp_path / "one.md", "One", {"Only": {"Part": "Tides turn."}})
    long_name = ("A Very Thorough Field Guide to the Lighthouses, Fog Signals and Keepers of "
                 "the Northern Coasts")
    long = write_markdown_book(tmp_path / "guide.md", long_name, {
        "Lamps": {"Oil": "Keepers trimmed wicks nightly.", "Lenses": "Fresnel lenses."},
        "Fog": {"Horns": "Horns sounded in fog."}})
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(one), "-q", *args])
    assert first.exit_code == 0, first.output
    assert "1 chapter, 1 section, 1 chunk;" in first.stdout
    second = runner.invoke(app, ["ingest", str(long), "-q", *args])
    assert "2 chapters, 3 sections, 3 chunks;" in second.stdout
    return args


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_list_fits_the_terminal_and_never_breaks_a_slug(
        shelf: list[str], columns: int) -> None:
    result = CliRunner().invoke(app, ["list", *shelf], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= columns and line == line.rstrip() for line in lines), result.stdout
    slug = "a-very-thorough-field-guide-to-the-lighthouses-fog-signals"
    assert any(slug in line for line in lines) and any(" one " in f"{line} " for line in lines)
    assert lines[0].split()[:2] == ["id", "slug"]
    assert ("author" in lines[0]) == (columns >= 200)


def test_cli_low_confidence_notice_comes_first(shelf: list[str]) -> None:
    result = CliRunner().invoke(app, ["query", UNRELATED, "--min-confidence", "1", *shelf])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("The library probably does not cover this question")
    assert result.stdout.startswith("1. ")


def test_min_confidence_outside_0_to_1_is_refused_naming_the_range(tmp_path: Path) -> None:
    """``nan`` was told it "should be less than or equal to 1" (typer's bound check, which
    read it as a number too): every value outside 0 to 1 gets one line naming the option
    and the range, exit code 2, before any library is opened."""
    for value in ("nan", "inf", "-inf", "1.5", "-0.5", "NaN", "ten"):
        result = run_cli("query", "tides", f"--min-confidence={value}",
                         "--library", str(tmp_path / "none"))
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and result.stderr.startswith(
            f"error: Invalid value for '--min-confidence': must be a number from 0 to 1, "
            f"not '{value}'"), result.stderr
    assert not (tmp_path / "none").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_low_confidence_notice_comes_before_the_hits(
        tmp_path: Path, anyio_backend: str) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    config = write_config(folder, "min_confidence = 1.0\n")
    book = write_markdown_book(tmp_path / "one.md", "One", {"Only": {"Part": "Tides turn."}})
    assert CliRunner().invoke(app, ["ingest", str(book), "-q", "-c", str(config)]).exit_code == 0
    async with connect(config) as client:
        result = await client.call_tool("search_book", {"question": UNRELATED})
    lines = text(result).splitlines()
    assert lines[0].startswith("Low confidence") and lines[1].startswith("1 result for")


@pytest.mark.parametrize(("stdout", "args"), [
    ("closed", ["list"]), ("closed", ["query", "tides", "--json"]), ("closed", ["status"]),
    ("/dev/full", ["query", "tides"])])
def test_results_that_cannot_be_written_are_an_error(
        shelf: list[str], args: list[str], stdout: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``query … >&-`` (Python then has no stdout) exited 0 with its results gone, and a
    full disk ended in a traceback: one line on stderr (JSON under ``--json``), exit 1."""
    if stdout != "closed" and not Path(stdout).exists():
        pytest.skip("no /dev/full here")
    from grimoire_beholder.cli.entry import main

    sink = None if stdout == "closed" else open(stdout, "w")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", sink)
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # main wraps both; put them back after
    monkeypatch.setattr(sys, "argv", ["grimoire-beholder", *args, *shelf])
    with pytest.raises(SystemExit) as exited:
        main()
    why = "standard output is closed" if sink is None else "No space left on device"
    line = f"the results were not written: {why}"
    if sink is not None:
        sink.close()
    assert exited.value.code == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        json.dumps({"error": line, "exit_code": 1}) if "--json" in args else f"error: {line}")
