"""A Calibre or Zotero database in WAL mode, read while its application runs: its recent
writes live in the ``-wal`` file beside it until a checkpoint, and the private copy
(``store/foreign_copy.py``) must see them — opened ``immutable`` alone it read the database
file and missed them — while the original and its WAL stay byte for byte the same."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from helpers import zotero_file_digests
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data" / "zotero"


def test_a_wal_mode_database_is_read_with_its_recent_writes(tmp_path: Path) -> None:
    folder = tmp_path / "Zotero"
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("*.py", "*.md"))
    with sqlite3.connect(folder / "zotero.sqlite") as db:
        assert db.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    running = sqlite3.connect(folder / "zotero.sqlite")  # the application, still open
    try:
        running.execute("PRAGMA wal_autocheckpoint = 0")
        running.execute("UPDATE itemDataValues SET value = 'Tidal Friction, Revised' "
                        "WHERE value = 'Tidal Friction and the Length of the Day'")
        running.commit()
        assert (folder / "zotero.sqlite-wal").stat().st_size > 0
        before = zotero_file_digests(folder)
        config = str(write_config(tmp_path))
        result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
        assert result.exit_code == 0, result.output
        assert zotero_file_digests(folder) == before  # neither the database nor its WAL touched
    finally:
        running.close()
    listed = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    names = {b["name"] for b in json.loads(listed.stdout)}
    assert names == {"Tidal Friction, Revised", "Composting at home"}
