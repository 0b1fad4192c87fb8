"""Under ``--json`` stderr holds no plain-text line for a file: ``ingest DIR --json`` and
``sync --json`` wrote ``skipped   empty.md: file is empty`` and ``failed    fake.pdf: not a
readable PDF (…)`` there, though an error line under ``--json`` is a JSON object. Each file's
action and error are in the JSON on stdout."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli


def _library(tmp_path: Path) -> list[str]:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        'ocr = "off"\n')
    return ["--library", str(folder)]


def test_folder_ingest_and_sync_json_leave_no_plain_file_lines(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "empty.md").write_text("")
    (shelf / "fake.pdf").write_text("not a pdf at all\n")
    (shelf / "tides.md").write_text("# Tides\n\nThe moon pulls the sea twice a day.\n")
    lib = _library(tmp_path)
    for args in (["ingest", str(shelf)], ["sync"]):
        if args == ["sync"]:
            (shelf / "tides.md").write_text("# Tides\n\nThe moon and the sun pull the sea.\n")
        run = run_cli(*args, "--json", *lib)
        assert run.returncode == 1, run.stderr
        for line in run.stderr.splitlines():
            assert isinstance(json.loads(line), dict), line
        files = {f["path"]: f for f in json.loads(run.stdout)["files"]}
        assert files["empty.md"]["action"] == "skipped"
        assert files["empty.md"]["error"] == "file is empty"
        assert files["fake.pdf"]["action"] == "failed"
        assert "not a readable PDF" in files["fake.pdf"]["error"]
    plain = run_cli("sync", *lib)  # without --json the lines are still there
    assert "fake.pdf: not a readable PDF" in plain.stderr
