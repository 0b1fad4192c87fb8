"""No name means two books: an id is an id, a slug is never all digits, ids are never reused.

The bug this guards against lost data: files ``1.md`` … ``12.md`` got slugs ``1`` … ``12``
and ids in another order, so ``delete 2`` resolved "2" as a slug, then that book's id as a
name again, and removed a third book. Every surface is checked: the API, the CLI and a real
MCP client session.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from db_state import snapshot
from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import BookNotFoundError
from grimoire_beholder.library import Library
from grimoire_beholder.naming import MAX_BOOK_ID, parse_book_ref
from grimoire_beholder.store.migrations import SCHEMA_VERSION
from mcp_helpers import connect, structured, text, write_config

WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "indigo",
         "jasper", "kelp", "lichen", "mica", "nectar"]


def _numbered_folder(root: Path, count: int = 12) -> Path:
    """``1.md`` … ``count.md``, each about its own word, with no title: the file name names it."""
    folder = root / "books"
    folder.mkdir(parents=True)
    for n in range(1, count + 1):
        (folder / f"{n}.md").write_text(f"Notes number {n} are about {WORDS[n]} "
                                        f"{WORDS[n]} {WORDS[n]} and nothing else.\n")
    return folder


@pytest.fixture
def numbered(tmp_path: Path) -> Path:
    """A library (fake models) holding the twelve numbered files; returns its config."""
    config = write_config(tmp_path)
    folder = _numbered_folder(tmp_path)
    with Library.open(config) as lib:
        lib.ingest_folder(folder)
    return config


def _ids_by_slug(config: Path) -> dict[str, int]:
    with Library.open(config, read_only=True) as lib:
        return {b.slug: b.id for b in lib.list_books()}


def cli(config: Path, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "-c", str(config)])


# ------------------------------------------------------------------------ the rule itself
def test_numeric_file_names_get_slugs_that_cannot_read_as_ids(numbered: Path) -> None:
    by_slug = _ids_by_slug(numbered)
    assert set(by_slug) == {f"book-{n}" for n in range(1, 13)}
    assert sorted(by_slug.values()) != [by_slug[f"book-{n}"] for n in range(1, 13)]  # shuffled
    with Library.open(numbered, read_only=True) as lib:
        for slug, book_id in by_slug.items():
            assert lib.book(slug).id == book_id
            assert lib.book(book_id).slug == slug
            assert lib.book(str(book_id)).slug == slug
            assert lib.book(f" {book_id} ").slug == slug


@pytest.mark.parametrize("ref", [True, False, 0, -3, MAX_BOOK_ID + 1, "0", "00",
                                 "9" * 20, "9" * 5000, "", "   ", 2.0, None])
def test_what_cannot_name_a_book_is_refused(ref: object) -> None:
    with pytest.raises(BookNotFoundError) as caught:
        parse_book_ref(ref)
    assert len(str(caught.value)) < 200 and "\n" not in str(caught.value)


def test_references_read_one_way() -> None:
    assert parse_book_ref(7) == 7 and parse_book_ref("7") == 7 and parse_book_ref("007") == 7
    assert parse_book_ref(MAX_BOOK_ID) == MAX_BOOK_ID
    assert parse_book_ref("book-7") == "book-7" and parse_book_ref(" art-of-war ") == "art-of-war"
    assert parse_book_ref("٧") == "٧"  # an Arabic-Indic digit is not an id (nor any slug)


def test_a_numeric_name_gets_an_unambiguous_slug(numbered: Path, tmp_path: Path) -> None:
    book = tmp_path / "extra.md"
    book.write_text("Something about quartz and quartz only.\n")
    victim_id = _ids_by_slug(numbered)["book-3"]
    assert victim_id != 3
    with Library.open(numbered) as lib:
        lib.delete(f"book-{victim_id}")  # free the slug the name will ask for
        report = lib.ingest(book, name=str(victim_id))
        assert report.slug == f"book-{victim_id}"
        assert lib.book(victim_id).slug == "book-3"  # the id still names its own book
        assert lib.book(report.slug).id == report.book_id


# ------------------------------------------------------------------------ the CLI
def test_cli_delete_by_id_removes_exactly_that_book(numbered: Path) -> None:
    before = _ids_by_slug(numbered)
    target = next(slug for slug, i in before.items() if i == 2)
    assert target != "book-2"  # the case that used to delete a third book
    result = cli(numbered, "delete", "2", "--yes")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"deleted {target}"
    after = _ids_by_slug(numbered)
    assert after == {s: i for s, i in before.items() if s != target}
    result = cli(numbered, "delete", "book-2", "--yes")
    assert result.stdout.strip() == "deleted book-2"
    assert _ids_by_slug(numbered) == {s: i for s, i in after.items() if s != "book-2"}


@pytest.mark.parametrize("args", [
    ("delete", "99999999999999999999", "--yes"),
    ("delete", "9223372036854775808", "--yes"),
    ("delete", "0", "--yes"),
    ("reindex-fts", "--book", "99999999999999999999"),
    ("query", "amber", "--book", "99999999999999999999"),
    ("delete", "book-99", "--yes"),
])
def test_cli_refuses_ids_out_of_range_in_one_line_and_changes_nothing(
        numbered: Path, args: tuple[str, ...]) -> None:
    db = numbered.parent / "book.db"
    before = snapshot(db)
    result = cli(numbered, *args)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # no traceback
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert snapshot(db) == before


# ------------------------------------------------------------------------ ids stay put
def test_a_deleted_books_id_is_never_given_again(numbered: Path, tmp_path: Path) -> None:
    before = _ids_by_slug(numbered)
    top_slug = max(before, key=before.__getitem__)
    top = before[top_slug]
    with Library.open(numbered) as lib:
        lib.delete(top)
        fresh = tmp_path / "fresh.md"
        fresh.write_text("Quartz, quartz and more quartz.\n")
        assert lib.ingest(fresh).book_id == top + 1
        with pytest.raises(BookNotFoundError, match=f"no book has id {top}"):
            lib.book(top)


def test_renames_and_reingests_keep_or_retire_ids(numbered: Path) -> None:
    folder = numbered.parent / "books"
    before = _ids_by_slug(numbered)
    (folder / "4.md").rename(folder / "four.md")  # a move: same book
    (folder / "5.md").write_text("Notes number 5 now cover zircon and only zircon.\n")
    with Library.open(numbered) as lib:
        report = lib.sync()
        assert report.to_dict()["counts"]["moved"] == 1
        assert lib.book(before["book-4"]).slug == "book-4"  # same id, same slug
        assert lib.book(before["book-5"]).slug == "book-5"  # changed in place
        assert "zircon" in lib.section(before["book-5"], 0, 0).text
        (folder / "5.md").write_text("Notes number 5 are now about tourmaline.\n")
        forced = lib.ingest(folder / "5.md", force=True)  # re-cut in place: the same id
        assert forced.slug == "book-5" and forced.book_id == before["book-5"]
        assert "tourmaline" in lib.section(before["book-5"], 0, 0).text
    assert _ids_by_slug(numbered) == before


# ------------------------------------------------------------------------ older libraries
def _as_version_2_with_numeric_slugs(config: Path) -> Path:
    """Turn the library back into what version 2 wrote for the numbered files."""
    db = config.parent / "book.db"
    conn = sqlite3.connect(db)
    with conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                                    "AND name LIKE 'books_slug%'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("UPDATE books SET slug = substr(slug, 6) WHERE slug GLOB 'book-[0-9]*'")
        conn.execute("UPDATE books SET slug = 'book-3' WHERE slug = '12'")  # a collision
        conn.execute("DELETE FROM library_meta WHERE key = 'last_book_id'")
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    return db


def test_migration_renames_numeric_slugs_and_guards_the_table(numbered: Path) -> None:
    ids = _ids_by_slug(numbered)
    db = _as_version_2_with_numeric_slugs(numbered)
    with Library.open(numbered) as lib:  # a writable open migrates
        renamed = {b.id: b.slug for b in lib.list_books()}
    assert renamed[ids["book-12"]] == "book-3"  # it had that name before the migration
    assert renamed[ids["book-3"]] == "book-3-2"
    assert {renamed[ids[f"book-{n}"]] for n in (1, 2, 10)} == {"book-1", "book-2", "book-10"}
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError, match="all digits"):
        conn.execute("UPDATE books SET slug = '7' WHERE id = ?", (ids["book-1"],))
    conn.close()


# ------------------------------------------------------------------------ MCP
@pytest.mark.anyio
async def test_every_id_the_server_hands_out_names_the_same_book(numbered: Path) -> None:
    ids = _ids_by_slug(numbered)
    async with connect(numbered) as client:
        for n in (2, 10, 12):
            word = WORDS[n]
            found = structured(await client.call_tool("search_book", {"question": word}))
            top = found["results"][0]
            assert top["slug"] == f"book-{n}" and top["book_id"] == ids[f"book-{n}"]
            assert f"get_section(book_id={top['book_id']}," in text(
                await client.call_tool("search_book", {"question": word}))
            for ref in (top["book_id"], str(top["book_id"]), top["slug"]):
                section = structured(await client.call_tool("get_section", {
                    "book_id": ref, "chapter_index": 0, "section_index": 0}))
                assert word in section["text"] and section["slug"] == f"book-{n}"
                outline = structured(await client.call_tool("get_book_outline",
                                                            {"book_id": ref}))
                assert outline["slug"] == f"book-{n}"
                only = structured(await client.call_tool("search_book", {
                    "question": "notes number", "book_id": ref, "top_k": 20}))
                assert {h["slug"] for h in only["results"]} == {f"book-{n}"}


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("get_book_outline", {"book_id": 9223372036854775808}, "no book has id"),
    ("get_book_outline", {"book_id": -1}, "no book has id"),
    ("get_book_outline", {"book_id": True}, "book_id"),
    ("get_section", {"book_id": 1, "chapter_index": True, "section_index": 0}, "chapter_index"),
    ("get_section", {"book_id": 1, "chapter_index": "0", "section_index": 0}, "chapter_index"),
    ("get_section", {"book_id": 1, "chapter_index": 0, "section_index": 0, "page": 2}, "page"),
    ("search_book", {"question": "amber", "bookid": 3}, "bookid"),
    ("search_book", {"question": "amber", "top_k": 2.5}, "top_k"),
    ("list_books", {"verbose": True}, "verbose"),
])
async def test_tool_arguments_are_strict(numbered: Path, tool: str, arguments: dict[str, Any],
                                         says: str) -> None:
    async with connect(numbered) as client:
        result = await client.call_tool(tool, arguments)
        alive = await client.call_tool("list_books", {})
    assert result.is_error and says in text(result)
    assert "Traceback" not in text(result)
    assert not alive.is_error


@pytest.mark.anyio
async def test_tool_schemas_forbid_unknown_arguments(numbered: Path) -> None:
    async with connect(numbered) as client:
        tools = (await client.list_tools()).tools
    assert {t.name: t.input_schema.get("additionalProperties") for t in tools} == {
        t.name: False for t in tools}


# ------------------------------------------------------------------------ one file, one book
def test_an_edited_file_never_becomes_a_second_book(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    notes = tmp_path / "notes.md"
    notes.write_text("# Field Notes\n\nThe heron waits at the reed bed before dawn.\n")
    assert cli(config, "ingest", str(notes)).exit_code == 0
    first = _ids_by_slug(config)
    db = tmp_path / "book.db"
    for title in ("Field Notes", "Field Notes, Revised"):  # same title, then a new one
        notes.write_text(f"# {title}\n\nThe heron now waits at the weir instead.\n")
        before = snapshot(db)
        refused = cli(config, "ingest", str(notes))
        assert refused.exit_code == 1 and snapshot(db) == before
        assert refused.stderr.startswith("error: ") and "has changed since" in refused.stderr
        assert "sync" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert _ids_by_slug(config) == first
    assert cli(config, "ingest", str(notes), "--force").exit_code == 0  # in place: the
    with Library.open(config, read_only=True) as lib:  # book keeps its id, slug and name
        books = lib.list_books()
        assert {b.slug: b.id for b in books} == first
        assert "weir" in lib.section(books[0].id, 0, 0).text
    renamed = cli(config, "ingest", str(notes), "--force", "--name", "Field Notes, Revised")
    assert renamed.exit_code == 0  # the new title's slug, when asked for
    assert _ids_by_slug(config) == {"field-notes-revised": first["field-notes"]}


def test_force_on_a_file_keeps_its_copy_in_another_folder_and_follows_a_move(
        tmp_path: Path) -> None:
    """``ingest --force`` re-cuts only the named file's own book: the same bytes followed in
    a second folder stay that folder's book (id and slug), and a file moved since is re-cut
    where it now is, keeping its id, as sync and a plain ingest follow a move — even when
    the live copy is the older book (that copy's book was once deleted in its place)."""
    config = write_config(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "ops").mkdir(parents=True)
    second.mkdir()
    text = "# Runbook\n\nPage the on-call engineer through the pager rota.\n"
    (first / "ops" / "runbook.md").write_text(text)
    (second / "runbook.md").write_text(text)
    with Library.open(config) as lib:
        lib.ingest_folder(second)
        lib.ingest_folder(first)
        before = {b.source_path: (b.id, b.slug) for b in lib.list_books()}
        assert len(before) == 2
        lib.ingest(second / "runbook.md", force=True)
        lib.ingest(first / "ops" / "runbook.md", force=True)
        assert {b.source_path: (b.id, b.slug) for b in lib.list_books()} == before
        moved = first / "archive" / "runbook.md"
        moved.parent.mkdir()
        (first / "ops" / "runbook.md").rename(moved)
        old_id = before[str(first / "ops" / "runbook.md")][0]
        assert lib.ingest(moved, force=True).book_id == old_id
        assert {b.id: b.slug for b in lib.list_books()} == dict(before.values())
        book = lib.book(old_id)
        assert (book.source_path, book.source_root, book.source_group) == (
            str(moved), str(first), "archive")
