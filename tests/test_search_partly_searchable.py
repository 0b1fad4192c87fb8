"""A search over a library an ingest left half-done says which books it saw only part of:
their chunks not yet embedded are in neither arm, and the answer said nothing of it (``"note":
null`` after Ctrl-C at 3,776 of 6,724 chunks of a book). Real CLI processes (the ingest
SIGKILLed between two embedding batches), real files and SQLite; the same note reaches
``Library.search``, ``query --json``, the CLI's stderr and MCP's ``search_book``, and goes
once ``ingest`` has finished the book."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from grimoire_beholder.library import Library
from grimoire_beholder.search.engine import partly_searchable_note
from grimoire_beholder.store.hit_queries import Unfinished
from helpers import write_markdown_book
from mcp_helpers import FAKE_CONFIG, connect, structured, text
from resume_helpers import TIDES, json_in, run_in, unfinished

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

NOTE = ("1 book is only partly searchable: tide-tables (8 of 21 chunks); run "
        "`grimoire-beholder ingest` again to finish it")


@pytest.fixture(scope="module")
def half_done(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library whose ingest of a folder was killed after the second embedding batch of
    eight: knots.md complete, tides.md (Tide Tables) embedded 8 of its 21 chunks."""
    lib = tmp_path_factory.mktemp("half-done")
    books = lib / "books"
    books.mkdir()
    write_markdown_book(books / "knots.md", "Knots", {"One": {"Bends": "A sheet bend joins "
                                                                      "two ropes. " * 3}})
    write_markdown_book(books / "tides.md", "Tide Tables", TIDES)
    (lib / "config.toml").write_text(FAKE_CONFIG.replace("chunk_size = 120", "chunk_size = 60")
                                     + "embed_batch_size = 8\n")
    killed = run_in(lib, "ingest", str(books), "-q", kill_at="embeddings.commit:2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [book] = unfinished(lib)
    assert (book["slug"], book["chunks"], book["status"]["embedded"]) == ("tide-tables", 21, 8)
    return lib


async def test_every_surface_names_the_half_done_book_until_it_is_finished(
        half_done: Path) -> None:
    config = half_done / "config.toml"
    with Library.open(config, read_only=True) as lib:
        found = lib.search("tides at the harbour")
        other = lib.search("sheet bend", book="knots")  # the half-done book is not searched
        nothing = lib.search("zzyzx qwvvb")
    assert found.hits and found.note == NOTE
    assert other.hits and other.note is None
    assert nothing.note in (NOTE, f"no match; {NOTE}")

    assert json_in(half_done, "query", "tides at the harbour")["note"] == NOTE
    said = run_in(half_done, "query", "tides at the harbour")
    assert said.returncode == 0 and NOTE in said.stderr.splitlines(), said.stderr

    async with connect(config) as client:
        answer = await client.call_tool("search_book", {"question": "tides at the harbour"})
        only_knots = await client.call_tool("search_book", {"question": "sheet bend",
                                                            "book_id": "knots"})
    assert NOTE in structured(answer)["note"] and NOTE in text(answer).splitlines()
    assert structured(only_knots)["note"] is None

    finished = run_in(half_done, "ingest", str(half_done / "books"), "-q")
    assert finished.returncode == 0, finished.stderr
    assert unfinished(half_done) == []
    with Library.open(config, read_only=True) as lib:
        assert lib.search("tides at the harbour").note is None
    assert json.loads(run_in(half_done, "query", "tides at the harbour",
                             "--json").stdout)["note"] is None
    async with connect(config) as client:
        again = await client.call_tool("search_book", {"question": "tides at the harbour"})
    assert structured(again)["note"] is None and "partly" not in text(again)


def test_many_half_done_books_are_named_three_then_counted() -> None:
    books = [Unfinished(i, f"note-{i}", i, 10 + i) for i in range(1, 6)]
    assert partly_searchable_note(books) == (
        "5 books are only partly searchable: note-1 (1 of 11 chunks), note-2 (2 of 12 "
        "chunks), note-3 (3 of 13 chunks), and 2 more; run `grimoire-beholder ingest` again "
        "to finish them")
    assert partly_searchable_note([]) is None
