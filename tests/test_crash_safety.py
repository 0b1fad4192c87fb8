"""Crash safety: SIGKILL a real `ingest` subprocess at chosen points, rerun, compare.

The kill points come from faults.py (``GRIMOIRE_BEHOLDER_KILL_AT``): after a commit,
and inside a transaction before its commit, in every stage. After the rerun the library must
equal one built without interruption: same rows, contexts and vectors byte for byte, no
duplicates, FTS rows = embedded chunks, and ``PRAGMA integrity_check`` = ok.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from db_state import library_state
from helpers import write_markdown_book

pytestmark = pytest.mark.slow  # SIGKILLs real ingest subprocesses

pytestmark = pytest.mark.slow  # SIGKILLs real ingest subprocesses

CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "fake"
chunk_size = 60
chunk_overlap = 10
embed_batch_size = 3
context_concurrency = 2
"""


def _make_books(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    books = []
    for n, topic in enumerate(["rivers", "mountains"]):
        chapters = {
            f"{topic.title()} {c}": {
                f"Part {s}": " ".join(f"{topic} sentence {c}.{s}.{i} about flow and stone."
                                      for i in range(25))
                for s in range(2)
            }
            for c in range(2)
        }
        books.append(write_markdown_book(folder / f"book{n}.md", f"Book of {topic}", chapters))
    return books


def _ingest(lib_dir: Path, book: Path, kill_at: str | None = None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    if kill_at:
        env["GRIMOIRE_BEHOLDER_KILL_AT"] = kill_at
    proc = subprocess.run(
        [sys.executable, "-m", "grimoire_beholder.cli.entry", "ingest", str(book), "--quiet"],
        cwd=lib_dir, env=env, capture_output=True, text=True, timeout=120,
    )
    return proc.returncode


@pytest.fixture(scope="module")
def clean_state(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    lib = tmp_path_factory.mktemp("clean")
    (lib / "config.toml").write_text(CONFIG)
    for book in _make_books(lib / "books"):
        assert _ingest(lib, book) == 0
    state = library_state(lib / "book.db")
    chunks = state["chunks"]
    assert isinstance(chunks, list) and len(chunks) > 20
    assert all(row[6] == "embedded" and row[8] for row in chunks)
    assert state["fts"] == state["trigram"] == len(chunks)
    return state


KILL_POINTS = [
    ("book0", "structure.before_commit:1"),
    ("book0", "summaries.before_commit:2"),
    ("book0", "summaries.commit:3"),
    ("book0", "contexts.before_commit:1"),
    ("book0", "contexts.commit:7"),
    ("book0", "embeddings.before_commit:2"),
    ("book0", "embeddings.commit:3"),
    ("book1", "summaries.commit:1"),
    ("book1", "contexts.before_commit:9"),
    ("book1", "embeddings.before_commit:5"),
]


@pytest.mark.parametrize(("victim", "kill_at"), KILL_POINTS)
def test_kill_and_resume_matches_clean_run(tmp_path: Path, clean_state: dict[str, object],
                                           victim: str, kill_at: str) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    books = _make_books(tmp_path / "books")
    first, second = books
    if victim == "book1":
        assert _ingest(tmp_path, first) == 0
        target = second
    else:
        target = first
    assert _ingest(tmp_path, target, kill_at) == -signal.SIGKILL
    # The killed run left at most the in-flight unit undone; rerun everything to completion.
    for book in books:
        assert _ingest(tmp_path, book) == 0
    assert library_state(tmp_path / "book.db") == clean_state


# Kills while the persisted search index is written (threshold lowered so these small
# libraries get one): during a full build, before the first manifest is published, and
# before a later update (book1's changes folded into book0's index) is published.
INDEX_KILL_POINTS = [
    ("book0", "search_index.build_batch:1"),
    ("book0", "search_index.before_publish:1"),
    ("book1", "search_index.before_publish:1"),
]


def _index_answers_exactly(db: Path) -> bool:
    """Whatever the index folder holds, searches equal FTS5's and the exact scan's; returns
    whether the persisted index was the one answering."""
    from grimoire_beholder.search import keyword
    from grimoire_beholder.search.index import SearchIndex
    from grimoire_beholder.search.vector import VectorIndex
    from grimoire_beholder.store import db as store_db
    from grimoire_beholder.store import hit_queries as store_search

    conn = store_db.connect(db, read_only=True)
    try:
        index, exact = SearchIndex(db), VectorIndex()
        used = index.refresh(conn) == "persisted"
        exact.refresh(conn)
        query = keyword.build_query("rivers stone flow mountains sentence").word
        assert query is not None
        word = index.keyword(conn, query, 10, None) or store_search.word_match(conn, query, 10)
        fts5 = store_search.word_match(conn, query, 10)
        assert [c for c, _ in word] == [c for c, _ in fts5]
        assert np.allclose([s for _, s in word], [s for _, s in fts5], rtol=1e-6)
        probe = np.ones(exact.dimension, dtype=np.float32)
        assert [c for c, _ in index.search(probe, 10)] == [c for c, _ in exact.search(probe, 10)]
        return used
    finally:
        conn.close()


@pytest.mark.parametrize(("victim", "kill_at"), INDEX_KILL_POINTS)
def test_kill_during_index_update_never_leaves_a_wrong_index(
        tmp_path: Path, clean_state: dict[str, object], monkeypatch: pytest.MonkeyPatch,
        victim: str, kill_at: str) -> None:
    from grimoire_beholder.search.index_writer import MIN_ROWS_ENV

    monkeypatch.setenv(MIN_ROWS_ENV, "0")
    (tmp_path / "config.toml").write_text(CONFIG)
    books = _make_books(tmp_path / "books")
    if victim == "book1":
        assert _ingest(tmp_path, books[0]) == 0
    target = books[0] if victim == "book0" else books[1]
    assert _ingest(tmp_path, target, kill_at) == -signal.SIGKILL
    _index_answers_exactly(tmp_path / "book.db")  # old index + log, or the exact arms
    for book in books:
        assert _ingest(tmp_path, book) == 0
    assert library_state(tmp_path / "book.db") == clean_state
    assert _index_answers_exactly(tmp_path / "book.db")  # rebuilt or caught up, and used
