"""The printed back-of-book index: entries read from the text, printed pages resolved to
physical ones, ``Library.lookup`` answering with the sections those pages are in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.ingest.build import FileInfo, build_book
from grimoire_beholder.library import Library
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.backindex import IndexEntry, parse_index
from grimoire_beholder.structure.book_index import page_texts, resolve_entries
from grimoire_beholder.text import normalize_term
from helpers import BENCH, fake_config

R_DATA = BENCH / "books-dev" / "R-data.pdf"
R_INTRO = BENCH / "books" / "R-intro.pdf"
needs_bench = pytest.mark.skipif(not (R_DATA.is_file() and R_INTRO.is_file()),
                                 reason="the shared bench is absent")


def test_comma_entries_with_sub_entries_see_also_and_abbreviated_ranges() -> None:
    text = """Index

A
abstraction, 12, 45–7
  data, 101
  procedural, 99; see also modules
Arrays, xii, 20, 24–26
Matrices
  inverse of, 25
recursion. See iteration
"""
    entries = parse_index(text)
    assert [(e.term, e.parent, e.pages, e.see) for e in entries] == [
        ("abstraction", None, [("12", "12"), ("45", "47")], []),
        ("data", "abstraction", [("101", "101")], []),
        ("procedural", "abstraction", [("99", "99")], ["modules"]),
        ("Arrays", None, [("xii", "xii"), ("20", "20"), ("24", "26")], []),
        ("inverse of", "Matrices", [("25", "25")], []),
        ("recursion", None, [], ["iteration"]),
    ]


def test_dot_leader_entries_run_together_as_pdf_columns_extract_them() -> None:
    text = ("odbcClose . . . . . . . . . 22 odbcConnect. . . . . . . . 22\n\nC\n\n"
            "read.csv. . . . . . . . . . 9, 32 .xls . . . . . . . . . 23, 32")
    assert [(e.term, e.pages) for e in parse_index(text)] == [
        ("odbcClose", [("22", "22")]), ("odbcConnect", [("22", "22")]),
        ("read.csv", [("9", "9"), ("32", "32")]), (".xls", [("23", "23"), ("32", "32")])]


def test_printed_pages_resolve_through_labels_or_an_offset_the_book_confirms() -> None:
    index = "\n".join(f"{word}, {n}" for n, word in enumerate(
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"], start=1))
    pages = page_texts((n + 4, f"here we discuss {word} at length") for n, word in enumerate(
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"], start=1))
    labelled = resolve_entries([index], {n + 4: str(n) for n in range(1, 7)}, pages, True)
    assert [(e.term, e.printed, e.page_start) for e in labelled][:2] == [
        ("alpha", "1", 5), ("bravo", "2", 6)]
    unlabelled = resolve_entries([index], {}, pages, True)
    assert [e.page_start for e in unlabelled] == [5, 6, 7, 8, 9, 10]
    # No labels and nothing on the pages confirms an offset: printed pages only.
    assert {e.page_start for e in resolve_entries([index], {}, {}, True)} == {None}
    # EPUB and Markdown have no printed pages at all.
    assert {e.page_start for e in resolve_entries([index], {}, pages, False)} == {None}


def test_terms_match_whatever_the_case_punctuation_or_plural() -> None:
    assert normalize_term("Missing values") == normalize_term("missing value") == "missing value"
    assert normalize_term("read.fwf") == "read fwf"
    assert normalize_term("Données") == "donnee"


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
@needs_bench
def test_r_intro_index_entries_point_at_the_physical_pages_of_their_printed_numbers() -> None:
    book = build_book(parse_file(R_INTRO), slug="r-intro", name="R-intro",
                      info=FileInfo(str(R_INTRO), "0", 0, 0.0), config=Config())
    entries = {(e.term, e.printed): e for e in book.index_entries}
    assert len(book.index_entries) > 250
    frames = entries[("Data frames", "30")]  # the concept index, printed page 30
    assert (frames.page_start, frames.page_end) == (36, 36)  # six roman pages precede "1"
    assert entries[("solve", "25")].page_start == 31
    assert all(e.page_start is not None for e in book.index_entries if e.printed)


@pytest.fixture(scope="module")
def r_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    folder = tmp_path_factory.mktemp("r-data")
    lib = Library.open(config=fake_config(folder), embedder=FakeEmbedder())
    lib.ingest(R_DATA)
    try:
        yield lib
    finally:
        lib.close()


@needs_bench
def test_lookup_gives_printed_and_physical_pages_and_the_sections_there(
        r_data: Library) -> None:
    [entry] = r_data.lookup("odbcConnect")
    assert (entry.slug, entry.term) == ("r-data", "odbcConnect")
    [locator] = entry.locators
    assert (locator.printed, locator.page_start, locator.page_end) == ("22", 26, 26)
    assert [s["section"] for s in locator.sections] == ["Package RODBC"]
    assert locator.sections[0]["role"] == "body"
    data = entry.to_dict()
    assert data["locators"][0]["sections"][0]["chapter"] == "4 Relational databases"


@needs_bench
def test_lookup_matches_loosely_and_lists_every_place(r_data: Library) -> None:
    [entry] = r_data.lookup("MISSING VALUE")
    assert entry.term == "Missing values"
    assert [loc.printed for loc in entry.locators] == ["5", "9"]
    prefixed = {e.term for e in r_data.lookup("odbcConnectE")}
    assert prefixed == {"odbcConnectExcel", "odbcConnectExcel2007"}
    assert r_data.lookup("odbcConnect", book="r-data")
    assert r_data.lookup("quantum chromodynamics") == []
    with pytest.raises(GrimoireError, match="at least one letter"):
        r_data.lookup("  ...  ")


@needs_bench
def test_an_index_page_does_not_outrank_the_page_it_points_at(r_data: Library) -> None:
    top = r_data.search("How do I open a connection with odbcConnect?", mode="keyword").hits[0]
    assert top.role == "body" and top.section.endswith("Package RODBC")


@needs_bench
def test_a_printed_index_ingested_after_a_search_lifts_its_pages(tmp_path: Path) -> None:
    """A search remembers that the library had no printed index only until it changes: the
    same question then finds what a newly opened library finds."""
    question = "How do I open a connection with odbcConnect?"
    note = tmp_path / "note.md"
    note.write_text("# Notes\n\nNothing about connections here.\n", encoding="utf-8")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(note)
        lib.search(question, mode="keyword")  # no printed index in the library yet
        lib.ingest(R_DATA)
        later = lib.search(question, mode="keyword")
        with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as fresh:
            again = fresh.search(question, mode="keyword")
    assert [(h.chunk_id, h.score) for h in later.hits] == [(h.chunk_id, h.score)
                                                          for h in again.hits]
    assert later.hits[0].section.endswith("Package RODBC")


def test_entries_without_pages_keep_their_see_references() -> None:
    [entry] = parse_index("recursion. See iteration; loops\n")
    assert entry == IndexEntry("recursion", [], None, ["iteration", "loops"])


def test_an_empty_library_has_nothing_to_look_up(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        assert lib.lookup("anything") == []


def test_locators_with_ff_and_notes_and_entries_wrapped_over_two_lines() -> None:
    # "152": an EPUB page marker between entries, not more pages of the entry above
    text = """Index
