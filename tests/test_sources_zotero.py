"""A Zotero data folder as a source, on a database made from Zotero's own schema SQL
(tests/data/zotero/build.py): items with their attachment, a collection, tags, a highlight
with its page and a note; read without ever writing ``zotero.sqlite``, even while Zotero
holds its lock; sync following Zotero's edits."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes import FakeEmbedder
from grimoire_beholder import Library
from grimoire_beholder.cli.entry import app
from helpers import fake_config
from mcp_helpers import connect, write_config

DATA = Path(__file__).parent / "data" / "zotero"
PAPER = "Tidal Friction and the Length of the Day"


def _data_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "Zotero"
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("*.py", "*.md", "__pycache__"))
    return folder


def _tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cli(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_zotero_item_its_collection_and_its_highlight(tmp_path: Path) -> None:
    folder = _data_folder(tmp_path)
    before = _tree_digest(folder)
    config = str(write_config(tmp_path))
    # Zotero running: it holds zotero.sqlite under an exclusive lock the whole time.
    zotero = sqlite3.connect(folder / "zotero.sqlite", isolation_level=None)
    zotero.execute("PRAGMA locking_mode = EXCLUSIVE")
    zotero.execute("BEGIN EXCLUSIVE")
    try:
        result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    finally:
        zotero.execute("ROLLBACK")
        zotero.close()
    assert result.exit_code == 0, result.output
    assert "is a Zotero data folder" in result.stderr
    assert "A Paper Known Only by Link [LINK2345]: no format" in result.output
    assert _tree_digest(folder) == before  # zotero.sqlite and the storage are untouched
    assert sorted(p.name for p in folder.iterdir()) == ["storage", "zotero.sqlite"]

    books = {b["name"]: b for b in _cli("list", "--config", config)}
    assert set(books) == {PAPER, "Composting at home"}  # not the one in the trash
    paper = books[PAPER]
    assert (paper["author"], paper["collections"], paper["tags"]) == (
        "Ada Marsh & Ben Flood", ["Ocean Physics"], ["geophysics", "tides"])
    assert (paper["metadata"]["doi"], paper["metadata"]["item_type"],
            paper["metadata"]["date"]) == ("10.5555/tides.2021.7", "journalArticle",
                                           "2021-03-04")
    assert paper["link"] == "zotero://select/library/items/TIDES234"
    assert books["Composting at home"]["source_type"] == "html"

    hits = _cli("query", "how fast is the moon receding from us", "--collection",
                "ocean physics", "--config", config)["results"]
    assert hits and {h["book"] for h in hits} == {PAPER}
    highlight = next(h for h in hits if h["chapter"] == "Your highlights and notes")
    assert highlight["citation"] == (f"{PAPER} · Your highlights and notes › Highlight, p. 2"
                                     " · p. 2")
    assert "the Moon recedes by 3.8 centimetres a year" in highlight["text"]
    assert "my chapter on lunar drift" in highlight["text"]
    assert highlight["link"] == "zotero://select/library/items/TIDES234"
    snapshot = _cli("query", "greens and browns compost heap", "--tag", "garden",
                    "--config", config)["results"]
    assert snapshot[0]["section"] == "Greens and browns"
    assert "Home" not in snapshot[0]["text"] and "newsletter" not in snapshot[0]["text"]


def test_sync_follows_zotero_edits_reembedding_only_a_new_title(tmp_path: Path) -> None:
    """A new tag is metadata only: nothing is embedded again. A new title is read again, as
    a new book's would be: every chunk's context names its book, and kept, the old title
    went on matching searches."""
    folder = _data_folder(tmp_path)
    embedder = FakeEmbedder()
    with Library.open(config=fake_config(tmp_path), embedder=embedder) as lib:
        lib.ingest_folder(folder)
        # Zotero edits: a new tag; the web page goes to the trash; a new note.
        db = sqlite3.connect(folder / "zotero.sqlite")
        db.execute("INSERT INTO tags (name) VALUES ('moon')")
        db.execute("INSERT INTO itemTags SELECT 1, tagID, 0 FROM tags WHERE name = 'moon'")
        db.execute("INSERT INTO deletedItems (itemID) SELECT itemID FROM items "
                   "WHERE key = 'WEB23456'")
        db.commit()
        calls = len(embedder.calls)
        report = lib.sync()
        actions = {f.path: f.action for f in report.files}
        assert actions == {f"{PAPER} [TIDES234]": "updated",
                           "A Paper Known Only by Link [LINK2345]": "skipped",
                           "composting-at-home [WEB23456]": "removed"}
        assert (report.embedded, len(embedder.calls)) == (0, calls)
        [book] = lib.list_books()
        assert (book.name, book.tags) == (PAPER, ["geophysics", "moon", "tides"])
        paper_id = book.id

        db.execute("INSERT INTO itemDataValues (value) VALUES ('Tidal Friction Revisited')")
        db.execute("UPDATE itemData SET valueID = (SELECT max(valueID) FROM itemDataValues) "
                   "WHERE itemID = 1 AND fieldID = 1")
        db.commit()
        db.close()
        report = lib.sync()
        assert {f.path: f.action for f in report.files if f.action != "skipped"} == {
            "Tidal Friction Revisited [TIDES234]": "updated"}
        [book] = lib.list_books()
        assert (book.id, book.name, book.tags) == (
            paper_id, "Tidal Friction Revisited", ["geophysics", "moon", "tides"])
        assert report.embedded == book.chunks
        hits = lib.search("tidal friction revisited", mode="keyword", tag="moon",
                          top_k=100).hits
        assert hits[0].book == "Tidal Friction Revisited"
        assert all((h.context or "").startswith("Tidal Friction Revisited") for h in hits)
        assert not [h for h in hits if PAPER in (h.context or "")]


@pytest.mark.anyio
async def test_mcp_search_book_filters_by_collection_and_lists_labels(tmp_path: Path) -> None:
    folder = _data_folder(tmp_path)
    config = write_config(tmp_path)
    with Library.open(config) as lib:
        lib.ingest_folder(folder)
    async with connect(config) as client:
        listed = (await client.call_tool("list_books", {})).structured_content
        assert listed is not None
        paper = next(b for b in listed["books"] if b["name"] == PAPER)
        assert (paper["collections"], paper["link"]) == (
            ["Ocean Physics"], "zotero://select/library/items/TIDES234")
        found = await client.call_tool("search_book", {
            "question": "moon recedes centimetres", "collection": "Ocean Physics"})
        assert found.structured_content is not None
        results = found.structured_content["results"]
        assert results and {r["book"] for r in results} == {PAPER}
        assert all(r["link"] == "zotero://select/library/items/TIDES234" for r in results)
        text = found.content[0].text  # type: ignore[union-attr]
        assert "Highlight, p. 2 · p. 2 · zotero://select/library/items/TIDES234" in text


def test_a_linked_file_outside_the_allowed_folders_is_not_added(tmp_path: Path) -> None:
    """Zotero links files wherever they are; an assistant's add_book (``within``) and
    sync_library (``confined``) never follow such a link out of the allowed folder."""
    folder = _data_folder(tmp_path)
    outside = tmp_path / "elsewhere" / "linked.html"
    outside.parent.mkdir()
    outside.write_text("<html><body><h1>Linked</h1><p>Kelp forests grow half a metre a "
                       "day.</p></body></html>")
    db = sqlite3.connect(folder / "zotero.sqlite")
    db.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (99, 2, 1, "
               "'LNKF2345')")
    db.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, "
               "path) SELECT 99, itemID, 2, 'text/html', ? FROM items WHERE key = 'LINK2345'",
               (str(outside),))
    db.commit()
    db.close()
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        report = lib.ingest_folder(folder, within=[folder])
        skipped = next(f for f in report.files if f.path.endswith("[LINK2345]"))
        assert skipped.action == "skipped" and "outside the allowed folders" in str(
            skipped.error)
        assert lib.sync(confined=True).counts()["added"] == 0
        assert lib.sync().counts()["added"] == 1  # a terminal's sync follows the link
        assert lib.search("kelp forests", top_k=1).hits[0].book == "A Paper Known Only by Link"


def test_a_journal_that_is_not_hot_is_left_alone(tmp_path: Path) -> None:
    """Bytes beside zotero.sqlite named as its rollback journal but not a valid one (a real
    write cut short: tests/test_foreign_journal.py): SQLite finds nothing to roll back, the
    database is read as it is, and the data folder stays byte for byte the same."""
    folder = _data_folder(tmp_path)
    (folder / "zotero.sqlite-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" * 64)
    before = {p.name: p.read_bytes() for p in folder.glob("zotero.sqlite*")}
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in folder.glob("zotero.sqlite*")} == before
