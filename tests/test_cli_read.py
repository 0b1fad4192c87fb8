"""``outline`` and ``show``: a person reads a book the way the assistant does, with the same
indices, citations and parts as the MCP tools."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from grimoire_beholder.text import PART_CHARS, split_parts
from helpers import write_markdown_book

LONG = " ".join(f"Paragraph {i} tells of tides and lamps." for i in range(40))


def _library(tmp_path: Path) -> list[str]:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        "chunk_size = 120\nchunk_overlap = 20\n")
    body = "\n\n".join([LONG] * 30)  # ~50k characters: three parts
    book = write_markdown_book(tmp_path / "tides.md", "Tides", {
        "Sea": {"Currents": "Currents run along the coast.", "Long Watch": body},
        "Land": {"Dunes": "Dunes move with the wind."}})
    args = ["--library", str(folder)]
    result = CliRunner().invoke(app, ["ingest", str(book), "-q", *args])
    assert result.exit_code == 0, result.output
    return args


def test_outline_lists_the_numbers_show_takes(tmp_path: Path) -> None:
    args = _library(tmp_path)
    result = CliRunner().invoke(app, ["outline", "tides", *args])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Tides (tides, id 1)"
    assert any(line.startswith("  0  Sea") and line.endswith("— 2 sections") for line in lines)
    assert any(line.startswith("  1  Land") and line.endswith("— 1 section") for line in lines)
    assert any(line.startswith("  0.1   Long Watch · ") and "tides.md:" in line
               for line in lines)
    data = json.loads(CliRunner().invoke(app, ["outline", "1", "--json", *args]).stdout)
    assert [s["title"] for s in data["chapters"][0]["sections"]] == ["Currents", "Long Watch"]


def test_show_prints_the_section_in_the_assistants_parts(tmp_path: Path) -> None:
    args = _library(tmp_path)
    short = CliRunner().invoke(app, ["show", "tides", "1", "0", *args])
    assert short.exit_code == 0, short.output
    head, _, text = short.stdout.partition("\n\n")
    assert "Land › Dunes" in head and "(part" not in head
    assert text == "Dunes move with the wind.\n"

    body = "\n\n".join([LONG] * 30)
    parts = split_parts(body)
    assert len(parts) == 3 and all(len(p) <= PART_CHARS for p in parts)
    for number, expected in enumerate(parts, start=1):
        shown = CliRunner().invoke(app, ["show", "tides", "0", "1", "--part", str(number),
                                         "--json", *args])
        data = json.loads(shown.stdout)
        assert (data["part"], data["total_parts"], data["text"]) == (number, 3, expected)
    first = CliRunner().invoke(app, ["show", "tides", "0", "1", *args])
    assert "(part 1 of 3)" in first.stdout.splitlines()[0]
    assert "--part 2" in first.stderr


def test_out_of_range_numbers_say_what_exists(tmp_path: Path) -> None:
    args = _library(tmp_path)
    for argv, expected in ((["show", "tides", "5", "0"], "chapters 0–1, not 5"),
                           (["show", "tides", "0", "7"], "sections 0–1, not 7"),
                           (["show", "tides", "0", "1", "--part", "4"], "parts 1–3, not 4"),
                           (["outline", "nope"], "no book 'nope'")):
        result = CliRunner().invoke(app, [*argv, *args])
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.startswith("error:") and expected in result.stderr


def test_a_chapter_that_is_only_a_heading_says_so(tmp_path: Path) -> None:
    """`# Part One` straight before `# Chapter 1` is a chapter without sections; `show` of
    it said "has sections 0–-1"."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    book = tmp_path / "saga.md"
    book.write_text("# Part One\n\n# Chapter 1\n\nThe ship left the harbour at dawn.\n")
    args = ["--library", str(folder)]
    assert CliRunner().invoke(app, ["ingest", str(book), "-q", *args]).exit_code == 0
    shown = CliRunner().invoke(app, ["show", "saga", "0", "0", *args])
    assert shown.exit_code == 1
    assert "chapter 0 of 'saga' has no sections (it is a heading only)" in shown.output
    assert "–-1" not in shown.output
    assert "harbour" in CliRunner().invoke(app, ["show", "saga", "1", "0", *args]).output
