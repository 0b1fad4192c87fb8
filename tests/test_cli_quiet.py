"""``--quiet`` leaves out progress, not warnings: ``ingest -q`` of a PDF with pages that gave
no text, or ``--force -q`` replacing another file's book, said nothing at all."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf

from helpers import run_cli


def _library(tmp_path: Path) -> list[str]:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        'ocr = "off"\n')
    return ["--library", str(folder)]


def test_quiet_ingest_still_warns_of_pages_without_text(tmp_path: Path) -> None:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Narwhals keep their tusks all year round.")
    document.new_page()  # blank
    document.save(tmp_path / "narwhals.pdf")
    run = run_cli("ingest", str(tmp_path / "narwhals.pdf"), "-q", *_library(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("warning: ")
    assert "narwhals.pdf: 1 blank page(s) gave no text: page 2" in run.stderr
    assert "narwhals: added" in run.stdout


def test_quiet_force_still_names_the_book_it_replaces(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    for name in ("first", "second"):
        (tmp_path / f"{name}.md").write_text(f"# Tides\n\nThe {name} file about tides.\n")
    assert run_cli("ingest", str(tmp_path / "first.md"), "-q", *lib).returncode == 0
    run = run_cli("ingest", str(tmp_path / "second.md"), "--force", "-q", *lib)
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("warning: ") and "first.md" in run.stderr


def test_a_folders_page_warnings_are_in_its_report(tmp_path: Path) -> None:
    """A folder's file with pages that gave no text: the warning went to stderr as the file
    was read, so `--json` (and the MCP sync tool) had `"warnings": []`, and `-q` nothing."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Narwhals keep their tusks all year round.")
    document.new_page()  # blank
    document.save(folder / "narwhals.pdf")
    lib = _library(tmp_path)
    run = run_cli("ingest", str(folder), "--json", *lib)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["warnings"] == [
        "narwhals.pdf: 1 blank page(s) gave no text: page 2"]
    document.new_page()  # the file changes: sync reads it again
    document.save(folder / "narwhals.pdf")
    run = run_cli("sync", "-q", *lib)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        "warning: narwhals.pdf: 2 blank page(s) gave no text: pages 2–3"], run.stderr
