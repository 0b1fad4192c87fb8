"""Section roles: what part of a book each section is, judged from markup, titles and shape,
shown in outlines and lists, used by search as a prior and as a filter."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import BENCH, fake_config, write_markdown_book
from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.ingest.build import FileInfo, build_book
from grimoire_beholder.library import Library
from grimoire_beholder.parse import parse_file
from grimoire_beholder.store.db import SCHEMA_VERSION
from grimoire_beholder.structure.roles import section_role

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


# What each schema version added, undone: v5 roles and printed indexes, v4 the search log.
_UNDO = {5: "ALTER TABLE sections DROP COLUMN role; ALTER TABLE sections DROP COLUMN hints; "
            "DROP TABLE index_entries; DELETE FROM library_meta WHERE key = 'derived_version';",
         4: "DROP TABLE search_log; DROP TRIGGER embeddings_log_insert; "
            "DROP TRIGGER embeddings_log_update; DROP TRIGGER embeddings_log_delete; "
            "DELETE FROM library_meta WHERE key = 'library_id';"}


@pytest.mark.parametrize("version", [4, 3])
def test_a_library_from_before_roles_migrates_forward_and_gets_them(
        tmp_path: Path, version: int) -> None:
    assert SCHEMA_VERSION == 5
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
