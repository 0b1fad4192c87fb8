"""Section roles: what part of a book each section is, judged from markup, titles and shape,
shown in outlines and lists, used by search as a prior and as a filter."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.ingest.build import FileInfo, build_book
from grimoire_beholder.library import Library
from grimoire_beholder.parse import parse_file
from grimoire_beholder.store.migrations import SCHEMA_VERSION
from grimoire_beholder.structure.roles import section_role
from helpers import BENCH, fake_config, write_markdown_book

R_DATA = BENCH / "books-dev" / "R-data.pdf"
ART_OF_WAR = BENCH / "books" / "sun-tzu_the-art-of-war_lionel-giles.epub"
SHERLOCK = BENCH / "books" / "arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub"
needs_bench = pytest.mark.skipif(not R_DATA.is_file(), reason="the shared bench is absent")

CONTENTS_TEXT = "\n".join(f"{n}.{k} Topic number {n}{k} . . . . . . . . . . {n * 10 + k}"
                          for n in range(1, 5) for k in range(1, 4))
INDEX_TEXT = "\n".join(f"{word}, {page}, {page + 7}–{page + 9}" for word, page in (
    ("abacus", 12), ("binary trees", 40), ("caching", 3), ("dynamic programming", 77),
    ("encoding", 25), ("floating point", 9), ("garbage collection", 61), ("hashing", 30),
    ("iterators", 55)))
PROSE = ("The expedition left the valley at dawn and followed the river north for three "
         "days, until the cliffs closed in and the path turned to scree. ") * 8
REFERENCES = "\n\n".join((
    "Becker, R. A., Chambers, J. M. and Wilks, A. R. (1988). The New S Language. Wadsworth.",
    "Chambers, J. M. (1998). Programming with Data. Springer, New York.",
    "Chambers, J. M. and Hastie, T. J. (1992). Statistical Models in S. Chapman and Hall.",
    "McCullagh, P. and Nelder, J. A. (1989). Generalized Linear Models. Chapman and Hall.",
    "Seber, G. A. F. (1977). Linear Regression Analysis. Wiley, New York.",
    "Venables, W. N. and Ripley, B. D. (2002). Modern Applied Statistics with S. Springer."))
# Sentences ending in a year, one per line or run together as a PDF paragraph.
EVENTS = [f"The {event} took place at {city} after long negotiations between the parties, {year}."
          for event, city, year in (
              ("treaty", "Westphalia", 1648), ("coronation", "Reims", 1654),
              ("fire", "London", 1666), ("siege", "Vienna", 1683), ("union", "Edinburgh", 1707),
              ("earthquake", "Lisbon", 1755), ("storming", "Paris", 1789),
              ("congress", "Vienna", 1815))]


@pytest.mark.parametrize(("chapter", "section", "text", "hints", "role"), [
    ("Inhaltsverzeichnis", "", CONTENTS_TEXT, (), "contents"),
    ("Table des matières", "", CONTENTS_TEXT, (), "contents"),
    ("Register", "", INDEX_TEXT, (), "index"),
    ("Índice analítico", "", INDEX_TEXT, (), "index"),
    ("Appendix D Function and variable index", "", INDEX_TEXT, (), "index"),
    ("Предметный указатель", "", INDEX_TEXT, (), "index"),
    ("Anmerkungen", "", PROSE, (), "notes"),
    ("Bibliografía", "", PROSE, (), "bibliography"),
    ("Glossaire", "", PROSE, (), "glossary"),
    ("Dedication", "", "For my mother.", (), "front_matter"),
    # an index or contents title needs the shape: a chapter about building indexes is body
    ("Creating an index", "", PROSE, (), "body"),
    ("Databases", "The index", PROSE, (), "body"),
    # a "Notes" sub-heading of a body chapter is body text unless it reads as notes
    ("Installing", "Notes", PROSE, (), "body"),
    # a numbered chapter is part of the body unless its text bears the title out
    ("5 Sources", "Springs and wells", PROSE, (), "body"),
    ("Chapter 3 Copyright", "", PROSE, (), "body"),
    ("7 References", "", REFERENCES, (), "bibliography"),
    # a chronology is not an index, though its lines end in numbers
    ("Chronology", "", "\n".join(EVENTS), (), "body"),
    ("Chronology", "", " ".join(e.replace(" after long negotiations between the parties", "")
                                for e in EVENTS), (), "body"),
    # no title: the shape alone
    ("Part two", "", INDEX_TEXT, (), "index"),
    ("Part two", "", CONTENTS_TEXT, (), "contents"),
    ("Chapter 4", "", PROSE, (), "body"),
    # markup decides; a specific type beats the generic frontmatter
    ("Sun Wu and His Book", "", PROSE, ("frontmatter", "introduction"), "body"),
    ("Endnotes", "", PROSE, ("backmatter", "endnotes"), "notes"),
    ("Untitled", "", PROSE, ("index",), "index"),
])
def test_section_role_reads_markup_titles_in_several_languages_and_shape(
        chapter: str, section: str, text: str, hints: tuple[str, ...], role: str) -> None:
    assert section_role(chapter, section, text, hints) == role


def _roles_by_chapter(path: Path) -> dict[str, set[str]]:
    """What ingest would store: the book parsed, shaped and judged (no model stages)."""
    book = build_book(parse_file(path), slug="x", name="x",
                      info=FileInfo(str(path), "0", 0, 0.0), config=Config())
    return {c.title: {s.role for s in c.sections} for c in book.chapters}


@needs_bench
def test_pdf_contents_pages_indexes_and_references_get_their_roles() -> None:
    roles = _roles_by_chapter(R_DATA)
    assert roles["Front matter"] == {"contents"}  # title page + "Table of Contents". . . 3
    assert roles["Acknowledgements"] == {"front_matter"}
    assert roles["Function and variable index"] == {"index"}
    assert roles["Concept index"] == {"index"}
    assert roles["A References"] == {"bibliography"}
    assert set().union(*(r for t, r in roles.items() if t[0].isdigit())) == {"body"}


@pytest.mark.skipif(not ART_OF_WAR.is_file(), reason="the shared bench is absent")
def test_epub_endnotes_dedication_and_introduction_follow_the_markup() -> None:
    roles = _roles_by_chapter(ART_OF_WAR)
    assert roles["Endnotes"] == {"notes"}
    assert roles["Dedication"] == {"front_matter"}
    assert roles["Bibliography"] == {"bibliography"}
    assert roles["Sun Wu and His Book"] == {"body"}  # epub:type "frontmatter introduction"
    assert roles["I: Laying Plans"] == {"body"}


@pytest.mark.skipif(not SHERLOCK.is_file(), reason="the shared bench is absent")
def test_a_story_collection_is_body_text_but_its_title_page() -> None:
    roles = _roles_by_chapter(SHERLOCK)
    assert roles.pop("Titlepage") == {"front_matter"}
    assert set().union(*roles.values()) == {"body"}


def _notes_book(tmp_path: Path) -> Path:
    """A book whose endnotes restate the body's words more densely than the body does."""
    body = ("The lighthouse keeper trims the wick at dusk and winds the clockwork that turns "
            "the great lens, so the beam sweeps the reef all night. ") * 3
    notes = "\n\n".join(
        f"{n}. The keeper, the wick, the lens and the beam: see the lighthouse chapter. ↩"
        for n in range(1, 9))
    return write_markdown_book(tmp_path / "keeper.md", "The Keeper", {
        "The lighthouse": {"Nights": body},
        "Endnotes": {"Notes to the lighthouse chapter": notes},
    })


