"""A library in a real PostgreSQL server, through the Python API and the MCP tools: the same
books, outlines, sections and search results as the same files in SQLite; migrations keyed by
a schema version; the folder and upkeep commands are in test_postgres_folders.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.errors import GrimoireError, StorageError
from grimoire_beholder.library import Library
from grimoire_beholder.store import chunk_progress
from grimoire_beholder.store.postgres import pg_schema
from helpers import GARDEN_CHAPTERS, fake_config, write_markdown_book

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server

# the last: two tokens of one stem each (roll/rolling, host/hosts), which FTS5 scores once per
# token, so BM25 on PostgreSQL must count such a term twice as well
QUERIES = ["compost heap microbes", "how do I water tomatoes", "pruning roses in winter",
           "soil", "kitchen scraps humus", "rolling roll back a host hosts"]
RUNBOOK = {"Deploys": {"Rollout": "Roll the release out to one canary host first, watch the "
                                  "error rate, then the rest of the fleet. " * 4,
                       "Rollback": "Rolling back means redeploying the previous tag; never "
                                   "patch a host by hand during an incident. " * 4},
           "Index": {"Index": "canary, 1\n\nerror rate, 1\n\nfleet, 1\n\nhost, 1, 2\n\n"
                              "incident, 2\n\nrelease, 1\n\nrollback, 2\n\ntag, 2"}}


@pytest.fixture
def twins(tmp_path: Path, pg_url: str) -> Iterator[tuple[Library, Library]]:
    """The same two books in a SQLite library and in a PostgreSQL one."""
    books = [write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS),
             write_markdown_book(tmp_path / "runbook.md", "Runbook", RUNBOOK)]
    local = Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder())
    server = Library.open(config=fake_config(tmp_path, db_path=pg_url), embedder=FakeEmbedder())
    try:
        for book in books:
            local.ingest(book)
            server.ingest(book)
        yield local, server
    finally:
        local.close()
        server.close()


def _hits(lib: Library, query: str, mode: str) -> list[tuple[object, ...]]:
    found = lib.search(query, top_k=8, mode=mode)
    return [(h.slug, h.chapter_index, h.section_index, h.text, round(h.score, 6))
            for h in found.hits]


def test_the_same_books_and_the_same_answers_as_sqlite(twins: tuple[Library, Library]) -> None:
    local, server = twins
    assert server.server is not None and local.server is None
    fields = ("slug", "name", "author", "source_type", "chapters", "sections", "chunks",
              "status", "roles")
    assert [[getattr(b, f) for f in fields] for b in server.list_books()] == [
        [getattr(b, f) for f in fields] for b in local.list_books()]
    assert server.outline("the-garden-book").chapters == local.outline(
        "the-garden-book").chapters
    assert server.section("runbook", 0, 1).text == local.section("runbook", 0, 1).text
    for query in QUERIES:
        for mode in ("keyword", "vector", "hybrid"):  # BM25 from FTS5's terms: same scores
            assert _hits(server, query, mode) == _hits(local, query, mode), (query, mode)
    quoted = server.verify_quote("Turn the heap weekly so air reaches the microbes")
    assert quoted.to_dict() == local.verify_quote(
        "Turn the heap weekly so air reaches the microbes").to_dict()
    # what the embed stage reads of each chunk, its section's role and its book's kind of
    # file among it (pipeline.embedding_texts), comes out of both engines alike
    waiting = [[(w.book_id, w.section_id, w.text, w.context, w.content_hash, w.role,
                 w.source_type) for w in chunk_progress.pending_chunks(lib.store, None,
                                                                       "embedded")]
               for lib in (server, local)]
    assert waiting[0] == waiting[1]
    assert {(w[5], w[6]) for w in waiting[0]} == {("body", "markdown"), ("index", "markdown")}
    narrowed = server.search("host", book="runbook", mode="hybrid").hits
    assert narrowed and {h.slug for h in narrowed} == {"runbook"}
    assert server.server is not None  # the graph is built with the library's own options
    (options,) = server.server.execute_one(
        "SELECT reloptions FROM pg_class WHERE relname = 'embeddings_hnsw'")
    assert set(options) == {f"m={pg_schema.HNSW_M}",
                            f"ef_construction={pg_schema.HNSW_EF_CONSTRUCTION}"}


def test_delete_leaves_nothing_of_the_book(twins: tuple[Library, Library]) -> None:
    _, server = twins
    garden = server.book("the-garden-book")
    server.delete("the-garden-book")
    assert [b.slug for b in server.list_books()] == ["runbook"]
    assert server.check().ok, server.check().problems
    assert server.search("compost heap", mode="keyword").hits == []
    server.delete("runbook")
    assert server.list_books() == [] and server.status().to_dict()["embedding_model"]
    with pytest.raises(GrimoireError, match="no book has id"):
        server.book(garden.id)


def test_schema_versions_and_missing_libraries(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    config = fake_config(tmp_path, db_path=pg_url)
    with pytest.raises(StorageError, match="no library in the PostgreSQL database"):
        Library.open(config=config, read_only=True)

    with psycopg.connect(pg_url, autocommit=True) as conn:  # a library of version 1
        for statement in pg_schema.MIGRATIONS[0]:
            conn.execute(statement)  # type: ignore[arg-type]
        conn.execute("INSERT INTO library_meta VALUES ('schema_version', '1')")
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:  # to the newest
        assert lib.list_books() == [] and lib.sync().files == []
    with psycopg.connect(pg_url, autocommit=True) as conn:
        version = conn.execute("SELECT value FROM library_meta "
                               "WHERE key = 'schema_version'").fetchone()
        assert version == (str(pg_schema.SCHEMA_VERSION),) == ("3",)
        assert conn.execute("SELECT to_regclass('folder_roots') IS NOT NULL").fetchone() == (
            True,)
        conn.execute("UPDATE library_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="newer than this program"):
        Library.open(config=config)


@pytest.mark.anyio
async def test_the_mcp_reading_tools_on_postgresql(twins: tuple[Library, Library]) -> None:
    from mcp_helpers import call, connect, structured

    _, server = twins
    async with connect(Path("unused"), open_lib=lambda: server) as client:
        books = structured(await call(client, "list_books"))
        assert sorted(b["slug"] for b in books["books"]) == ["runbook", "the-garden-book"]
        found = structured(await call(client, "search_book", question="canary host error rate"))
        assert found["results"][0]["slug"] == "runbook"
        outline = structured(await call(client, "get_book_outline", book_id="runbook"))
        assert outline["chapters"][0]["title"] == "Deploys"
        section = structured(await call(client, "get_section", book_id="runbook",
                                        chapter_index=0, section_index=1))
        assert "previous tag" in section["text"]
        quote = structured(await call(client, "verify_quote",
                                      quote="never patch a host by hand"))
        assert quote["found"]
        status = structured(await call(client, "book_status"))
        assert {b["slug"] for b in status["books"]} == {"runbook", "the-garden-book"}
