"""A file named as the library that holds no library: an empty file is a library still to
be created (reading commands say so and how, `ingest` creates it there); another program's
SQLite database is refused in one line by every command and never written to."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from helpers import write_markdown_book
from mcp_helpers import FAKE_CONFIG

pytestmark = pytest.mark.usefixtures("fake_models")


@pytest.fixture
def fake_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake models through a marked config.toml beside the database files named below."""
    (tmp_path / "config.toml").write_text(FAKE_CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _book(tmp_path: Path) -> Path:
    return write_markdown_book(tmp_path / "garden.md", "The Garden Book",
                               {"Trees": {"Oaks": "Oaks live for centuries. " * 30}})


def _tables(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]
    finally:
        conn.close()


def test_an_empty_file_is_a_library_to_be_created(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    listed = _cli("list", "--library", str(db))
    assert listed.exit_code == 1 and listed.stdout == ""
    assert listed.stderr == (f"error: {db} is an empty file, not a library yet (chosen by flag "
                             f"--library); create it with `grimoire-beholder ingest FILE "
                             f"--library {db}`\n")
    as_json = _cli("query", "oaks", "--library", str(db), "--json")
    assert json.loads(as_json.stderr) == {"error": listed.stderr[7:-1], "exit_code": 1}
    assert db.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == [
        "config.toml", "empty.db"]  # nothing written, nothing created
    assert _cli("ingest", str(_book(tmp_path)), "--library", str(db)).exit_code == 0
    assert [b["slug"] for b in json.loads(
        _cli("list", "--library", str(db), "--json").stdout)] == ["the-garden-book"]


def test_an_empty_sqlite_database_holds_no_library_yet(tmp_path: Path) -> None:
    db = tmp_path / "blank.sqlite"
    sqlite3.connect(db).execute("VACUUM").connection.close()
    assert db.stat().st_size > 0 and _tables(db) == []
    listed = _cli("status", "--library", str(db))
    assert listed.exit_code == 1
    assert listed.stderr == (f"error: {db} holds no library yet (an empty SQLite database); "
                             "`grimoire-beholder ingest` creates one there\n")
    assert _tables(db) == []


@pytest.mark.parametrize("command", [["list"], ["check"], ["sync", "--dry-run"], ["ingest"]])
def test_another_programs_database_is_refused_and_left_alone(
        tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "contacts.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('Ada')")
    conn.commit()
    conn.close()
    before, book = db.read_bytes(), _book(tmp_path)
    args = [*command, str(book)] if command == ["ingest"] else command
    refused = _cli(*args, "--library", str(db))
    assert refused.exit_code == 1
    assert refused.stderr == (f"error: {db} is an SQLite database of another program (its "
                              "tables: people), not a grimoire-beholder library; nothing was "
                              "written to it: name another file or folder\n")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml", "contacts.db",
                                                          "garden.md"]


@pytest.mark.parametrize(("tables", "user_version"), [
    (["books (id INTEGER PRIMARY KEY, title TEXT, price REAL)"], 0),  # a shop's "books"
    (["notes (id INTEGER PRIMARY KEY, body TEXT)"], 3),  # an app that versions its schema
    (["books (id INTEGER PRIMARY KEY, title TEXT)", "authors (name TEXT)"], 26),  # Calibre's
])
@pytest.mark.parametrize("command", [["query", "oaks"], ["sync", "--dry-run"], ["ingest"]])
def test_another_programs_versioned_database_is_left_alone(
        tmp_path: Path, tables: list[str], user_version: int, command: list[str]) -> None:
    """Another program's database whose tables include one named ``books``, or which sets
    ``user_version`` as many programs do, is refused too: it was taken for an older library,
    sent to `sync --dry-run`, and that (or ingest) switched it to WAL and migrated it —
    adding columns to the program's own ``books`` table."""
    db = tmp_path / "app.db"
    conn = sqlite3.connect(db)
    for table in tables:
        conn.execute(f"CREATE TABLE {table}")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.commit()
    conn.close()
    before, book = db.read_bytes(), _book(tmp_path)
    args = [*command, str(book)] if command == ["ingest"] else command
    refused = _cli(*args, "--library", str(db))
    assert refused.exit_code == 1
    names = ", ".join(sorted(t.split(" ")[0] for t in tables))
    assert refused.stderr == (f"error: {db} is an SQLite database of another program (its "
                              f"tables: {names}), not a grimoire-beholder library; nothing "
                              "was written to it: name another file or folder\n")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db", "config.toml", "garden.md"]


@pytest.mark.parametrize("command", [["sync"], ["delete", "oaks"], ["reindex-fts"]])
def test_only_ingest_makes_an_empty_sqlite_database_a_library(
        tmp_path: Path, command: list[str]) -> None:
    """Writing commands other than ingest say an empty SQLite database holds no library, as
    the reading ones do: `sync` made the library's schema in it and reported 0 books."""
    db = tmp_path / "blank.sqlite"
    sqlite3.connect(db).execute("VACUUM").connection.close()
    before = db.read_bytes()
    refused = _cli(*command, "--library", str(db))
    assert refused.exit_code == 1
    assert refused.stderr == (f"error: {db} holds no library yet (an empty SQLite database); "
                              "`grimoire-beholder ingest` creates one there\n")
    assert db.read_bytes() == before and _tables(db) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blank.sqlite", "config.toml"]



def test_a_name_with_a_line_break_keeps_the_error_on_one_line(tmp_path: Path) -> None:
    """A file name holding a newline is escaped in the ``error:`` line (it split the line
    in two); under --json the name is the file's own."""
    missing = tmp_path / "new\nbook.md"
    refused = _cli("ingest", str(missing))
    assert refused.exit_code == 1, refused.stderr
    assert refused.stderr == f"error: {tmp_path}/new\\nbook.md: file not found\n"
    as_json = _cli("ingest", str(missing), "--json")
    assert json.loads(as_json.stderr)["error"] == f"{missing}: file not found"


@pytest.mark.parametrize("command", [["check"], ["list"], ["query", "oaks", "--json"]])
def test_a_file_that_is_not_a_database_does_not_send_the_user_to_check(
        tmp_path: Path, command: list[str]) -> None:
    """`check` cannot open a file that is not an SQLite database either: its error said to run
    `check` to see the damage (`check` itself said so too)."""
    db = tmp_path / "notes.db"
    db.write_text("plain text, not a database\n", encoding="utf-8")
    refused = _cli(*command, "--library", str(db))
    assert refused.exit_code == 1 and refused.stdout == ""
    message = (json.loads(refused.stderr)["error"] if "--json" in command
               else refused.stderr.removeprefix("error: ").removesuffix("\n"))
    assert message == (f"the library file {db} is not a library database, or its first page "
                       "is damaged (file is not a database); if it was a library, restore it "
                       "from a backup, or move it aside and ingest the books again; else name "
                       "another file")
    assert db.read_text(encoding="utf-8") == "plain text, not a database\n"


def test_an_empty_book_db_in_a_library_folder_is_made_a_library_as_a_missing_one(
        tmp_path: Path) -> None:
    """ingest --library DIR makes DIR's config.toml (the marker later commands inside DIR find
    it by) when DIR/book.db is an empty file too, as when there is none: it made the library
    but no marker, and `status` inside DIR fell back to the per-user library."""
    from grimoire_beholder.library import Library

    for name, empty in (("new", False), ("empty", True)):
        shelf = tmp_path / name
        if empty:
            shelf.mkdir()
            (shelf / "book.db").touch()
        with Library.open(library=shelf, create=True) as lib:
            assert not lib.list_books()
        assert "[grimoire-beholder]" in (shelf / "config.toml").read_text(encoding="utf-8")
