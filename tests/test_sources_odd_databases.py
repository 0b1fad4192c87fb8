"""Calibre and Zotero databases as users really have them, not as the fixtures were built:
an author with a comma in the name (Calibre stores it as ``|``), a database an older Zotero
made (no annotations table, no collection trash), and a database that is SQLite but not the
application's — which a sync of several libraries must name."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data"


def _copy(tmp_path: Path, kind: str, name: str) -> Path:
    folder = tmp_path / name
    source = DATA / kind / ("before" if kind == "calibre" else "")
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("*.py", "*.md"))
    return folder


def _books(config: str) -> dict[str, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    assert result.exit_code == 0, result.output
    return {b["name"]: b for b in json.loads(result.stdout)}


def test_a_calibre_author_with_a_comma_keeps_it(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "calibre", "Calibre Library")
    with sqlite3.connect(folder / "metadata.db") as db:  # as calibredb stores "King, Jr."
        db.execute("UPDATE authors SET name = 'Tom Wick| Jr.' WHERE name = 'Tom Wick'")
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    book = _books(config)["Signal Lamps at Night"]
    assert book["author"] == "Mara Quill & Tom Wick, Jr."
    assert book["metadata"]["authors"] == ["Mara Quill", "Tom Wick, Jr."]


def test_an_older_zoteros_database_is_read(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "zotero", "Zotero")
    with sqlite3.connect(folder / "zotero.sqlite") as db:  # before annotations, collection trash
        db.executescript("DROP TABLE itemAnnotations; DROP TABLE deletedCollections;")
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    paper = _books(config)["Tidal Friction and the Length of the Day"]
    assert paper["collections"] == ["Ocean Physics"]


def test_a_sync_names_the_library_whose_database_is_not_its_applications(
        tmp_path: Path) -> None:
    calibre = _copy(tmp_path, "calibre", "Calibre Library")
    zotero = _copy(tmp_path, "zotero", "Zotero")
    config = str(write_config(tmp_path))
    for folder in (calibre, zotero):
        result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
        assert result.exit_code == 0, result.output
    for db_file in (calibre / "metadata.db", zotero / "zotero.sqlite"):
        db_file.unlink()  # replaced by some other program's SQLite database
        with sqlite3.connect(db_file) as db:
            db.execute("CREATE TABLE notes (text TEXT)")
    before = _books(config)
    result = CliRunner().invoke(app, ["sync", "--config", config])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())  # however the lines were wrapped
    assert f"{calibre / 'metadata.db'}: not a Calibre library database" in said, said
    assert f"{zotero / 'zotero.sqlite'}: not a Zotero database" in said, said
    assert _books(config) == before  # their books are kept

    empty = tmp_path / "Empty"
    empty.mkdir()
    (empty / "metadata.db").touch()
    result = CliRunner().invoke(app, ["ingest", str(empty), "--config", config])
    assert result.exit_code == 1
    assert " ".join(result.stderr.split()) == (
        f"error: {empty / 'metadata.db'}: not a Calibre library database "
        "(no such table: books)")
