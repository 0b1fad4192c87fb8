"""Storage and model-server faults: clear one-line errors, no corruption, a resumable library.

Model-server faults run the real CLI in a subprocess against tests/fake_ollama.py (refused
connection, 500s, responses slower than the timeout, malformed JSON, wrong vector dimension,
the daemon vanishing mid-stage, a model removed mid-run): bounded retries, then exit != 0
with one ``error:`` line and no traceback; rerunning the same command completes the book,
and no vector of the wrong size is ever stored.

Storage faults: read-only means read-only (SQLite ``mode=ro`` and ``immutable``), a full disk
(simulated with ``PRAGMA max_page_count`` via the test-only GRIMOIRE_BEHOLDER_MAX_PAGE_COUNT
hook in store/db.py), a missing library directory, a database that is not a database, and —
when not running as root, where permissions stop nothing — a read-only file and directory.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from db_state import snapshot
from fake_ollama import FakeOllama
from grimoire_beholder.errors import GrimoireError, StorageError
from grimoire_beholder.library import Library
from helpers import write_markdown_book

pytestmark = pytest.mark.slow  # CLI subprocesses against a faulty fake Ollama, with retries

FAKE_CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "fake"
chunk_size = 60
chunk_overlap = 8
"""


def run_cli(lib: Path, *args: str, env_extra: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    env["COLUMNS"] = "10000"  # rich wraps long lines otherwise (reported separately)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args], cwd=lib,
                          env=env, capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode not in (0, None), proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]




