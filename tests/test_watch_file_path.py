"""``sync --watch FILE``: ``sync`` takes a book's file as well as a folder, and so did
``--watch``, which then waited for good: a watch is set on folders, so a file was taken for
a folder not there yet and looked for every half second, and its edits were never synced.
It is now refused at once, in one line naming the file and what to give instead."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from mcp_helpers import cli_command
from watch_helpers import CLI_CONFIG


@pytest.mark.slow  # two real CLI processes
@pytest.mark.timeout(180)
def test_watching_a_file_is_refused_not_waited_on_for_good(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    note = notes / "tides.md"
    note.write_text("# Tides\n\nA note about spring tides.\n", encoding="utf-8")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(notes)
    config = tmp_path / "config.toml"
    config.write_text(CLI_CONFIG, encoding="utf-8")
    for extra in ((), ("--json",)):
        try:
            run = subprocess.run([*cli_command(), "sync", "--watch", str(note), *extra,
                                  "-c", str(config)], capture_output=True, text=True,
                                 encoding="utf-8", timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("sync --watch FILE waited for the file as for a folder")
        assert run.returncode == 1 and run.stdout == ""
        error = run.stderr.splitlines()[-1]
        if extra:
            error = json.loads(error)["error"]
        assert str(note) in error and "is a file" in error and "folder" in error, error
