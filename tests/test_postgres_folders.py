"""Folder libraries, printed indexes, health and upkeep on a library in a real PostgreSQL
server, side by side with the same files in a SQLite library: ``ingest DIR``, an edited, a
deleted and a new file synced, ``unfollow``, ``resume``, ``reindex-fts``, ``lookup``,
``health``, and the MCP upkeep tools through a real in-memory client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from books_gen import KEEPER_PAGES, KEEPER_TOC, html_pdf
from fakes import FakeEmbedder
from grimoire_beholder.errors import GrimoireError, LibraryBusyError
from grimoire_beholder.library import Library
from grimoire_beholder.views import SyncReport
from helpers import fake_config, write_markdown_book
from mcp_helpers import write_wiki

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server

INDEX_PAGE = "<h1>Index</h1>" + "".join(f"<p>{line}</p>" for line in (
    "chamois leather, 1", "fog, 2", "lens, 1, 3", "wick, i, 1", "beacon, see lamp"))
NEW_ROLLBACK = ("Rolling back now means pinning the previous image digest in the fleet "
                "manifest; the zeppelin dashboard shows when every host has it. ") * 4


def _wiki(base: Path) -> Path:
    wiki = write_wiki(base / "wiki")
    html_pdf(wiki / "keeper.pdf", [*KEEPER_PAGES, INDEX_PAGE], [*KEEPER_TOC, [1, "Index", 5]])
    return wiki


@pytest.fixture
def twins(tmp_path: Path, pg_url: str) -> Iterator[tuple[Library, Library, Path]]:
    """A SQLite library and a PostgreSQL one, both empty, and a folder of four books."""
    wiki = _wiki(tmp_path)
    local = Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder())
    server = Library.open(config=fake_config(tmp_path, db_path=pg_url), embedder=FakeEmbedder())
    try:
        yield local, server, wiki
    finally:
        local.close()
        server.close()


def _files(report: SyncReport) -> list[tuple[Any, ...]]:
    return sorted((f.action, f.path, f.slug, f.chunks, f.reused) for f in report.files)


def _books(lib: Library) -> list[tuple[Any, ...]]:
    return [(b.slug, b.source_group, b.chunks, b.status["embedded"], b.source_root is not None)
            for b in lib.list_books()]


def _hits(lib: Library, query: str) -> list[tuple[Any, ...]]:
    return [(h.slug, h.chapter_index, h.section_index, h.text, round(h.score, 6))
            for h in lib.search(query, top_k=6).hits]


def test_a_folder_ingested_edited_and_synced_as_on_sqlite(
        twins: tuple[Library, Library, Path]) -> None:
    local, server, wiki = twins
    first = [lib.ingest_folder(wiki) for lib in (local, server)]
    assert _files(first[1]) == _files(first[0])
    assert [f.action for f in first[1].files] == ["added"] * 4
    assert _books(server) == _books(local)
    assert _hits(server, "canary host error rate") == _hits(local, "canary host error rate")

    runbook = wiki / "ops" / "runbook.md"
    text = runbook.read_text(encoding="utf-8")
    runbook.write_text(text[:text.index("Rolling back")] + NEW_ROLLBACK + "\n",
                       encoding="utf-8")
    (wiki / "garden.md").unlink()
    write_markdown_book(wiki / "ops" / "pasta.md", "Pasta", {
        "Dough": {"Rolling": "Roll the pasta sheet thin enough to read a newspaper "
                             "through it. " * 5}})
    dry = server.sync(dry_run=True)
    assert sorted((f.action, f.path) for f in dry.files if f.action != "unchanged") == [
        ("added", "ops/pasta.md"), ("changed", "ops/runbook.md"), ("removed", "garden.md")]
    synced = [lib.sync() for lib in (local, server)]
    assert _files(synced[1]) == _files(synced[0])
    changed = next(f for f in synced[1].files if f.action == "changed")
    assert 0 < changed.reused < changed.chunks  # the unchanged rollout kept its vectors
    assert synced[1].reused == synced[0].reused and synced[1].embedded == synced[0].embedded
    assert _books(server) == _books(local)
    assert [b.slug for b in server.list_books()] == ["bread-at-home", "keeper", "pasta",
                                                     "runbook"]
    for query in ("zeppelin dashboard image digest", "compost heap", "pasta sheet thin"):
        assert _hits(server, query) == _hits(local, query), query
    assert server.search("zeppelin dashboard", mode="keyword").hits[0].slug == "runbook"
    assert server.check().ok, server.check().problems
    assert all(f.action == "unchanged" for f in server.sync().files)

    # a book deleted from a synced folder stays out of later syncs, as on SQLite
    server.delete("bread-at-home")
    assert "bread-at-home" not in {b.slug for b in server.list_books()}
    assert server.sync().files and "bread-at-home" not in {b.slug for b in server.list_books()}
    server.ingest(wiki / "bread.md")  # by name: back, and followed again
    assert server.sync().files and server.book("bread-at-home").source_group == ""
    assert server.book("bread-at-home").source_root == str(wiki.resolve())

    real, kept = server.unfollow(wiki)
    assert real == str(wiki.resolve()) and len(kept) == 4
    write_markdown_book(wiki / "late.md", "Late Arrival", {"A": {"B": "late words " * 20}})
    assert not any(f.action == "added" for f in server.sync().files)
    assert {b.source_root for b in server.list_books()} == {None}


def test_printed_index_health_resume_and_reindex_as_on_sqlite(
        twins: tuple[Library, Library, Path], pg_url: str) -> None:
    local, server, wiki = twins
    for lib in (local, server):
        lib.ingest(wiki / "keeper.pdf")
        lib.ingest(wiki / "ops" / "runbook.md")
    for term in ("Lens", "wick", "beacon", "lam"):
        assert [t.to_dict() for t in server.lookup(term)] == [
            t.to_dict() for t in local.lookup(term)], term
    assert server.lookup("lens")[0].locators[0].sections

    def timeless(summary: dict[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (summary or {}).items() if k != "checked_at"}

    health = [[timeless(r.summary()) for r in lib.health()] for lib in (local, server)]
    assert health[1] == health[0] and health[1][0]["probed"] > 0
    saved = [timeless(b["health"]) for b in server.status().to_dict()["books"]]
    assert saved == health[1]  # kept for book_status

    # a book whose stages were cut short (its vectors and contexts lost) is finished
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM embeddings WHERE book_id = (SELECT id FROM books "
                     "WHERE slug = 'runbook')")
        conn.execute("DELETE FROM chunk_terms WHERE book_id = (SELECT id FROM books "
                     "WHERE slug = 'runbook')")
        conn.execute("UPDATE chunks SET status = 'pending', context = NULL WHERE book_id = "
                     "(SELECT id FROM books WHERE slug = 'runbook')")
    done = server.resume()
    assert done.embedded == server.book("runbook").chunks > 0
    assert _hits(server, "canary host") == _hits(local, "canary host")

    assert server.reindex_fts() == local.reindex_fts() > 0
    assert server.reindex_fts("runbook") == local.reindex_fts("runbook")
    assert _hits(server, "rolling back previous tag") == _hits(local, "rolling back previous tag")
    assert server.check().ok, server.check().problems


def test_two_folder_syncs_at_once_the_second_is_told_to_wait(
        twins: tuple[Library, Library, Path], pg_url: str) -> None:
    _, server, wiki = twins
    server.ingest_folder(wiki / "ops")
    other = Library.open(config=server.config, embedder=FakeEmbedder())
    try:
        holder = other.store
        from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

        assert isinstance(holder, PostgresEngine)
        with holder.book_lock("sync", "folders", wait=False):
            with pytest.raises(LibraryBusyError, match="another folder ingest or sync"):
                server.sync()
            server.ingest(wiki / "garden.md")  # one file by name goes on meanwhile
        runbook = server.book("runbook").source_hash
        with holder.book_lock("file", runbook, wait=False), pytest.raises(
                LibraryBusyError) as busy:
            server.delete("runbook")  # at once, as on SQLite: no silent wait
        # the book by its name and file, as the user knows it: never the hash locked
        assert "another process is writing 'Runbook' (runbook.md)" in str(busy.value)
        assert runbook not in str(busy.value)
        garden = wiki / "garden.md"
        with holder.book_lock("file", server.book("the-garden-book").source_hash,
                              wait=False), pytest.raises(LibraryBusyError) as busy:
            server.ingest(garden, force=True)
        assert f"another process is writing {garden} in " in str(busy.value)
    finally:
        other.close()
    assert {b.slug for b in server.list_books()} == {"runbook", "the-garden-book"}
    # text holding NUL (which PostgreSQL refuses as a parameter) names nothing, in one line
    with pytest.raises(GrimoireError, match="no book"):
        server.book("run\x00book")
    assert server.lookup("le\x00ns") == []
    with pytest.raises(GrimoireError, match="tag"):
        server.search("canary", tag="se\x00a")


@pytest.mark.anyio
async def test_the_mcp_upkeep_tools_on_postgresql(
        twins: tuple[Library, Library, Path]) -> None:
    from grimoire_beholder.mcp_server.allowed import AllowedFolders, Upkeep
    from mcp_helpers import call, connect, structured

    _, server, wiki = twins
    config = server.config
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([wiki]), remove=True)

    def open_reader() -> Library:
        return Library.open(config=config, read_only=True, embedder=FakeEmbedder())

    async with connect(Path("unused"), open_lib=open_reader, upkeep=upkeep) as client:
        added = structured(await call(client, "add_book", path=str(wiki / "ops")))
        assert added["counts"]["added"] == 1
        found = structured(await call(client, "search_book", question="canary host"))
        assert found["results"][0]["slug"] == "runbook"
        (wiki / "ops" / "runbook.md").write_text(
            "# Deploys\n\n## Rollout\n\n" + NEW_ROLLBACK, encoding="utf-8")
        synced = structured(await call(client, "sync_library"))
        assert synced["counts"]["changed"] == 1
        found = structured(await call(client, "search_book", question="zeppelin dashboard"))
        assert found["results"][0]["slug"] == "runbook"
        one = structured(await call(client, "add_book", path=str(wiki / "garden.md")))
        assert one["counts"]["added"] == 1
        removed = structured(await call(client, "remove_book", book_id="the-garden-book"))
        assert removed["slug"] == "the-garden-book"
        books = structured(await call(client, "list_books"))
        assert books["count"] == 1 and books["books"] == []  # runbook: in its folder
        assert len(books["folders"]) == 1
        looked = structured(await call(client, "lookup_index", term="lens"))
        assert looked["entries"] == []  # no book with a printed index here
    assert server.check().ok


def test_a_calibre_library_followed_as_on_sqlite(
        twins: tuple[Library, Library, Path], tmp_path: Path) -> None:
    """The fixture Calibre library the SQLite tests use (made by calibredb): its books with
    their labels, links and metadata, the label filters, then Calibre's edits synced."""
    import shutil

    local, server, _ = twins
    data = Path(__file__).parent / "data" / "calibre"
    folder = tmp_path / "Calibre Library"
    shutil.copytree(data / "before", folder)

    def books(lib: Library) -> list[tuple[Any, ...]]:
        return [(b.slug, b.name, b.author, b.tags, b.collections, b.series, b.link,
                 b.metadata, b.chunks) for b in lib.list_books()]

    first = [lib.ingest_folder(folder) for lib in (local, server)]
    assert _files(first[1]) == _files(first[0]) and len(server.list_books()) == 3
    assert books(server) == books(local)
    tides = server.book("tide-tables-of-the-north")
    assert (tides.tags, tides.series) == (["navigation", "sea"], "Coastal Guides")
    for labels in ({"tag": "SEA"}, {"series": "coastal guides"}, {"tag": "garden"}):
        found = [[h.slug for h in lib.search("tide lamp", **labels).hits]
                 for lib in (local, server)]
        assert found[1] == found[0] and found[1], labels

    shutil.rmtree(folder)
    shutil.copytree(data / "after", folder)  # retitled book 1, removed book 2
    synced = [lib.sync() for lib in (local, server)]
    assert _files(synced[1]) == _files(synced[0])
    assert sorted(f.action for f in synced[1].files) == [  # skipped: a MOBI-only item
        "removed", "skipped", "unchanged", "updated"]
    assert books(server) == books(local)
    assert server.search("neap tide", mode="keyword").hits[0].book == (
        "Tide Tables of the Far North")
    server.delete("orchard-pruning")  # an item deleted stays out of its library's sync
    assert not any(f.action == "added" for f in server.sync().files)
    assert server.check().ok


