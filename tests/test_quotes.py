"""Checked quotations on generated books: re-typed quotations are found at the right page or
line, whatever happened to their typography; invented and wrong-book ones are not."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from books_gen import cli_library, keeper_pdf
from fakes import FakeEmbedder
from grimoire_beholder.checks.textmatch import align, fold, quote_pieces, skeleton
from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from helpers import GARDEN_CHAPTERS, fake_config, make_epub, write_markdown_book


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """A PDF (with printed page labels), an EPUB and a Markdown book in one library."""
    root = tmp_path_factory.mktemp("shelf")
    lib = Library.open(config=fake_config(root), embedder=FakeEmbedder())
    lib.ingest(keeper_pdf(root / "keeper.pdf"))
    lib.ingest(write_markdown_book(root / "garden.md", "The Garden Book", GARDEN_CHAPTERS))
    lib.ingest(make_epub(root / "tide.epub", {
        "one.xhtml": "<h1>Low Water</h1><p>At low water the causeway opens and the island "
                     "is joined to the mainland for two hours.</p>",
        "two.xhtml": "<h1>High Water</h1><p>At high water the causeway drowns; a traveller "
                     "caught halfway must climb the refuge box and wait for the ebb.</p>"},
        [("Low Water", "one.xhtml"), ("High Water", "two.xhtml")], title="Tide Tables"))
    yield lib
    lib.close()


# (quotation as a person re-typed it, what was altered, page it is on)
PDF_QUOTES = [
    ("Polish the great lens every\n  morning with a soft   cloth", "whitespace", 2),
    ("Filling the reservoir is an assignment given to the youngest keeper", "hyphenation", 2),
    ("sound the horn twice a min-\nute until the lookout can see the rocks again",
     "hyphenation", 3),
    ('The keeper said "never let the flame go out" - and he meant it -- for a ship\'s safety',
     "quotes and dashes", 2),
    ("a ship’s safety hangs on the ﬁrst hour of dusk", "ligature", 2),
    ("After the storm, walk the gallery and look for cracked panes and the nests of gulls "
     "blown from the cliff.", "omission", 4),
    ("In a storm the tower sways a little … the old stones have stood for two hundred years.",
     "ellipsis", 4),
    ("KEEP THE LOGBOOK OPEN ON THE DESK", "case", 3),
]


@pytest.mark.parametrize(("quote", "kind", "page"), PDF_QUOTES, ids=[q[1] for q in PDF_QUOTES])
def test_altered_quotations_are_found_on_their_page(shelf: Library, quote: str, kind: str,
                                                    page: int) -> None:
    result = shelf.verify_quote(quote)
    assert result.found, (kind, result.to_dict())
    passage = result.passage
    assert passage is not None and passage.slug == "keeper"
    assert passage.page_start == page and passage.page_end == page
    assert passage.citation.printed == str(page - 1)  # the first page is printed "i"
    # the offsets point at the book's own words in the section
    section = shelf.section("keeper", passage.chapter_index, passage.section_index).text
    assert section[passage.char_start:passage.char_end] == passage.text
    assert result.similarity >= 0.85


def test_typography_is_not_a_difference_but_a_left_out_phrase_is(shelf: Library) -> None:
    curly = shelf.verify_quote('The keeper said "never let the flame go out"')
    assert curly.verdict == "exact" and curly.differences == []
    assert "“never let the flame go out”" in curly.passage.text  # type: ignore[union-attr]
    omitted = shelf.verify_quote(PDF_QUOTES[5][0])
    assert omitted.verdict == "close"
    assert omitted.differences == ["the quotation leaves out “loose rails”"]
    assert "loose rails" in omitted.passage.text  # type: ignore[union-attr]


def test_an_ellipsis_stands_for_the_words_it_leaves_out(shelf: Library) -> None:
    result = shelf.verify_quote(PDF_QUOTES[6][0])
    assert result.verdict == "exact" and result.similarity == 1.0
    assert "and the keeper must not panic" in result.passage.text  # type: ignore[union-attr]


def test_markdown_quotation_is_found_at_its_lines(shelf: Library) -> None:
    result = shelf.verify_quote("Aphids cluster on new shoots.  Ladybirds and a jet of water")
    assert result.found and result.passage is not None
    lines = Path(result.passage.source_path).read_text(encoding="utf-8").splitlines()
    start, end = result.passage.line_start, result.passage.line_end
    assert start is not None and end is not None
    assert "Aphids cluster on new shoots" in "\n".join(lines[start - 1:end])
    assert end - start <= 1


def test_epub_quotation_is_found_in_its_chapter(shelf: Library) -> None:
    result = shelf.verify_quote("a traveller caught half-way must climb the refuge box")
    assert result.found and result.passage is not None
    assert result.passage.slug == "tide-tables" and result.passage.chapter == "High Water"
    assert result.passage.page_start is not None


NOT_THERE = [
    "The keeper must always paint the tower red before the spring equinox arrives.",
    "When the fog rolls in from the west, ring the bell three times an hour.",
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife.",
]


@pytest.mark.parametrize("quote", NOT_THERE)
def test_invented_quotations_are_not_found_and_the_closest_passage_is_given(
        shelf: Library, quote: str) -> None:
    result = shelf.verify_quote(quote)
    assert not result.found and result.verdict == "not_found"
    assert result.similarity < 0.85
    if result.passage is not None:
        assert result.passage.text and result.differences


def test_a_quotation_from_another_book_is_not_found_in_the_book_named(shelf: Library) -> None:
    quote = "Slugs feed at night on seedlings; copper tape and beer traps protect lettuce beds."
    assert shelf.verify_quote(quote).found
    result = shelf.verify_quote(quote, book="keeper")
    assert not result.found
    assert result.note is not None and "the-garden-book" in result.note


def test_bad_input_is_a_clear_error(shelf: Library) -> None:
    for bad in ("", "   ", "— … —"):
        with pytest.raises(GrimoireError, match="empty quotation"):
            shelf.verify_quote(bad)
    with pytest.raises(GrimoireError, match="no book"):
        shelf.verify_quote("the fog", book="no-such-book")


def test_skeleton_maps_back_to_the_original_text() -> None:
    text = "Le “ﬁrst” keeper—Émile—was well-\nknown."
    sk = skeleton(text)
    assert sk.text == "lefirstkeeperemilewaswellknown"
    start, end = sk.original_span(sk.text.index("emile"), sk.text.index("emile") + 5)
    assert text[start:end] == "Émile"
    assert quote_pieces("one two … three [...] four") == ["one two ", " three ", " four"]
    found = align([fold("keeper Emile"), fold("known")], sk.text)
    assert found is not None and found.similarity == 1.0


def test_a_long_quotation_is_found_without_matching_it_whole_against_every_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The rough place of a piece cost len(hay)·len(piece)²/64 (rapidfuzz's partial_ratio):
    a 5,000-character quotation held the server ~25 s. A long piece is placed by its middle
    now: the work stays bounded, and a long altered passage is still found whole."""
    from rapidfuzz import fuzz

    prose = " ".join(text for ch in GARDEN_CHAPTERS.values() for text in ch.values())
    words = sorted({w for w in (prose + " ".join(NOT_THERE)).split() if w.isalpha()})
    pick = random.Random(17).choice
    book = " ".join(pick(words) for _ in range(4_000))
    start, end = book.index(" ", 6_000) + 1, book.index(" ", 9_000)
    quote = book[start:end].replace(" ", "  ", 40)
    middle = quote.index(" ", len(quote) // 2)
    quote = quote[:middle] + " dragon" + quote[middle:]  # a word added
    work: list[int] = []
    real = fuzz.partial_ratio_alignment

    def counted(needle: str, hay: str, **kwargs: object) -> object:
        work.append(len(needle) ** 2 * len(hay) // 64)
        return real(needle, hay, **kwargs)

    monkeypatch.setattr(fuzz, "partial_ratio_alignment", counted)
    sk = skeleton(book)
    found = align([fold(quote)], sk.text)
    assert found is not None and found.similarity > 0.99
    assert sk.original_span(found.start, found.end) == (start, end)
    assert sum(work) < 50_000_000, work


def test_cli_verify_prints_the_place_and_exits_1_when_not_found(tmp_path: Path) -> None:
    config = cli_library(tmp_path, keeper_pdf(tmp_path / "keeper.pdf"))
    runner = CliRunner()
    found = runner.invoke(app, ["verify", "KEEP THE LOGBOOK OPEN ON THE DESK",
                                "--config", str(config)])
    assert found.exit_code == 0, found.output
    assert "p. 3 (printed 2)" in found.output
    assert "Keep the logbook open on the desk" in found.output
    missing = runner.invoke(app, ["verify", NOT_THERE[0], "--json", "--config", str(config)])
    assert missing.exit_code == 1
    data = json.loads(missing.stdout)
    assert data["found"] is False and data["verdict"] == "not_found"
