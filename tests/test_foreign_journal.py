"""A Calibre or Zotero database beside a rollback journal: a write under way, or one that a
crash or a kill cut short (its journal stays until the application opens the database
again). The database file may already hold pages of the unfinished write; the private copy
(``store/foreign_copy.py``) takes the journal along and rolls it back, so it reads the
database as last committed — where every ingest and sync refused ('was being written all
the while it was read') for as long as the journal stayed — and the original and its
journal stay byte for byte the same."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from helpers import zotero_file_digests
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data" / "zotero"
TITLE = "Tidal Friction and the Length of the Day"
# The application: a long write with a one-page cache (so its pages spill into the
# database file), killed before it commits or rolls back.
CUT_SHORT = f"""
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA cache_size = 1")
db.execute("BEGIN")
db.execute("UPDATE itemDataValues SET value = 'Half-written' WHERE value = '{TITLE}'")
db.execute("CREATE TABLE filler (x)")
db.executemany("INSERT INTO filler VALUES (?)", [("x" * 3000,)] * 200)
os._exit(0)
"""


def test_a_write_cut_short_is_read_as_last_committed(tmp_path: Path) -> None:
    folder = tmp_path / "Zotero"
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("*.py", "*.md"))
    committed = zotero_file_digests(folder)["zotero.sqlite"]
    subprocess.run([sys.executable, "-c", CUT_SHORT, str(folder / "zotero.sqlite")],
                   check=True)
    left = zotero_file_digests(folder)
    assert "zotero.sqlite-journal" in left  # the write's journal stays
    assert left["zotero.sqlite"] != committed  # and some of its pages are in the file
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    assert zotero_file_digests(folder) == left  # neither the database nor its journal touched
    listed = CliRunner().invoke(app, ["list", "--config", config, "--json"])
    assert {b["name"] for b in json.loads(listed.stdout)} == {TITLE, "Composting at home"}