def test_search_ranks_body_before_notes_and_the_role_filter_reaches_the_notes(
        tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(_notes_book(tmp_path))
        top = lib.search("keeper wick lens beam", mode="keyword", top_k=3)
        only_notes = lib.search("keeper wick lens beam", mode="keyword", role="notes")
        either = lib.search("keeper wick lens beam", mode="keyword", role=["notes", "body"])
    assert top.hits[0].role == "body" and top.hits[0].section.endswith("Nights")
    assert any(h.role == "notes" for h in top.hits)  # a prior, not an exclusion
    assert only_notes.hits and {h.role for h in only_notes.hits} == {"notes"}
    assert {h.role for h in either.hits} == {"body", "notes"}
    assert top.to_dict()["results"][0]["role"] == "body"


def test_an_unknown_role_is_a_clear_error(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(_notes_book(tmp_path))
        with pytest.raises(GrimoireError, match=r"unknown section role 'appendix'.*body"):
            lib.search("keeper", role="appendix")


# What each schema version added, undone: v6 external sources (its widened source_type
# check stays: the migration accepts either), v5 roles and printed indexes, v4 the search log;
# v7 the access tokens of the HTTP server; v8 the index of section roles.
_UNDO = {8: "DROP INDEX sections_role;",
         7: "DROP TABLE access_tokens;",
         6: "DROP TABLE book_labels; DROP TABLE book_sources; DROP TABLE source_libraries;",
         5: "ALTER TABLE sections DROP COLUMN role; ALTER TABLE sections DROP COLUMN hints; "
            "DROP TABLE index_entries; DELETE FROM library_meta WHERE key = 'derived_version';",
         4: "DROP TABLE search_log; DROP TRIGGER embeddings_log_insert; "
            "DROP TRIGGER embeddings_log_update; DROP TRIGGER embeddings_log_delete; "
            "DELETE FROM library_meta WHERE key = 'library_id';"}


@pytest.mark.parametrize("version", [4, 3])
def test_a_library_from_before_roles_migrates_forward_and_gets_them(
        tmp_path: Path, version: int) -> None:
    assert SCHEMA_VERSION == 8
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(_notes_book(tmp_path))
    # Make it look like the older schema: what later versions added is gone.
    conn = sqlite3.connect(config.database_path)
    conn.executescript("".join(_UNDO[v] for v in range(SCHEMA_VERSION, version, -1))
                       + f"PRAGMA user_version = {version};")
    conn.close()
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        roles = {c.title: {s.role for s in c.sections} for c in lib.outline("the-keeper").chapters}
        lib.ingest(write_markdown_book(tmp_path / "more.md", "More", {"A": {"B": PROSE}}))
        assert lib.search("expedition valley river", mode="keyword").hits[0].slug == "more"
    conn = sqlite3.connect(config.database_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM search_log").fetchone()[0] > 0  # writes logged
    conn.close()
    assert roles == {"The lighthouse": {"body"}, "Endnotes": {"notes"}}


def test_a_markdown_note_titled_notes_is_body_text_and_answers_first(tmp_path: Path) -> None:
    """A file of nothing but "# Notes" (or "# Sources") is the note itself, not the back
    matter of a book: it is neither marked "(notes)" nor ranked below the other files."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app
    from mcp_helpers import write_config

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "meeting.md").write_text(
        "# Notes\n\nMeeting with Bob. The deploy key for the staging cluster rotates every "
        "ninety days; the rotation script runs from the bastion host.\n", encoding="utf-8")
    (folder / "feeds.md").write_text(
        "# Sources\n\nThe pipeline reads three sources: the cache, the API and the "
        "environment, merged in that order.\n", encoding="utf-8")
    (folder / "deploy.md").write_text(
        "# Deploying\n\nDeploys go out from the release branch; the staging cluster takes "
        "every merge and its deploy key lives in the vault.\n", encoding="utf-8")
    config = write_config(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(folder), "--config", str(config)]).exit_code == 0
    listed = json.loads(runner.invoke(app, ["list", "--json", "--config", str(config)]).stdout)
    assert {b["slug"]: b["roles"] for b in listed} == {
        "notes": {"body": 1}, "sources": {"body": 1}, "deploying": {"body": 1}}
    found = runner.invoke(app, ["query", "how often does the staging deploy key rotate",
                                "--mode", "keyword", "--config", str(config)])
    first = next(line for line in found.stdout.splitlines() if line.startswith("1. "))
    assert first == "1. meeting.md:3 · Notes"


def test_roles_are_named_in_any_case_with_hyphens(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(_notes_book(tmp_path))
        hits = lib.search("keeper wick lens beam", mode="keyword", role=["Notes", "FRONT-MATTER"])
    assert hits.hits and {h.role for h in hits.hits} == {"notes"}


def _v4_library(tmp_path: Path) -> Path:
    """A library as the release before roles left it (schema 4); its config path."""
    from mcp_helpers import write_config

    config = write_config(tmp_path)
    with Library.open(config, embedder=FakeEmbedder()) as lib:
        lib.ingest(_notes_book(tmp_path))
    conn = sqlite3.connect(tmp_path / "book.db")
    conn.executescript("".join(_UNDO[v] for v in range(SCHEMA_VERSION, 4, -1))
                       + "PRAGMA user_version = 4;")
    conn.close()
    return config


def test_an_older_library_on_read_only_media_says_why_it_cannot_be_upgraded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app
    from grimoire_beholder.store import connection

    config = _v4_library(tmp_path)
    monkeypatch.setattr(connection, "may_write", lambda path: False)  # a read-only mount
    result = CliRunner().invoke(app, ["list", "--config", str(config)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.output.strip().splitlines()
    assert "older schema (4) and cannot be upgraded here" in line
    assert "run any CLI command" not in line  # which is what the user just did


def test_a_landmark_into_the_middle_of_a_document_marks_only_what_it_points_at(
        tmp_path: Path) -> None:
    """Books converted by Calibre and the like hold several chapters per document; the
    landmark ``b.xhtml#idx`` names the index at the end of b.xhtml, not chapter 3 before it."""
    from helpers import make_epub, rewrite

    index = "".join(f"<p>{entry}</p>" for entry in (
        "bell, 1", "clockwork, 2", "ferry, 1", "gulls, 3", "herring, 3", "lens, 2",
        "tide tables, 1", "wick, 2"))
    plain = make_epub(tmp_path / "plain.epub", {
        "a.xhtml": f'<section id="c1"><h1>The Harbour</h1><p>{PROSE}</p></section>'
                   f'<section id="c2"><h1>The Lighthouse</h1><p>{PROSE}</p></section>',
        "b.xhtml": f'<section id="c3"><h1>The Boats</h1><p>{PROSE}</p></section>'
                   f'<section id="idx"><h1>Index</h1>{index}</section>'},
        [("The Harbour", "a.xhtml#c1"), ("The Lighthouse", "a.xhtml#c2"),
         ("The Boats", "b.xhtml#c3"), ("Index", "b.xhtml#idx")])
    landmarks = ('<nav epub:type="landmarks"><ol>'
                 '<li><a epub:type="bodymatter" href="a.xhtml#c1">Start</a></li>'
                 '<li><a epub:type="index" href="b.xhtml#idx">Index</a></li></ol></nav>')
    marked = rewrite(plain, tmp_path / "marked.epub", lambda name, data: data.replace(
        b"</body>", landmarks.encode() + b"</body>") if name.endswith("nav.xhtml") else data)
    roles = _roles_by_chapter(marked)
    assert roles == {"The Harbour": {"body"}, "The Lighthouse": {"body"},
                     "The Boats": {"body"}, "Index": {"index"}}


DEFAULTS = "\n".join(f"{name} . . . . . . . . . . {value}" for name, value in (
    ("timeout", 30), ("retries", 3), ("port", 8080), ("workers", 4), ("backlog", 128),
    ("keepalive", 75), ("buffer", 64), ("depth", 16), ("interval", 10)))


def test_a_table_of_values_with_dot_leaders_is_not_an_index(tmp_path: Path) -> None:
    """Leaders before numbers in no alphabetical order are settings, not a map of pages:
    the section stays body text and its lines are not index entries pointing at 'page' 30."""
    assert section_role("Configuration", "Defaults", DEFAULTS) == "body"
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(write_markdown_book(tmp_path / "server.md", "Server", {
            "Configuration": {"Defaults": DEFAULTS, "Files": PROSE}}))
        assert lib.lookup("timeout") == []
        hit = lib.search("default timeout retries port", mode="keyword").hits[0]
    assert (hit.section.endswith("Defaults"), hit.role) == (True, "body")


def test_an_older_library_names_the_command_that_upgrades_it(tmp_path: Path) -> None:
    """Reading commands open read-only and cannot upgrade; the line they print must name
    one that does, and that one must change no book."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app

    config = _v4_library(tmp_path)
    runner = CliRunner()
    refused = runner.invoke(app, ["query", "keeper wick", "--config", str(config)])
    assert refused.exit_code == 1 and "`grimoire-beholder sync --dry-run`" in refused.output
    upgraded = runner.invoke(app, ["sync", "--dry-run", "--config", str(config)])
    assert upgraded.exit_code == 0, upgraded.output
    listed = json.loads(runner.invoke(app, ["list", "--json", "--config", str(config)]).stdout)
    assert listed[0]["roles"] == {"body": 1, "notes": 1}
