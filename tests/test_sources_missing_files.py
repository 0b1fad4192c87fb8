"""A Calibre book with several formats whose preferred one's file is not on disk (removed
by hand, or not downloaded yet): the next format on disk is read, rather than the book
failing on every sync."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data" / "calibre"


def test_a_missing_preferred_format_gives_way_to_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA / "before", folder)
    book = folder / "Ivy Stone" / "Orchard Pruning (3)"
    (book / "Orchard Pruning - Ivy Stone.epub").unlink()  # its PDF is still there
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    assert "failed" not in result.output
    listed = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    orchard = next(b for b in json.loads(listed.stdout) if b["name"] == "Orchard Pruning")
    assert orchard["source_type"] == "pdf"
    assert orchard["metadata"]["formats"] == ["EPUB", "PDF"]  # as Calibre lists them

    shutil.rmtree(book)  # no format on disk at all: skipped, not a failure; the book stays
    result = CliRunner().invoke(app, ["sync", "--config", config])
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if "Orchard Pruning [3]" in line]
    assert len(skipped) == 1, result.stderr  # reported once
    assert skipped[0].startswith("skipped") and "Calibre lists EPUB, PDF" in skipped[0]
    assert "Orchard Pruning - Ivy Stone.epub is missing" in skipped[0]
    assert "its book is kept" in skipped[0]
    assert "failed" not in result.stderr
    listed = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    assert "Orchard Pruning" in {b["name"] for b in json.loads(listed.stdout)}
    report = CliRunner().invoke(app, ["sync", "--config", config, "--json"])
    assert report.exit_code == 0
    data = json.loads(report.stdout)
    assert data["counts"]["failed"] == 0 and data["counts"]["skipped"] == 2  # + the MOBI
    orchard = next(f for f in data["files"] if f["path"] == "Orchard Pruning [3]")
    assert orchard["action"] == "skipped" and "is missing" in orchard["error"]


def test_a_calibre_entry_with_metadata_only_is_skipped_not_failed(tmp_path: Path) -> None:
    """A Calibre book with no file at all (added with metadata only, or every format
    removed): the others sync, it is named once as skipped, and the exit code is 0."""
    folder = tmp_path / "Calibre Library"
    shutil.copytree(DATA / "before", folder)
    with sqlite3.connect(folder / "metadata.db") as conn:  # as remove_format leaves it
        conn.execute("DELETE FROM data WHERE book = 4")
    shutil.rmtree(folder / "Anonymous" / "The Old Almanac (4)")
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["sync", "--config", config])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if "The Old Almanac" in line]
    assert lines == ["skipped   The Old Almanac [4]: no file: an entry with metadata only"]
    assert "skipped 1" in result.stdout
    dry = CliRunner().invoke(app, ["sync", "--dry-run", "--config", config])
    assert dry.exit_code == 0 and [line for line in dry.stderr.splitlines()
                                   if "The Old Almanac" in line] == lines  # named there too
    report = json.loads(CliRunner().invoke(
        app, ["sync", "--config", config, "--json"]).stdout)
    assert report["counts"]["skipped"] == 1 and report["counts"]["unchanged"] == 3
