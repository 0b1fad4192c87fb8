"""The first vectors of a PostgreSQL library while another writer is adding a book.

The first batch of vectors makes the vector table, whose foreign keys lock ``books`` and
``chunks``; a book being written holds ``books`` and then wants ``chunks``. Taken in the
other order the two waited on each other and PostgreSQL killed one ("deadlock detected":
an ingest failed when two ran at once on a new library).
"""

from __future__ import annotations

import threading

import psycopg
import pytest

from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server


def test_the_first_stamp_waits_for_a_book_being_written(pg_url: str) -> None:
    engine = PostgresEngine.open(pg_url)
    writer = psycopg.connect(pg_url)
    try:
        # A book being written: its row is in, its chunks come next (uncommitted).
        writer.execute(
            "INSERT INTO books (slug, name, source_type, source_path, source_hash, "
            "source_size, source_mtime) VALUES ('tide', 'Tide', 'text', '/t.txt', 'h', 1, 0)")
        failures: list[BaseException] = []

        def stamp() -> None:
            try:
                with engine.transaction():
                    engine.ensure_stamp("fake-model", 4)
            except BaseException as exc:
                failures.append(exc)

        stamping = threading.Thread(target=stamp)
        stamping.start()
        stamping.join(2.0)  # the stamp now waits for the book being written
        # The book's chunks: the lock an INSERT INTO chunks takes.
        writer.execute("LOCK TABLE chunks IN ROW EXCLUSIVE MODE")
        writer.commit()
        stamping.join(60.0)
        assert not stamping.is_alive()
        assert failures == []
        assert engine.get_stamp() == ("fake-model", 4)
        assert [r[0] for r in engine.rows("SELECT slug FROM books")] == ["tide"]
    finally:
        writer.close()
        engine.close()
