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
