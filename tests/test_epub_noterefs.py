"""EPUB note references: the marker of a note ("409", "*") leaves no text, so the word
before it stays a word of its own for keyword search and a quotation of the prose verifies
as exact. Real EPUBs (ebooklib), ingested and read through the CLI into a real SQLite
library. The notes themselves stay in the book, where they are."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from books_gen import cli_library
from grimoire_beholder.cli.entry import app
from helpers import make_epub

CHAPTER = (
    "<h1>Variation of Tactics"
    '<a href="notes.xhtml#note-400" id="noteref-400" epub:type="noteref">400</a></h1>'
    "<p>There are roads which must not be followed, armies which must not be attacked, "
    'towns<a href="notes.xhtml#note-409" id="noteref-409" epub:type="noteref">409</a> '
    "which must not be besieged, positions which must not be contested.</p>"
    "<p>These are the five dangers, a source of misfortune."
    '<a href="notes.xhtml#note-417" role="doc-noteref">417</a> Reduce the hostile '
    "chieftains by inflicting damage<sup><a href=\"notes.xhtml#note-418\">418</a></sup> "
    'and keep them busy<a href="notes.xhtml#note-419"><sup>*</sup></a> with labour.</p>'
)
NOTES = (
    "<h1>Endnotes</h1><ol>"
    '<li id="note-400"><p>The nine variations are never listed.</p></li>'
    '<li id="note-409"><p>Cities too strong to be taken quickly.</p></li>'
    '<li id="note-417"><p>The general must beware of recklessness.</p></li>'
    '<li id="note-418"><p>Lure away their best counsellors.</p></li>'
    '<li id="note-419"><p>Give them constant employment.</p></li></ol>'
)


def _cli(*args: str, config: Path) -> str:
    result = CliRunner().invoke(app, [*args, "--config", str(config)])
    assert result.exit_code == 0, result.output
    return result.stdout


def _library(tmp_path: Path) -> Path:
    book = make_epub(tmp_path / "war.epub", {"ch8.xhtml": CHAPTER, "notes.xhtml": NOTES},
                     [("Variation of Tactics", "ch8.xhtml"), ("Endnotes", "notes.xhtml")],
                     title="The Art of Tactics")
    return cli_library(tmp_path, book)


def test_note_markers_leave_no_text_and_words_stay_words(tmp_path: Path) -> None:
    config = _library(tmp_path)
    shown = " ".join(_cli("show", "the-art-of-tactics", "0", "0", config=config).split())
    assert "Variation of Tactics" in shown and "Tactics400" not in shown
    assert "attacked, towns which must not be besieged" in shown
    assert "misfortune. Reduce the hostile chieftains by inflicting damage and keep them " \
           "busy with labour." in shown
    for glued in ("409", "417", "418", "busy*"):
        assert glued not in shown
    notes = " ".join(_cli("show", "the-art-of-tactics", "1", "0", config=config).split())
    assert "Cities too strong to be taken quickly." in notes


def test_keyword_search_finds_the_word_before_a_note(tmp_path: Path) -> None:
    config = _library(tmp_path)
    for word in ("towns", "misfortune", "damage"):
        hits = json.loads(_cli("query", word, "--mode", "keyword", "--json", config=config))
        assert [hit["chapter"] for hit in hits["results"]] == ["Variation of Tactics"], word


def test_a_quotation_across_a_note_verifies_exactly(tmp_path: Path) -> None:
    config = _library(tmp_path)
    for quote in ("towns which must not be besieged",
                  "a source of misfortune. Reduce the hostile chieftains"):
        data = json.loads(_cli("verify", quote, "--json", config=config))
        assert data["verdict"] == "exact", data
