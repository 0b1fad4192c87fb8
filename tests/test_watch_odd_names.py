"""``sync --watch`` against names a person does not choose: a file whose name is not UTF-8
(an old zip's Latin-1 names) and two watched folders that each hold a failing file of the
same relative name.

Before: the watcher (watchfiles) raised on the undecodable name as soon as such a file was
created, and the watch ended in a traceback; the file's "skipped" warning was printed again
with every later report, as was a gone folder's "folder not found"; and the second folder's
failing file, written like the first's, was taken for it: under --quiet it was never named,
without it its line came twice. Until session 20 both were named alike, ``broken.pdf``, in
their lines and in the one at Ctrl-C: a file that another watched folder also has is named
with its folder, ``work/broken.pdf``."""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import CLI_CONFIG, CliWatch, cli_watching

pytestmark = [pytest.mark.slow,  # real subprocesses and real waiting
              pytest.mark.timeout(180)]


def _library(tmp_path: Path, *folders: str) -> Path:
    """A library of ``folders`` under ``tmp_path``, each holding one note; its config."""
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        for name in folders:
            folder = tmp_path / name
            folder.mkdir()
            (folder / f"{name}.md").write_text(f"# {name}\n\nA note about {name} tides.\n",
                                               encoding="utf-8")
            lib.ingest_folder(folder)
    config = tmp_path / "config.toml"
    config.write_text(CLI_CONFIG, encoding="utf-8")
    return config


def _write(path: bytes, data: bytes) -> None:
    """Write ``data`` to the file named by the bytes ``path`` (not UTF-8: no str for it)."""
    with open(path, "wb") as file:
        file.write(data)


def _said(watch: CliWatch, text: str) -> int:
    """How many times stderr said ``text`` (lines joined: a long warning wraps)."""
    return " ".join(line.strip() for line in watch.err).count(text)


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux file systems take such names")
def test_a_file_named_in_latin_1_is_skipped_once_and_the_watch_goes_on(tmp_path: Path) -> None:
    config = _library(tmp_path, "notes")
    notes = tmp_path / "notes"
    with cli_watching(config) as watch:
        reports = len(watch.out)
        _write(bytes(notes) + b"/caf\xe9.md", b"# Caf\xe9\n\nA note.\n")
        assert watch.until(lambda: len(watch.out) > reports), watch.err  # reported, alive
        assert watch.proc.poll() is None and not any("Traceback" in line for line in watch.err)
        assert _said(watch, "caf\\xe9.md: the file name is not valid utf-8") == 1, watch.err

        watch.edit(notes / "notes.md", "Neap tides")  # the watch still follows the folder
        watch.edit(notes / "notes.md", "Spring tides")
        assert any(line.startswith("changed   notes.md") for line in watch.err), watch.err
        assert _said(watch, "caf\\xe9.md: the file name is not valid utf-8") == 1, watch.err

        gone = len(watch.out)  # changing it again kills no watcher either
        _write(bytes(notes) + b"/caf\xe9.md", b"# Caf\xe9\n\nTwo notes.\n")
        watch.edit(notes / "notes.md", "Slack water")
        assert len(watch.out) > gone and watch.proc.poll() is None, watch.err


def test_two_folders_failing_files_of_one_name_are_each_named_once(tmp_path: Path) -> None:
    config = _library(tmp_path, "home", "work")
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "broken.pdf").write_bytes(b"%PDF-1.4 torn off after the header")
    with cli_watching(config, "--quiet") as watch:
        assert _said(watch, "failed: broken.pdf") == 1, watch.err  # the first sync's
        (work / "broken.pdf").write_bytes(b"%PDF-1.4 torn off after the header")
        assert watch.until(lambda: "failed 2" in watch.out[-1]), (watch.out, watch.err)
        assert _said(watch, "failed: work/broken.pdf") == 1, watch.err  # work's, named too

        shutil.rmtree(work)  # a watched folder gone: said once, not with every report
        assert watch.until(lambda: _said(watch, "folder not found") == 1), watch.err
        watch.edit(home / "home.md", "Neap tides")
        watch.edit(home / "home.md", "Spring tides")
        assert _said(watch, "folder not found") == 1, watch.err
        assert _said(watch, "failed: broken.pdf") == 1, watch.err
        assert _said(watch, "failed: work/broken.pdf") == 1, watch.err


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event on Windows")
def test_two_folders_failing_files_of_one_name_are_named_with_their_folder(tmp_path: Path
                                                                          ) -> None:
    config = _library(tmp_path, "home", "work")
    for name in ("home", "work"):
        (tmp_path / name / "broken.pdf").write_bytes(b"%PDF-1.4 torn off after the header")
    with cli_watching(config) as watch:
        assert "failed 2" in watch.out[-1], (watch.out, watch.err)
        watch.edit(tmp_path / "home" / "home.md", "Neap tides")  # the watcher listens
        watch.proc.send_signal(signal.SIGINT)
        assert watch.proc.wait(timeout=30) == 1
    named = sorted(line.split(":")[0] for line in watch.err if line.startswith("failed"))
    assert named == ["failed    home/broken.pdf", "failed    work/broken.pdf"], watch.err
    assert watch.err[-1] == ("stopped; 2 files still failing: home/broken.pdf, "
                             "work/broken.pdf"), watch.err
