"""Concurrency: readers keep answering while a writer ingests; a second writer is refused.

The writer is a real `ingest` subprocess on the fake backends with ``embed_batch_size = 1``
(one commit per chunk), so it holds SQLite's write lock on and off for several seconds. The
readers are CLI `query` processes and an in-process read-only Library. WAL mode must let
them all read without ever surfacing "database is locked"; the one-writer lock must refuse a
second ingest (or a delete) at once with a clear message instead of interleaving.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_ollama import FakeOllama
from grimoire_beholder.errors import LibraryBusyError
from grimoire_beholder.library import Library
from helpers import write_markdown_book

pytestmark = pytest.mark.slow  # a writer subprocess and reader processes for seconds

pytestmark = pytest.mark.slow  # a writer subprocess and reader processes for seconds

CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "fake"
chunk_size = 40
chunk_overlap = 5
embed_batch_size = 1
context_concurrency = 1
"""


def cli(lib: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    env["COLUMNS"] = "10000"
    return subprocess.Popen([sys.executable, "-m", "grimoire_beholder.cli.entry", *args], cwd=lib,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(lib: Path, *args: str) -> tuple[int, str, str]:
    proc = cli(lib, *args)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.fixture
def lib_dir(tmp_path: Path) -> Path:
    """A library with one small book already in it, and a big one waiting to be ingested."""
    (tmp_path / "config.toml").write_text(CONFIG)
    small = write_markdown_book(tmp_path / "small.md", "Small Book", {
        "Knots": {"Bowline": "The bowline makes a fixed loop at the end of a rope. " * 8}})
    with Library.open(tmp_path / "config.toml") as lib:
        lib.ingest(small)
    chapters = {f"Chapter {c}": {f"Section {s}": " ".join(
        f"Granite quarry note {c}.{s}.{i}: chisels, wedges and feathers split the stone."
        for i in range(60)) for s in range(5)} for c in range(6)}
    write_markdown_book(tmp_path / "big.md", "Big Quarry Book", chapters)
    return tmp_path


def wait_for_writer(lib: Path, writer: subprocess.Popen[str]) -> None:
    """Until the writer has committed the structure (so it surely holds the writer lock)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert writer.poll() is None, writer.communicate()
        conn = sqlite3.connect(lib / "book.db", timeout=30)
        try:
            if conn.execute("SELECT count(*) FROM books").fetchone()[0] == 2:
                return
        finally:
            conn.close()
        time.sleep(0.05)
    raise AssertionError("the writer never committed its structure")


def test_cli_queries_keep_answering_while_ingest_writes(lib_dir: Path) -> None:
    writer = cli(lib_dir, "ingest", str(lib_dir / "big.md"), "-q")
    wait_for_writer(lib_dir, writer)
    answered = 0
    while writer.poll() is None:
        code, out, err = run(lib_dir, "query", "bowline loop", "--json")
        assert code == 0, err
        assert "locked" not in err.lower() and "Traceback" not in err
        assert json.loads(out)["results"]
        code, out, err = run(lib_dir, "list", "--json")
        assert code == 0 and "locked" not in err.lower(), err
        answered += 1
    assert writer.wait() == 0, writer.communicate()
    assert answered >= 1  # the ingest really ran concurrently with the queries
    code, out, _ = run(lib_dir, "query", "granite quarry chisels", "--json",
                       "--book", "big-quarry-book")
    assert code == 0 and json.loads(out)["results"]


def test_read_only_library_keeps_answering_and_sees_the_new_book(lib_dir: Path) -> None:
    with Library.open(lib_dir / "config.toml", read_only=True) as reader:
        assert reader.search("bowline").hits
        writer = cli(lib_dir, "ingest", str(lib_dir / "big.md"), "-q")
        wait_for_writer(lib_dir, writer)
        searches = 0
        while writer.poll() is None:
            assert reader.search("bowline loop").hits  # never "database is locked"
            reader.list_books()
            reader.status()
            searches += 1
        assert writer.wait() == 0, writer.communicate()
        assert searches > 0
        slugs = {b.slug for b in reader.list_books()}
        assert slugs == {"small-book", "big-quarry-book"}
        hits = reader.search("granite quarry chisels wedges", book="big-quarry-book").hits
        assert hits and all(h.slug == "big-quarry-book" for h in hits)
        big = reader.book("big-quarry-book")
        assert big.status.get("embedded") == big.chunks


@pytest.fixture
def slow_llm(lib_dir: Path) -> Iterator[FakeOllama]:
    """Contexts from a fake Ollama that answers slowly: the writer surely outlives the test's
    second writers (each needs a second or two just to start Python)."""
    with FakeOllama() as server:
        server.set_delay(0.1)
        (lib_dir / "config.toml").write_text(CONFIG.replace(
            'llm_backend = "fake"', f'llm_backend = "ollama"\nollama_host = "{server.host}"'))
        yield server


def test_second_ingest_and_a_delete_are_refused_while_one_writes(
        lib_dir: Path, slow_llm: FakeOllama) -> None:
    other = write_markdown_book(lib_dir / "other.md", "Other Book", {
        "Sails": {"Jib": "The jib is set forward of the mast. " * 20}})
    writer = cli(lib_dir, "ingest", str(lib_dir / "big.md"), "-q")
    wait_for_writer(lib_dir, writer)
    outcomes = []
    for args in (("ingest", str(other), "-q"), ("ingest", str(lib_dir / "big.md"), "-q"),
                 ("delete", "small-book", "--yes"), ("reindex-fts",)):
        code, _, err = run(lib_dir, *args)
        if writer.poll() is not None:
            break  # the first finished meanwhile; the refusal can no longer be tested
        lines = err.strip().splitlines()
        assert code != 0 and len(lines) == 1, err
        assert lines[0].startswith("error: another ingest") and "wait for it" in lines[0]
        outcomes.append(args[0])
    slow_llm.set_delay(0)
    assert writer.wait() == 0, writer.communicate()
    assert len(outcomes) == 4, outcomes
    with Library.open(lib_dir / "config.toml", read_only=True) as lib:
        assert {b.slug for b in lib.list_books()} == {"small-book", "big-quarry-book"}
        integrity = lib.integrity()
        assert integrity.fts_rows == integrity.embedded_chunks
        row = lib.conn.execute("PRAGMA integrity_check").fetchone()
        assert row[0] == "ok"
    # With the writer gone, the refused ingest now just works.
    code, _, err = run(lib_dir, "ingest", str(other), "-q")
    assert code == 0, err


def test_in_process_second_writer_gets_library_busy_error(lib_dir: Path,
                                                          slow_llm: FakeOllama) -> None:
    writer = cli(lib_dir, "ingest", str(lib_dir / "big.md"), "-q")
    wait_for_writer(lib_dir, writer)
    try:
        with Library.open(lib_dir / "config.toml") as lib:
            if writer.poll() is None:
                with pytest.raises(LibraryBusyError, match="another ingest"):
                    lib.delete("small-book")
                assert lib.book("small-book")  # nothing happened
    finally:
        slow_llm.set_delay(0)
        assert writer.wait(timeout=120) == 0
