"""A PostgreSQL library met with what a hostile user does: a library made by an older version
of the program, a damaged schema version, a book named with a NUL byte. Each is one clear
error (or the same answer as SQLite), never a traceback, and the message's advice works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.errors import BookNotFoundError, StorageError
from grimoire_beholder.library import Library
from grimoire_beholder.store.postgres import pg_schema
from helpers import GARDEN_CHAPTERS, fake_config, write_markdown_book

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server


def _cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRIMOIRE_BEHOLDER_")}
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args,
                           "--config", str(config)],
                          capture_output=True, text=True, timeout=180, env=env)


def test_a_library_of_an_older_version_says_how_to_upgrade_and_that_works(
        tmp_path: Path, pg_url: str) -> None:
    import psycopg

    assert pg_schema.SCHEMA_VERSION >= 2
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the first version made it
        for statement in pg_schema.MIGRATIONS[0]:
            conn.execute(statement)  # the module's constants
        conn.execute("INSERT INTO library_meta VALUES ('schema_version', '1')")
    config = tmp_path / "config.toml"
    config.write_text(f'[grimoire-beholder]\ndb_path = "{pg_url}"\nembedding_backend = "fake"\n')
    refused = _cli("list", config=config)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    advice = refused.stderr.split("`")[1]  # the command the message names
    assert advice.startswith("grimoire-beholder ")
    _cli(*advice.split()[1:], config=config)  # the advice, taken
    listed = _cli("list", config=config)
    assert listed.returncode == 0, listed.stderr


def test_a_damaged_schema_version_is_one_line(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    config = fake_config(tmp_path, db_path=pg_url)
    Library.open(config=config, embedder=FakeEmbedder()).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE library_meta SET value = 'two' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="schema version 'two'"):
        Library.open(config=config, read_only=True)


def test_a_book_named_with_a_nul_byte_is_no_book(tmp_path: Path, pg_url: str) -> None:
    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config=fake_config(tmp_path, db_path=pg_url),
                      embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        for attempt in (lambda: lib.book("the-garden-book\x00"),
                        lambda: lib.search("compost", book="the\x00garden"),
                        lambda: lib.outline("x\x00")):
            with pytest.raises(BookNotFoundError, match="the-garden-book"):
                attempt()


def test_a_user_who_may_only_read_gets_one_line_for_a_write(tmp_path: Path, pg_url: str,
                                                            pg_admin_url: str) -> None:
    import uuid

    import psycopg

    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config=fake_config(tmp_path, db_path=pg_url),
                      embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
    role = "reader_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')  # type: ignore[arg-type]  # made above
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"'
                     )  # type: ignore[arg-type]
    as_reader = pg_url.replace("postgres:@", f"{role}:@", 1)
    other = write_markdown_book(tmp_path / "other.md", "Other", {"A": {"B": "words " * 50}})
    with Library.open(config=fake_config(tmp_path, db_path=as_reader),
                      embedder=FakeEmbedder()) as reader:
        assert [b.slug for b in reader.list_books()] == ["the-garden-book"]
        assert reader.search("compost").hits  # reading needs no more than SELECT
        for attempt in (lambda: reader.ingest(other), lambda: reader.delete("the-garden-book")):
            with pytest.raises(StorageError, match="permission denied") as refused:
                attempt()
            assert len(str(refused.value).splitlines()) == 1
            assert "lacks the rights" in str(refused.value)
        assert [b.slug for b in reader.list_books()] == ["the-garden-book"]


def test_a_database_made_again_empty_under_a_reader_is_one_line(
        tmp_path: Path, pg_url: str, pg_admin_url: str) -> None:
    """A long-running reader (serve-mcp) whose database was dropped and made again (a
    restore from a dump, under way) reconnected into an empty database and failed with
    "ProgrammingError: vector type not found in the database" and a traceback; once the
    library is back it is read again."""
    from urllib.parse import urlsplit

    import psycopg

    name = urlsplit(pg_url).path.lstrip("/")
    config = fake_config(tmp_path, db_path=pg_url)
    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
    with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as reader:
        assert [b.slug for b in reader.list_books()] == ["the-garden-book"]
        with psycopg.connect(pg_admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # type: ignore[arg-type]
            admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        for attempt in (reader.list_books, lambda: reader.search("compost")):
            with pytest.raises(StorageError, match="no library in the PostgreSQL database"
                               ) as refused:
                attempt()
            assert len(str(refused.value).splitlines()) == 1
        with Library.open(config=config, embedder=FakeEmbedder()) as lib:
            lib.ingest(book)  # the library back
        assert [b.slug for b in reader.list_books()] == ["the-garden-book"]


def test_a_reader_behind_a_locked_table_gives_up_in_one_line(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An administrator's VACUUM FULL or REINDEX holds its table locked: a search waited for
    as long as it was held (serve-mcp's every later request behind it); a reader now waits
    READ_LOCK_WAIT_S, then fails in one line, and reads again once the lock is gone."""
    import threading

    import psycopg

    from grimoire_beholder.store.postgres import pg_base, pg_engine

    monkeypatch.setattr(pg_base, "READ_LOCK_WAIT_S", 1.0)
    monkeypatch.setattr(pg_engine, "READ_LOCK_WAIT_S", 1.0)
    config = fake_config(tmp_path, db_path=pg_url)
    book = write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
    with Library.open(config=config, read_only=True, embedder=FakeEmbedder()) as reader, \
            psycopg.connect(pg_url) as admin:
        admin.execute("LOCK TABLE books IN ACCESS EXCLUSIVE MODE")
        outcome: list[BaseException | None] = []

        def read() -> None:
            try:
                reader.list_books()
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=read, daemon=True)
        worker.start()
        worker.join(timeout=30)
        admin.rollback()  # the lock released, whatever happened
        worker.join(timeout=30)
        [failed] = outcome
        assert isinstance(failed, StorageError), failed
        assert "locked by another session" in str(failed)
        assert len(str(failed).splitlines()) == 1
        assert [b.slug for b in reader.list_books()] == ["the-garden-book"]
