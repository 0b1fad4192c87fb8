"""Folder libraries: ingest DIR, sync (changed/removed/moved/added), dry runs, filters, watch.

Model work is counted from the fake Ollama daemon's request log, so "only the changed chunks
met the models" is checked on the wire, not on our own counters.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_ollama import FakeOllama
from fakes import FakeEmbedder
from grimoire_beholder.cli.entry import app
from grimoire_beholder.config import Config
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.store.db import connect
from grimoire_beholder.store.migrations import SCHEMA_VERSION
from helpers import fake_config, open_with_ollama
from mcp_helpers import write_config
from watch_helpers import watching

WORDS = ["lantern", "harbour", "compass", "orchard", "granite", "meadow", "violin", "copper",
         "thistle", "saffron", "glacier", "beacon"]


def _para(topic: str, n: int = 30) -> str:
    """A paragraph about ``topic`` (about 40 tokens: one chunk at chunk_size 200)."""
    return " ".join(f"{topic} {WORDS[i % len(WORDS)]}" for i in range(n // 2)) + "."


def _write(path: Path, title: str, sections: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = [f"# {title}", ""]
    for heading, text in sections.items():
        body += [f"## {heading}", "", text, ""]
    path.write_text("\n".join(body), encoding="utf-8")
    return path


def _make_folder(root: Path) -> Path:
    _write(root / "ops" / "runbook.md", "Runbook", {
        "Deploys": _para("deploy"), "Rollback": _para("rollback"), "Alerts": _para("alert")})
    _write(root / "ops" / "oncall.md", "On call", {
        "Rota": _para("rota"), "Escalation": _para("escalate")})
    _write(root / "guides" / "setup.md", "Setup", {
        "Install": _para("install"), "Configure": _para("configure")})
    _write(root / "readme.md", "Readme", {"About": _para("about")})
    return root


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as srv:
        yield srv


def _ollama_config(tmp_path: Path, server: FakeOllama) -> Config:
    return fake_config(tmp_path, embedding_backend="ollama", llm_backend="ollama",
                       embedding_model="nomic-embed-text", llm_model="llama3.2:3b",
                       ollama_host=server.host, embed_batch_size=4, chunk_size=200,
                       chunk_overlap=20)


def _model_calls(server: FakeOllama) -> tuple[int, int]:
    """(chunk texts embedded, requests to /api/generate) since the log was cleared.

    Only document inputs count: the embedder's one-off dimension probe is a query.
    """
    embeds = sum(1 for r in server.requests_to("/api/embed") for text in r.body["input"]
                 if text.startswith("search_document: "))
    return embeds, len(server.requests_to("/api/generate"))


def _fake_library(tmp_path: Path, **overrides: Any) -> Library:
    return Library.open(config=fake_config(tmp_path, **overrides), embedder=FakeEmbedder())


def _state(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        rows: list[tuple[object, ...]] = []
        for table in ("books", "sections", "chunks", "embeddings", "folder_roots"):
            rows += [(table, *r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
        return rows
    finally:
        conn.close()


# -- ingest DIR and sync on the Ollama backend ---------------------------------------------

def test_ingest_folder_then_edit_reembeds_only_the_changed_chunk(tmp_path: Path,
                                                                 server: FakeOllama) -> None:
    root = _make_folder(tmp_path / "wiki")
    with open_with_ollama(_ollama_config(tmp_path, server)) as lib:
        report = lib.ingest_folder(root)
        assert report.counts()["added"] == 4 and not report.failed
        chunks = sum(b.chunks for b in lib.list_books())
        assert chunks == 8  # one chunk per section
        assert _model_calls(server) == (8, 8 + 8)  # 8 embeds; 8 summaries + 8 contexts
        groups = {b.slug: (b.source_group, b.source_root) for b in lib.list_books()}
        assert groups["runbook"] == ("ops", str(root.resolve()))
        assert groups["readme"] == ("", str(root.resolve()))
        runbook_id = lib.book("runbook").id

        # edit one paragraph of one file
        text = (root / "ops" / "runbook.md").read_text()
        (root / "ops" / "runbook.md").write_text(
            text.replace(_para("rollback"), "Rollback with the zeppelin lever first. "
                         + _para("rollback")))
        server.clear_log()
        report = lib.sync()
        counts = report.counts()
        assert (counts["changed"], counts["unchanged"]) == (1, 3)
        assert report.embedded == 1 and report.reused == 2
        # one embed input; one summary for the edited section and one chunk context
        assert _model_calls(server) == (1, 2)
        book = lib.book("runbook")
        assert book.id == runbook_id and book.chunks == 3
        assert book.status["embedded"] == 3
        integrity = lib.integrity()
        assert integrity.fts_rows == integrity.embedded_chunks == integrity.vectors
        hit = lib.search("zeppelin lever", mode="keyword").hits[0]
        assert hit.slug == "runbook" and hit.relative_path == "ops/runbook.md"
        assert hit.section == "Runbook › Rollback" and hit.line_start is not None

        # nothing changed: a second sync does no model work at all
        server.clear_log()
        again = lib.sync()
        assert again.counts()["unchanged"] == 4 and server.requests == []


def test_touched_but_identical_file_is_unchanged(tmp_path: Path, server: FakeOllama) -> None:
    root = _make_folder(tmp_path / "wiki")
    with open_with_ollama(_ollama_config(tmp_path, server)) as lib:
        lib.ingest_folder(root)
        target = root / "readme.md"
        os.utime(target, (time.time() + 100, time.time() + 100))
        server.clear_log()
        report = lib.sync()
        assert report.counts()["unchanged"] == 4 and server.requests == []
        assert lib.book("readme").source_mtime == pytest.approx(target.stat().st_mtime)


def test_deleted_file_is_removed_and_gone_from_search(tmp_path: Path,
                                                      server: FakeOllama) -> None:
    root = _make_folder(tmp_path / "wiki")
    with open_with_ollama(_ollama_config(tmp_path, server)) as lib:
        lib.ingest_folder(root)
        assert any(h.slug == "on-call" for h in lib.search("escalate rota").hits)
        (root / "ops" / "oncall.md").unlink()
        server.clear_log()
        report = lib.sync()
        assert report.counts()["removed"] == 1 and server.requests == []
        assert "on-call" not in {b.slug for b in lib.list_books()}
        assert all(h.slug != "on-call" for h in lib.search("escalate rota").hits)


def test_renamed_file_is_moved_without_model_calls(tmp_path: Path, server: FakeOllama) -> None:
    root = _make_folder(tmp_path / "wiki")
    with open_with_ollama(_ollama_config(tmp_path, server)) as lib:
        lib.ingest_folder(root)
        before = lib.book("setup")
        (root / "handbook").mkdir()
        (root / "guides" / "setup.md").rename(root / "handbook" / "install-guide.md")
        server.clear_log()
        report = lib.sync()
        assert report.counts()["moved"] == 1 and report.counts()["removed"] == 0
        assert server.requests == []  # no embed, no generate, not even a model check
        after = lib.book("setup")
        assert after.id == before.id and after.source_group == "handbook"
        assert after.source_path == str((root / "handbook" / "install-guide.md").resolve())
        hit = next(h for h in lib.search("install configure").hits if h.slug == "setup")
        assert hit.relative_path == "handbook/install-guide.md"


def test_dry_run_changes_nothing(tmp_path: Path, server: FakeOllama) -> None:
    root = _make_folder(tmp_path / "wiki")
    config = _ollama_config(tmp_path, server)
    with open_with_ollama(config) as lib:
        lib.ingest_folder(root)
        runbook = root / "ops" / "runbook.md"
        runbook.write_text(runbook.read_text().replace(_para("alert"), "Alerts go to pagers."))
        (root / "readme.md").unlink()
        _write(root / "guides" / "faq.md", "FAQ", {"Why": _para("why"), "How": _para("how")})
        before = _state(config.database_path)
        server.clear_log()
        report = lib.sync(dry_run=True)
        assert _state(config.database_path) == before and server.requests == []
        counts = report.counts()
        assert (counts["changed"], counts["removed"], counts["added"]) == (1, 1, 1)
        by_path = {f.path: f for f in report.files}
        assert by_path["ops/runbook.md"].embedded == 1 and by_path["ops/runbook.md"].reused == 2
        assert by_path["guides/faq.md"].embedded == 2
        assert report.embedded == 3


# -- scanning rules, failures, filters (fake models: fast) ----------------------------------

def test_include_exclude_hidden_and_symlink_loops(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    _write(root / "notes" / "a.md", "Alpha", {"One": _para("alpha")})
    (root / "notes" / "b.txt").write_text(_para("bravo"))
    _write(root / "drafts" / "c.md", "Charlie", {"One": _para("charlie")})
    _write(root / ".hidden" / "d.md", "Delta", {"One": _para("delta")})
    _write(root / ".secret.md", "Echo", {"One": _para("echo")})
    _write(root / "node_modules" / "pkg" / "readme.md", "Pkg", {"One": _para("pkg")})
    (root / "notes" / "image.png").write_bytes(b"\x89PNG\r\n")
    os.symlink(root, root / "notes" / "loop")  # a link back up the tree
    os.symlink(root / "notes" / "a.md", root / "alias.md")  # a second name for a.md
    with _fake_library(tmp_path) as lib:
        report = lib.ingest_folder(root, exclude=("drafts",))
        paths = sorted(f.path for f in report.files)
        assert paths == ["alias.md", "notes/b.txt"] or paths == ["notes/a.md", "notes/b.txt"]
        assert not report.failed
    (tmp_path / "second").mkdir()
    with _fake_library(tmp_path / "second") as lib:
        report = lib.ingest_folder(root, include=("*.md",))
        assert sorted(f.path for f in report.files) in (
            ["alias.md", "drafts/c.md"], ["drafts/c.md", "notes/a.md"])


def test_a_link_to_a_file_outside_the_folder_is_added_by_the_ingest(tmp_path: Path) -> None:
    """`notes/paper.md -> ~/Downloads/paper.md`: `ingest notes` left the linked file out
    without a word, and the next plain `sync` added it; `sync notes` never did."""
    outside = _write(tmp_path / "downloads" / "paper.md", "Paper", {"One": _para("lemur")})
    root = tmp_path / "notes"
    _write(root / "local.md", "Local", {"One": _para("otter")})
    os.symlink(outside, root / "paper.md")
    with _fake_library(tmp_path) as lib:
        report = lib.ingest_folder(root)
        assert sorted(f.path for f in report.files if f.action == "added") == [
            str(outside), "local.md"]
        assert lib.sync().counts()["unchanged"] == 2
        assert lib.sync([str(root)]).counts()["unchanged"] == 2
        _write(outside, "Paper", {"One": _para("lemur"), "Two": _para("tapir")})
        assert lib.sync([str(root / "paper.md")]).counts()["changed"] == 1


def test_per_file_errors_do_not_stop_the_batch(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    (root / "broken.md").write_bytes(bytes(range(256)) * 40)
    (root / "empty.txt").write_text("")
    with _fake_library(tmp_path) as lib:
        report = lib.ingest_folder(root)
        assert report.counts()["added"] == 4
        assert [f.path for f in report.failed] == ["broken.md"]  # empty.txt is skipped
        assert all(f.error for f in report.failed)


def test_cli_folder_ingest_reports_failures_and_exits_nonzero(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    (root / "broken.txt").write_bytes(bytes(range(256)) * 40)
    config = tmp_path / "config.toml"
    config.write_text('db_path = "lib.db"\nembedding_backend = "fake"\nchunk_size = 200\n')
    result = CliRunner().invoke(app, ["ingest", str(root), "--quiet", "--config", str(config)])
    assert result.exit_code == 1
    assert "failed: broken.txt:" in result.output and "added 4" in result.output
    (root / "broken.txt").unlink()
    (root / "readme.md").unlink()
    result = CliRunner().invoke(app, ["sync", "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert '"removed": 1' in result.output
    result = CliRunner().invoke(app, ["query", "deploy rollback", "--group", "ops",
                                      "--config", str(config)])
    assert result.exit_code == 0
    assert "ops/runbook.md:" in result.output and "Runbook › " in result.output


def test_group_and_path_prefix_filters(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    with _fake_library(tmp_path) as lib:
        lib.ingest_folder(root)
        hits = lib.search("install deploy rota about", top_k=20, group="ops").hits
        assert hits and {h.slug for h in hits} <= {"runbook", "on-call"}
        hits = lib.search("install deploy rota about", top_k=20, group="").hits
        assert {h.slug for h in hits} == {"readme"}
        hits = lib.search("install deploy", top_k=20, path_prefix="guides/").hits
        assert {h.slug for h in hits} == {"setup"}
        absolute = str((root / "ops").resolve()) + os.sep
        hits = lib.search("deploy rota", top_k=20, path_prefix=absolute).hits
        assert hits and {h.slug for h in hits} <= {"runbook", "on-call"}
        with pytest.raises(GrimoireError, match="no book's path starts with 'nowhere/'"):
            lib.search("deploy", path_prefix="nowhere/")  # tests/test_filter_misses.py
        result = lib.search("deploy", group="ops", path_prefix="guides/")
        assert not result.hits and result.note == "no book matches the filters"


def test_new_file_under_a_synced_root_is_added(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    with _fake_library(tmp_path) as lib:
        lib.ingest_folder(root)
        _write(root / "ops" / "readme.md", "Readme", {"Ops": _para("opsreadme")})
        report = lib.sync([root / "ops"])
        assert report.counts()["added"] == 1
        slugs = {b.slug for b in lib.list_books()}
        assert "ops-readme" in slugs and "readme" in slugs  # a repeated title gets its group


def test_sync_narrows_to_a_file_and_refuses_paths_the_library_does_not_know(
        tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with _fake_library(tmp_path) as lib:
        lib.ingest_folder(root)
        _write(root / "readme.md", "Readme", {"About": _para("changed")})
        _write(root / "guides" / "setup.md", "Setup", {"Install": _para("changed")})
        report = lib.sync([root / "readme.md"])
        assert [(f.action, f.path) for f in report.files] == [("changed", "readme.md")]
        before = _state(lib.config.database_path)
        for bad in (elsewhere, tmp_path / "nope"):
            with pytest.raises(GrimoireError, match=r"nothing in the library|no such file"):
                lib.sync([bad])
        for typo in (root / "readme.mdd", root / "guidez"):  # inside the folder, nothing there
            with pytest.raises(GrimoireError, match=r"no such file or folder"):
                lib.sync([typo])
        assert _state(lib.config.database_path) == before
    config = write_config(tmp_path)  # the same library, for the CLI
    result = CliRunner().invoke(app, ["sync", str(elsewhere), "--config", str(config)])
    assert result.exit_code == 1 and result.stderr.startswith("error: ")
    assert str(root.resolve()) in result.stderr


def test_missing_root_keeps_its_books(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    with _fake_library(tmp_path) as lib:
        lib.ingest_folder(root)
        root.rename(tmp_path / "unplugged")
        report = lib.sync()
        assert report.counts()["removed"] == 0 and report.warnings
        assert len(lib.list_books()) == 4


def test_schema_v1_library_is_migrated(tmp_path: Path) -> None:
    from grimoire_beholder.store.migrations import MIGRATIONS

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    MIGRATIONS[0](conn)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    migrated = connect(db)
    try:
        assert migrated.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
        columns = {r[1] for r in migrated.execute("PRAGMA table_info(books)")}
        assert {"source_root", "source_group"} <= columns
    finally:
        migrated.close()


# -- watch ----------------------------------------------------------------------------------

@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_watch_picks_up_a_new_file(tmp_path: Path) -> None:
    root = _make_folder(tmp_path / "wiki")
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
    with watching(config) as watch:
        _write(root / "guides" / "faq.md", "FAQ", {"Why": _para("whyfaq")})
        assert watch.has("faq", seconds=20), (watch.errors, watch.reports)
    assert any(r.counts()["added"] == 1 for r in watch.reports[1:])
