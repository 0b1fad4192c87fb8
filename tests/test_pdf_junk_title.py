"""A PDF whose metadata title is a writing program's placeholder ("Microsoft Word -
Document1.docx", "untitled", "Document1", a bare file name, nothing) is named after its file,
as a PDF without a title is: two such PDFs are two books, not a slug clash. And a clash of
real titles names --name first, saying that --force deletes the other book. Real PDFs
(PyMuPDF) ingested through the CLI into a real SQLite library."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from typer.testing import CliRunner

from books_gen import html_pdf
from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config


def _pdf(path: Path, title: str, text: str) -> Path:
    html_pdf(path, [f"<h1>Notes</h1><p>{text}</p>"], labels=False)
    doc = pymupdf.open(path)
    doc.set_metadata({"title": title, "author": "Clerk"})
    doc.saveIncr()
    doc.close()
    return path


def _ingest(config: Path, path: Path) -> object:
    return CliRunner().invoke(app, ["ingest", str(path), "--config", str(config)])


def _books(config: Path) -> list[tuple[str, str]]:
    result = CliRunner().invoke(app, ["list", "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = data["books"] if isinstance(data, dict) else data
    return sorted((row["slug"], row["name"]) for row in rows)


@pytest.mark.parametrize("junk", ["Microsoft Word - Document1.docx", "untitled", "Document1",
                                  "report.docx", "foo.pdf", ""])
def test_two_pdfs_with_one_junk_title_are_two_books_named_after_their_files(
        tmp_path: Path, junk: str) -> None:
    config = write_config(tmp_path)
    first = _pdf(tmp_path / "harbour-survey.pdf", junk, "The tide gauge reads low at dawn.")
    second = _pdf(tmp_path / "Budget 2026.pdf", junk, "Lamp oil costs rose by a third.")
    for path in (first, second):
        result = _ingest(config, path)
        assert result.exit_code == 0, result.output
    assert _books(config) == [("budget-2026", "Budget 2026"),
                              ("harbour-survey", "harbour-survey")]


def test_a_real_title_clash_offers_name_first_and_says_force_deletes(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    first = _pdf(tmp_path / "a.pdf", "Field Notes", "The tide gauge reads low at dawn.")
    second = _pdf(tmp_path / "b.pdf", "Field Notes", "Lamp oil costs rose by a third.")
    assert _ingest(config, first).exit_code == 0
    refused = _ingest(config, second)
    assert refused.exit_code != 0
    message = " ".join(refused.output.split())
    assert "slug 'field-notes' is already taken" in message
    assert message.index("--name") < message.index("--force")
    assert "--force to replace that book (it is deleted)" in message
    assert _books(config) == [("field-notes", "Field Notes")]


def test_a_writing_programs_prefix_is_dropped_from_a_real_title(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    path = _pdf(tmp_path / "w13.pdf", "Microsoft Word - Annual Report 2020",
                "The tide gauge reads low at dawn.")
    result = _ingest(config, path)
    assert result.exit_code == 0, result.output
    assert _books(config) == [("annual-report-2020", "Annual Report 2020")]
