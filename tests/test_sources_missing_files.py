"""A Calibre book with several formats whose preferred one's file is not on disk (removed
by hand, or not downloaded yet): the next format on disk is read, rather than the book
failing on every sync."""

from __future__ import annotations

import json
import shutil
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

    shutil.rmtree(book)  # no format on disk at all: one failure naming the preferred file
    result = CliRunner().invoke(app, ["sync", "--config", config])
    assert result.exit_code == 1
    assert "Orchard Pruning [3]: cannot read" in result.output
    assert "Orchard Pruning - Ivy Stone.epub" in result.output