def test_a_file_ingested_by_name_while_a_sync_plans_is_not_added_twice(
        twins: tuple[Library, Library, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """x-pg2 F1: another process ingests a new file of a followed folder after the sync
    planned to add it: the sync finds the book there (it wrote a second one, '-2')."""
    from grimoire_beholder.ingest import sync as sync_module

    _, server, wiki = twins
    server.ingest_folder(wiki / "ops")
    new = write_markdown_book(wiki / "ops" / "fresh.md", "Fresh Notes",
                              {"Tides": {"Neap": "Neap tides follow the half moon. " * 20}})
    planned = sync_module.plan

    def plan_then_other_ingests(*args: Any, **kwargs: Any) -> Any:
        steps = planned(*args, **kwargs)
        other = Library.open(config=server.config, embedder=FakeEmbedder())
        try:
            other.ingest(new)
        finally:
            other.close()
        return steps

    monkeypatch.setattr(sync_module, "plan", plan_then_other_ingests)
    report = server.sync()
    assert [f.action for f in report.files if f.path == "fresh.md"] == ["unchanged"]
    assert [b.slug for b in server.list_books() if b.source_path == str(new)] == [
        "fresh-notes"]
    assert server.check().ok


def test_a_changed_file_replaced_by_name_while_a_sync_plans_is_left_as_replaced(
        twins: tuple[Library, Library, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """x-pg2 F2: another process's ``ingest --force`` re-cut a changed file's book in place
    after the sync planned to update it: the sync finds it up to date (it once wrote the old
    one back beside it, or failed with 'SlugConflictError: … use --name')."""
    from grimoire_beholder.ingest import sync as sync_module

    _, server, wiki = twins
    server.ingest_folder(wiki / "ops")
    runbook = wiki / "ops" / "runbook.md"
    runbook.write_text("# Deploys\n\n## Rollout\n\n" + NEW_ROLLBACK, encoding="utf-8")
    planned = sync_module.plan

    def plan_then_other_replaces(*args: Any, **kwargs: Any) -> Any:
        steps = planned(*args, **kwargs)
        other = Library.open(config=server.config, embedder=FakeEmbedder())
        try:
            other.ingest(runbook, force=True)
        finally:
            other.close()
        return steps

    monkeypatch.setattr(sync_module, "plan", plan_then_other_replaces)
    report = server.sync()
    assert [f.action for f in report.files] == ["unchanged"]
    assert [b.slug for b in server.list_books()] == ["runbook"]  # a folder's book keeps it
    assert server.check().ok


def test_a_book_deleted_while_a_sync_plans_to_update_it_stays_deleted(
        twins: tuple[Library, Library, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """x-pg2 F4: another process deleted a changed file's book after the sync planned to
    update it: the delete stands (the sync wrote the book back under the deleted id)."""
    from grimoire_beholder.ingest import sync as sync_module

    _, server, wiki = twins
    server.ingest_folder(wiki / "ops")
    (wiki / "ops" / "runbook.md").write_text("# Deploys\n\n## Rollout\n\n" + NEW_ROLLBACK,
                                             encoding="utf-8")
    planned = sync_module.plan

    def plan_then_other_deletes(*args: Any, **kwargs: Any) -> Any:
        steps = planned(*args, **kwargs)
        other = Library.open(config=server.config, embedder=FakeEmbedder())
        try:
            other.delete("runbook")
        finally:
            other.close()
        return steps

    monkeypatch.setattr(sync_module, "plan", plan_then_other_deletes)
    report = server.sync()
    assert [f.action for f in report.files] == ["skipped"]
    assert server.list_books() == []
    monkeypatch.setattr(sync_module, "plan", planned)
    assert server.sync().files == []  # left out from now on, as after any delete
    assert server.check().ok