Binary search, xii, 45ff
Dijkstra's algorithm, 101 ff.
152
Euler, Leonhard, 7, 9n, 12n3
Fibonacci numbers, 45f, 50
Cache,
   30, 31
Recursion, 40, see also
   Iteration
War, civil, 45
"""
    assert [(e.term, e.pages, e.see) for e in parse_index(text)] == [
        ("Binary search", [("xii", "xii"), ("45", "45")], []),
        ("Dijkstra's algorithm", [("101", "101")], []),
        ("Euler, Leonhard", [("7", "7"), ("9", "9"), ("12", "12")], []),
        ("Fibonacci numbers", [("45", "45"), ("50", "50")], []),
        ("Cache", [("30", "30"), ("31", "31")], []),
        ("Recursion", [("40", "40")], ["Iteration"]),
        ("War, civil", [("45", "45")], [])]  # "civil" is no roman page number
    run_together = "see-saw, 12 Seebeck effect, 14 dispersion, see prism focal length, 2, 4"
    # the end of a "see" target is unknown when lines run together: that entry is skipped
    assert [(e.term, e.pages) for e in parse_index(run_together)] == [
        ("see-saw", [("12", "12")]), ("Seebeck effect", [("14", "14")])]


# Chapters 1-4 are printed 1-4 after two unnumbered front pages (no page labels in the
# file); each term is on the page its entry gives, so the book confirms the offset.
OPTICS = [
    "Light travels at about three hundred thousand kilometres per second. Its wavelength "
    "runs from 380 to 750 nanometres, and Huygens described it as a wave.",
    "A converging lens brings parallel rays to a focus. The lensmaker's equation gives the "
    "focal length, and Snell's law governs each surface.",
    "A prism disperses white light into a spectrum because the refractive index of glass "
    "depends on the wavelength. Newton used two prisms.",
    "A concave mirror forms a real image at its focal point. Newton built a telescope with "
    "a mirror to avoid the colours a lens adds.",
]
# Two columns, set line by line as typesetters do: PDF extraction runs each column's lines
# together ("concave mirror, 4 converging lens, 2ff Huygens, …").
OPTICS_INDEX = (["concave mirror, 4", "converging lens, 2ff", "Huygens, Christiaan, 1",
                 "lensmaker's equation, 2", "Newton, Isaac, 3, 4, 3n"],
                ["prism, 3-4", "refractive index, 3, 99", "Snell's law, 2", "spectrum, 3 ff.",
                 "wavelength, 1, 3"])


def _optics_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for text in ["Preface. For students of the lens grinder's craft.", "Contents"]:
        doc.new_page(width=420, height=595).insert_text((40, 80), text, fontsize=11)
    for number, text in enumerate(OPTICS, start=1):
        page = doc.new_page(width=420, height=595)
        page.insert_text((40, 60), f"{number} Chapter {number}", fontsize=16)
        page.insert_textbox(pymupdf.Rect(40, 80, 380, 400), text, fontsize=11)
    page = doc.new_page(width=420, height=595)
    page.insert_text((40, 60), "Index", fontsize=16)
    for x, column in zip((40, 230), OPTICS_INDEX, strict=True):
        page.insert_text((x, 90), "\n".join(column), fontsize=9)
    doc.set_toc([[1, "Preface", 1], [1, "Contents", 2]]
                + [[1, f"{n} Chapter {n}", n + 2] for n in range(1, 5)] + [[1, "Index", 7]])
    doc.save(path)
    return path


def test_a_typeset_comma_index_without_page_labels_is_looked_up_through_the_cli(
        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from books_gen import cli_library
    from grimoire_beholder.cli.entry import app

    config = cli_library(tmp_path, _optics_pdf(tmp_path / "optics.pdf"))

    def lookup(term: str) -> list[str]:
        result = CliRunner().invoke(app, ["lookup", term, "--config", str(config)])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    assert lookup("refractive index") == [
        "refractive index — optics [optics]",
        "  p. 5 (printed 3) · 3 Chapter 3 [4.0]",
        "  printed p. 99"]  # past the book's end: no page of the file is claimed
    assert lookup("Newton") == ["Newton, Isaac — optics [optics]",
                                "  p. 5 (printed 3) · 3 Chapter 3 [4.0]",
                                "  p. 6 (printed 4) · 4 Chapter 4 [5.0]"]
    assert lookup("spectrum")[1:] == ["  p. 5 (printed 3) · 3 Chapter 3 [4.0]"]
    assert lookup("converging lens")[1:] == ["  p. 4 (printed 2) · 2 Chapter 2 [3.0]"]
    listed = CliRunner().invoke(app, ["list", "--json", "--config", str(config)])
    assert '"index": 1' in listed.stdout


def test_the_query_terms_looked_up_are_its_runs_of_up_to_five_words() -> None:
    """Every run of 1-5 consecutive normalised words of at least three characters, in
    order: what the printed-index lift looks up."""
    from grimoire_beholder.search import ranking

    words = ["is", "odbcconnect", "in", "r", "a", "missing", "value", "fix"]
    want = [" ".join(words[i:j]) for i in range(len(words))
            for j in range(i + 1, min(len(words), i + 5) + 1)]
    assert ranking.query_terms("Is odbcConnect in R a missing values fix?") == [
        run for run in want if len(run) >= 3]
    assert ranking.query_terms("R ?") == [] and ranking.query_terms("") == []
