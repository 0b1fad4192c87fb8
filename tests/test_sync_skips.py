"""Folder ingest and sync with files that hold nothing to index, folders never ingested, and
failure lines that name each file once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app

HEADINGS_ONLY = "# Kayak\n\n## Paddles\n\n## Hulls\n"


@pytest.fixture
def notes(tmp_path: Path) -> tuple[Path, list[str]]:
    """A folder of notes (one good, one headings only, one empty, one binary) and the
    ``--config`` arguments of a fake-model library for it."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nCanoes and paddles are stored upside down.\n")
    (folder / "kayak.md").write_text(HEADINGS_ONLY)
    (folder / "todo.md").write_text("")
    (folder / "broken.md").write_bytes(bytes(range(256)) * 40)
    config = tmp_path / "config.toml"
    config.write_text('[grimoire-beholder]\nembedding_backend = "fake"\nchunk_size = 120\n'
                      "chunk_overlap = 20\n")
    return folder, ["--config", str(config)]


def invoke(*args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(app, [*args, "--json", "--quiet"]
                                if args[0] == "ingest" else [*args, "--json"])
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_files_without_text_are_skipped_and_every_later_sync_agrees(
        notes: tuple[Path, list[str]]) -> None:
    folder, config = notes
    (folder / "broken.md").unlink()
    code, report, _ = invoke("ingest", str(folder), *config)
    assert code == 0
    counts = report["counts"]
    assert (counts["added"], counts["skipped"], counts["failed"]) == (1, 2, 0)
    assert sorted(report["warnings"]) == ["skipped kayak.md: no text to index",
                                          "skipped todo.md: file is empty"]
    for args in (("sync", "--dry-run"), ("sync",), ("sync",)):
        code, again, _ = invoke(*args, *config)
        assert code == 0 and again["counts"]["skipped"] == 2 and again["counts"]["failed"] == 0
        assert again["counts"]["unchanged"] == 1


def test_a_book_whose_file_lost_its_text_is_removed_and_the_dry_run_says_so(
        notes: tuple[Path, list[str]]) -> None:
    folder, config = notes
    invoke("ingest", str(folder), *config)
    (folder / "good.md").write_text("# Good\n\n## Later\n")
    _, preview, _ = invoke("sync", "--dry-run", *config)
    outcome = {f["path"]: f for f in preview["files"]}["good.md"]
    assert outcome["action"] == "skipped" and "would be removed" in outcome["error"]
    _, report, _ = invoke("sync", *config)
    outcome = {f["path"]: f for f in report["files"]}["good.md"]
    assert outcome["action"] == "skipped" and "is removed" in outcome["error"]
    _, books, _ = invoke("list", *config)
    assert books == []


def test_failures_name_the_file_once(notes: tuple[Path, list[str]]) -> None:
    folder, config = notes
    result = CliRunner().invoke(app, ["ingest", str(folder), "--quiet", *config])
    assert result.exit_code == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed:")]
    assert failed == ["failed: broken.md: does not look like text (binary data or control "
                      "characters)"]
    assert "warning: skipped kayak.md: no text to index" in result.stderr
    assert "kayak.md: kayak.md" not in result.stderr


def test_sync_of_a_folder_never_ingested_says_so(
        notes: tuple[Path, list[str]], tmp_path: Path) -> None:
    folder, config = notes
    (folder / "broken.md").unlink()
    invoke("ingest", str(folder), *config)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = CliRunner().invoke(app, ["sync", str(elsewhere), *config])
    assert result.exit_code == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {elsewhere}: nothing in the "
                                                   "library comes from there")
    assert str(folder) in lines[0]  # and where things do come from


PROBLEMS = ("kayak.md: no text to index", "todo.md: file is empty",
            "broken.md: does not look like text")


def test_each_problem_is_told_once_as_the_files_go_by(notes: tuple[Path, list[str]]) -> None:
    """Without ``--quiet`` each file's line names its problem as it is read: the recap at
    the end said it all again (a skipped file twice, a failed one twice). ``--quiet`` has
    no such lines, so there the recap says each once; ``--json`` holds them all."""
    folder, config = notes
    for run in (["ingest", str(folder)], ["sync"], ["sync", "--quiet"]):
        result = CliRunner().invoke(app, [*run, *config])
        assert result.exit_code == 1, result.stderr
        assert [result.stderr.count(p) for p in PROBLEMS] == [1, 1, 1], result.stderr
    code, report, _ = invoke("sync", *config)
    assert code == 1 and report["warnings"] == ["skipped kayak.md: no text to index",
                                                "skipped todo.md: file is empty"]
    assert {f["path"]: f["action"] for f in report["files"]} == {  # type: ignore[attr-defined]
        "broken.md": "failed", "good.md": "unchanged", "kayak.md": "skipped",
        "todo.md": "skipped"}


def test_the_recap_repeats_problems_that_scrolled_off_the_terminal(
        notes: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal of six rows the first problem's line is off the screen by the end of
    the run: the recap names every problem again, so none is lost above the fold."""
    from grimoire_beholder.cli import rendering

    folder, config = notes
    short = rendering._SafeConsole(stderr=True, force_terminal=True, width=100, height=6)
    monkeypatch.setattr(rendering, "err", short)
    result = CliRunner().invoke(app, ["ingest", str(folder), *config])
    assert result.exit_code == 1
    assert [result.stderr.count(p) for p in PROBLEMS] == [2, 2, 2], result.stderr
    assert "warning: skipped kayak.md: no text to index" in result.stderr