def integrity(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        q = conn.execute
        embedded = q("SELECT count(*) FROM chunks WHERE status = 'embedded'").fetchone()[0]
        return {
            "check": q("PRAGMA integrity_check").fetchone()[0],
            "embedded": embedded,
            "chunks": q("SELECT count(*) FROM chunks").fetchone()[0],
            "vectors": q("SELECT count(*) FROM embeddings").fetchone()[0],
            "fts": q("SELECT count(*) FROM chunks_fts").fetchone()[0],
            "sizes": {r[0] for r in q("SELECT length(vector) FROM embeddings")},
        }
    finally:
        conn.close()


def book_text(n: int) -> dict[str, dict[str, str]]:
    return {f"Part {c}": {f"Piece {s}": " ".join(
        f"Story {n}.{c}.{s}.{i} of kelp, tide pools and the rocky shore." for i in range(12))
        for s in range(2)} for c in range(2)}


# -- model-server faults (the real ollama client, the real CLI) ---------------------------
@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as srv:
        yield srv


def ollama_library(tmp_path: Path, server: FakeOllama) -> Path:
    (tmp_path / "config.toml").write_text(f"""\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "ollama"
embedding_model = "nomic-embed-text"
llm_backend = "ollama"
llm_model = "llama3.2:3b"
ollama_host = "{server.host}"
ollama_timeout = 1.0
ollama_retries = 1
embed_batch_size = 4
context_concurrency = 1
chunk_size = 60
chunk_overlap = 8
""")
    first = write_markdown_book(tmp_path / "first.md", "First Book", book_text(1))
    proc = run_cli(tmp_path, "ingest", str(first), "-q")
    assert proc.returncode == 0, proc.stderr
    return write_markdown_book(tmp_path / "second.md", "Second Book", book_text(2))


def _after(server: FakeOllama, n: int, action: Callable[[], None]) -> None:
    """Run ``action`` (in a thread) once the server has answered ``n`` generate calls."""
    calls = {"n": 0}

    def reply(model: str, prompt: str, body: dict[str, Any]) -> str:
        calls["n"] += 1
        if calls["n"] == n:
            threading.Thread(target=action).start()
        return f"Context of {len(prompt)} characters"

    server.reply = reply


FAULTS: dict[str, Callable[[FakeOllama], None]] = {
    "connection-refused": lambda s: s.stop(),
    "http-500-on-embed": lambda s: s.fail_next(100, path="/api/embed"),
    "http-500-on-generate": lambda s: s.fail_next(100, path="/api/generate")
    or s.fail_next(100, path="/api/chat"),
    "slow-past-timeout": lambda s: s.set_delay(2.5, path="/api/embed"),
    "malformed-json": lambda s: s.malformed_next(100, path="/api/embed"),
    "wrong-dimension": lambda s: s.wrong_dimension_next(100),
    "daemon-gone-mid-stage": lambda s: _after(s, 5, s.stop),
    "model-removed-mid-run": lambda s: _after(s, 3, lambda: s.remove_model("nomic-embed-text")),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_model_server_fault_stops_cleanly_and_resumes(tmp_path: Path, server: FakeOllama,
                                                      fault: str) -> None:
    second = ollama_library(tmp_path, server)
    db = tmp_path / "book.db"
    good = integrity(db)
    FAULTS[fault](server)
    proc = run_cli(tmp_path, "ingest", str(second), "-q", timeout=90)
    assert_one_line_error(proc)
    state = integrity(db)
    assert state["check"] == "ok" and state["sizes"] == {768 * 4}  # never a wrong dimension
    assert state["vectors"] == state["embedded"] == state["fts"]
    assert state["embedded"] >= good["embedded"]
    # The daemon is healthy again: the same command finishes the book.
    server.stop()
    fresh = FakeOllama()
    fresh.port = server.port
    with fresh:
        proc = run_cli(tmp_path, "ingest", str(second), "-q")
        assert proc.returncode == 0, proc.stderr
        status = json.loads(run_cli(tmp_path, "status", "--json").stdout)
    assert all(b["complete"] for b in status["books"]) and len(status["books"]) == 2
    state = integrity(db)
    assert state["check"] == "ok" and state["sizes"] == {768 * 4}
    assert state["vectors"] == state["embedded"] == state["fts"] == state["chunks"]


# -- read-only means read-only -------------------------------------------------------------
@pytest.fixture
def filled(tmp_path: Path) -> Path:
    (tmp_path / "config.toml").write_text(FAKE_CONFIG)
    book = write_markdown_book(tmp_path / "one.md", "One Book", book_text(1))
    with Library.open(tmp_path / "config.toml") as lib:
        lib.ingest(book)
    write_markdown_book(tmp_path / "two.md", "Two Book", book_text(2))
    return tmp_path


def test_read_only_library_cannot_write(filled: Path) -> None:
    db = filled / "book.db"
    before = snapshot(db)
    with Library.open(filled / "config.toml", read_only=True) as lib:
        for sql in ("INSERT INTO library_meta(key, value) VALUES ('x', 'y')",
                    "DELETE FROM books", "UPDATE chunks SET context = 'x'",
                    "CREATE TABLE evil(x)", "DROP TABLE books"):
            with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
                lib.conn.execute(sql)
        for attempt in (lambda: lib.ingest(filled / "two.md"), lambda: lib.delete("one-book"),
                        lambda: lib.reindex_fts(), lambda: lib.resume()):
            with pytest.raises(GrimoireError, match="read-only"):
                attempt()
        assert lib.search("kelp tide pools").hits  # reading still works
    assert snapshot(db) == before


def test_immutable_open_is_read_only_too(filled: Path) -> None:
    uri = f"{(filled / 'book.db').resolve().as_uri()}?immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
            conn.execute("DELETE FROM books")
        assert conn.execute("SELECT count(*) FROM books").fetchone()[0] == 1
    finally:
        conn.close()


def test_read_only_open_of_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(FAKE_CONFIG)
    with pytest.raises(StorageError, match="no library database"):
        Library.open(tmp_path / "config.toml", read_only=True)
    assert not (tmp_path / "book.db").exists()  # a read-only open never creates one


# -- full disk --------------------------------------------------------------------------
def test_full_disk_during_ingest_is_one_line_and_leaves_the_library_as_it_was(
        filled: Path) -> None:
    db = filled / "book.db"
    before = snapshot(db)
    conn = sqlite3.connect(db)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    big = write_markdown_book(filled / "big.md", "Big Book", {
        f"C{c}": {f"S{s}": ("Long sentences of shore and sea. " * 300) for s in range(5)}
        for c in range(5)})
    proc = run_cli(filled, "ingest", str(big), "-q",
                   env_extra={"GRIMOIRE_BEHOLDER_MAX_PAGE_COUNT": str(pages + 2)})
    assert_one_line_error(proc, "full")
    assert snapshot(db) == before
    assert integrity(db)["check"] == "ok"
    # With room again the same command works.
    proc = run_cli(filled, "ingest", str(big), "-q")
    assert proc.returncode == 0, proc.stderr


def test_full_disk_mid_stages_keeps_committed_work_and_resumes(filled: Path) -> None:
    """Room for the structure but not for every vector: the stages stop cleanly, and the
    committed part is kept and consistent."""
    db = filled / "book.db"
    conn = sqlite3.connect(db)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    book = write_markdown_book(filled / "mid.md", "Mid Book", {
        f"C{c}": {f"S{s}": ("Sand, shells and driftwood on the strand. " * 60)
                  for s in range(4)} for c in range(4)})
    for extra in (8, 16, 24, 40):
        proc = run_cli(filled, "ingest", str(book), "-q",
                       env_extra={"GRIMOIRE_BEHOLDER_MAX_PAGE_COUNT": str(pages + extra)})
        if proc.returncode == 0:
            break
        assert_one_line_error(proc, "full")
        state = integrity(db)
        assert state["check"] == "ok"
        assert state["vectors"] == state["embedded"] == state["fts"]
    proc = run_cli(filled, "ingest", str(book), "-q")
    assert proc.returncode == 0, proc.stderr
    state = integrity(db)
    assert state["vectors"] == state["embedded"] == state["fts"] == state["chunks"]


# -- missing directory, junk database, permissions ------------------------------------------
def test_missing_database_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(FAKE_CONFIG.replace('"book.db"', '"gone/book.db"'))
    book = write_markdown_book(tmp_path / "one.md", "One Book", book_text(1))
    for args in (("ingest", str(book), "-q"), ("list",), ("query", "kelp"), ("status",)):
        assert_one_line_error(run_cli(tmp_path, *args), "gone")
    assert not (tmp_path / "gone").exists()


def test_a_file_that_is_not_a_database_is_one_line_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(FAKE_CONFIG)
    junk = os.urandom(8192)
    (tmp_path / "book.db").write_bytes(junk)
    book = write_markdown_book(tmp_path / "one.md", "One Book", book_text(1))
    for args in (("ingest", str(book), "-q"), ("list",), ("query", "kelp")):
        assert_one_line_error(run_cli(tmp_path, *args), "book.db")
    assert (tmp_path / "book.db").read_bytes() == junk


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file permissions")
def test_read_only_database_file_is_one_line(filled: Path) -> None:
    db = filled / "book.db"
    with Library.open(filled / "config.toml") as lib:  # checkpoint the WAL into the file
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = snapshot(db)
    db.chmod(0o444)
    try:
        proc = run_cli(filled, "ingest", str(filled / "two.md"), "-q")
        assert_one_line_error(proc)
    finally:
        db.chmod(0o644)
    assert snapshot(db) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_read_only_directory_is_one_line(filled: Path) -> None:
    db = filled / "book.db"
    before = snapshot(db)
    filled.chmod(0o555)
    try:
        proc = run_cli(filled, "ingest", str(filled / "two.md"), "-q")
        assert_one_line_error(proc)
    finally:
        filled.chmod(0o755)
    assert snapshot(db) == before


def test_an_older_library_names_a_command_that_upgrades_it(filled: Path) -> None:
    """Reading commands open read-only and never migrate: the message must not send the user
    round in circles ("run any CLI command")."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app

    conn = sqlite3.connect(filled / "book.db")  # as schema 4 left it: no roles, no index
    conn.executescript("DROP INDEX sections_role; ALTER TABLE sections DROP COLUMN role; "
                       "ALTER TABLE sections DROP "
                       "COLUMN hints; DROP TABLE index_entries; DELETE FROM library_meta "
                       "WHERE key = 'derived_version'; PRAGMA user_version = 4;")
    conn.close()
    config, runner = str(filled / "config.toml"), CliRunner()
    refused = runner.invoke(app, ["list", "--config", config])
    assert refused.exit_code != 0 and "older schema (4)" in refused.stderr
    named = refused.stderr.split("`")[1].split()  # the command the message names
    assert named[0] == "grimoire-beholder" and named[1] != "list"
    assert runner.invoke(app, [*named[1:], "--config", config]).exit_code == 0
    listed = runner.invoke(app, ["list", "--json", "--config", config])
    assert listed.exit_code == 0 and "one-book" in listed.stdout
