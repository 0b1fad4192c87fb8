"""Long crash-safety run: SIGKILL `ingest`, `delete` and `reindex-fts` at many points.

tests/test_crash_safety.py proves each kill point on a fresh library. This file proves the
harder, more realistic thing: one library that is killed again and again — at 24 points
spread over every stage and three formats (Markdown, a PDF made with pymupdf, an EPUB made
with ebooklib) — and whose every intermediate state is consistent (integrity ok, FTS rows =
embedded chunks, no duplicates, no vector without an ``embedded`` chunk). After the final
clean reruns it must equal a library built without interruption, contexts and vectors byte
for byte. Kills during ``delete`` and ``reindex-fts`` leave the book fully there or fully
gone. Several kills share one library (sequentially) so the whole file stays well under a
minute.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from db_state import library_state
from grimoire_beholder.library import Library
from helpers import write_markdown_book

pytestmark = pytest.mark.slow  # SIGKILLs real subprocesses at many points

pytestmark = pytest.mark.slow  # SIGKILLs real subprocesses at many points

pymupdf = pytest.importorskip("pymupdf")
epub = pytest.importorskip("ebooklib.epub")

CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "fake"
chunk_size = 50
chunk_overlap = 8
embed_batch_size = 2
context_concurrency = 2
"""

WORDS = ("harbour", "tide", "beacon", "keel", "rope", "anchor", "gale", "lantern", "chart",
         "compass", "reef", "swell", "mast", "hull", "ballast", "oar", "current", "fathom",
         "buoy", "pier")


def _prose(seed: int, sentences: int) -> str:
    """Deterministic, varied prose so chunks (and their hashes/vectors) differ."""
    out = []
    for i in range(sentences):
        words = [WORDS[(seed * 7 + i * 3 + k) % len(WORDS)] for k in range(9)]
        out.append(f"Sentence {seed}.{i} tells of the {' '.join(words)}.")
    return " ".join(out)


def make_markdown(folder: Path) -> Path:
    chapters = {f"Voyage {c}": {f"Leg {s}": _prose(c * 10 + s, 14) for s in range(3)}
                for c in range(3)}
    return write_markdown_book(folder / "voyages.md", "Book of Voyages", chapters)


def make_pdf(folder: Path) -> Path:
    """A 6-page PDF with a two-level outline: real chapters and sections from pymupdf."""
    doc = pymupdf.open()
    toc: list[list[object]] = []
    for p in range(6):
        page = doc.new_page()
        text = _prose(100 + p, 10)
        y = 72.0
        line: list[str] = []
        for word in text.split():
            line.append(word)
            if len(" ".join(line)) > 80:
                page.insert_text((72, y), " ".join(line), fontsize=10)
                y += 14
                line = []
        if line:
            page.insert_text((72, y), " ".join(line), fontsize=10)
        if p % 2 == 0:
            toc.append([1, f"Harbour chapter {p // 2 + 1}", p + 1])
        toc.append([2, f"Harbour section {p + 1}", p + 1])
    doc.set_toc(toc)
    doc.set_metadata({"title": "Harbour Manual", "author": "Pdf Author"})
    path = folder / "harbour.pdf"
    doc.save(str(path))
    doc.close()
    return path


def make_epub(folder: Path) -> Path:
    """A small EPUB 3 with three chapters in the spine and the nav document."""
    book = epub.EpubBook()
    book.set_identifier("crash-long-epub")
    book.set_title("Lantern Stories")
    book.set_language("en")
    book.add_author("Epub Author")
    items = []
    for c in range(3):
        item = epub.EpubHtml(title=f"Lantern {c}", file_name=f"ch{c}.xhtml", lang="en")
        paras = "".join(f"<p>{_prose(200 + c * 5 + k, 6)}</p>" for k in range(3))
        item.content = f"<html><body><h1>Lantern {c}</h1>{paras}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    path = folder / "lantern.epub"
    epub.write_epub(str(path), book)
    return path


def make_books(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [make_markdown(folder), make_pdf(folder), make_epub(folder)]


def run_cli(lib_dir: Path, *args: str,
            kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    if kill_at:
        env["GRIMOIRE_BEHOLDER_KILL_AT"] = kill_at
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args],
                          cwd=lib_dir, env=env, capture_output=True, text=True, timeout=120)


def assert_consistent(db: Path) -> None:
    """Invariants that must hold after *any* kill, not only after the final rerun."""
    conn = sqlite3.connect(db)
    try:
        q = conn.execute
        assert q("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert q("PRAGMA foreign_key_check").fetchall() == []
        embedded = q("SELECT count(*) FROM chunks WHERE status = 'embedded'").fetchone()[0]
        assert q("SELECT count(*) FROM embeddings").fetchone()[0] == embedded
        assert q("SELECT count(*) FROM chunks_fts").fetchone()[0] == embedded
        assert q("SELECT count(*) FROM chunks_fts_trigram").fetchone()[0] == embedded
        # FTS rowids are exactly the embedded chunks' ids.
        assert q("SELECT count(*) FROM chunks_fts f LEFT JOIN chunks c ON c.id = f.rowid "
                 "WHERE c.id IS NULL OR c.status != 'embedded'").fetchone()[0] == 0
        assert q("SELECT count(*) FROM chunks WHERE status != 'pending' "
                 "AND context IS NULL").fetchone()[0] == 0
        dupes = q("SELECT count(*) FROM (SELECT book_id, chapter_index, section_index, "
                  "chunk_index FROM chunks GROUP BY 1, 2, 3, 4 HAVING count(*) > 1)")
        assert dupes.fetchone()[0] == 0
        assert q("SELECT count(*) FROM (SELECT source_hash FROM books GROUP BY 1 "
                 "HAVING count(*) > 1)").fetchone()[0] == 0
        # A book exists only with its whole structure (never half a book).
        for (book_id,) in q("SELECT id FROM books").fetchall():
            assert q("SELECT count(*) FROM chunks WHERE book_id = ?",
                     (book_id,)).fetchone()[0] > 0
    finally:
        conn.close()


@pytest.fixture(scope="module")
def book_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Generated once: ebooklib stamps the time into an EPUB, so regenerating changes it."""
    return make_books(tmp_path_factory.mktemp("books"))


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory, book_files: list[Path]) -> dict[str, object]:
    """The reference: the same three books ingested without interruption (in-process)."""
    folder = tmp_path_factory.mktemp("clean")
    (folder / "config.toml").write_text(CONFIG)
    with Library.open(folder / "config.toml") as lib:
        for book in book_files:
            report = lib.ingest(book)
            assert report.embedded == report.chunks > 0
    result = library_state(folder / "book.db")
    assert len(result["books"]) == 3  # type: ignore[arg-type]
    return result


# (book index, kill point) in the order they are applied to ONE library. Counters restart in
# each process, so "contexts.commit:2" is the second context committed by that rerun.
KILLS: list[tuple[int, str]] = [
    (0, "structure.before_commit:1"),
    (0, "summaries.before_commit:1"),
    (0, "summaries.commit:1"),
    (0, "summaries.before_commit:2"),
    (0, "summaries.commit:2"),
    (0, "contexts.before_commit:1"),
    (0, "contexts.commit:1"),
    (0, "contexts.before_commit:3"),
    (0, "contexts.commit:2"),
    (0, "embeddings.before_commit:1"),
    (0, "embeddings.commit:1"),
    (0, "embeddings.before_commit:2"),
    (0, "embeddings.commit:2"),
    (1, "structure.before_commit:1"),
    (1, "summaries.commit:1"),
    (1, "contexts.before_commit:2"),
    (1, "contexts.commit:3"),
    (1, "embeddings.before_commit:1"),
    (1, "embeddings.commit:2"),
    (2, "structure.before_commit:1"),
    (2, "summaries.before_commit:1"),
    (2, "contexts.commit:1"),
    (2, "embeddings.before_commit:1"),
    (2, "embeddings.commit:1"),
]


def test_many_kills_in_one_library_then_resume_equals_clean_run(
        tmp_path: Path, clean: dict[str, object], book_files: list[Path]) -> None:
    assert len(KILLS) >= 20
    (tmp_path / "config.toml").write_text(CONFIG)
    books = book_files
    db = tmp_path / "book.db"
    survived = 0
    for index, point in KILLS:
        proc = run_cli(tmp_path, "ingest", str(books[index]), "--quiet", kill_at=point)
        # The point must really be reached, or the kill proves nothing.
        assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr)
        if db.exists():
            assert_consistent(db)
        survived += 1
    for book in books:
        proc = run_cli(tmp_path, "ingest", str(book), "--quiet")
        assert proc.returncode == 0, proc.stderr
    assert_consistent(db)
    assert library_state(db) == clean
    # A further rerun is a no-op: nothing duplicated, nothing redone.
    proc = run_cli(tmp_path, "ingest", str(books[0]), "--quiet", "--json")
    assert proc.returncode == 0 and '"embedded": 0' in proc.stdout
    assert library_state(db) == clean
    assert survived == len(KILLS)


def test_kill_during_delete_and_reindex_is_all_or_nothing(
        tmp_path: Path, clean: dict[str, object], book_files: list[Path]) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    books = book_files
    db = tmp_path / "book.db"
    with Library.open(tmp_path / "config.toml") as lib:
        for book in books:
            lib.ingest(book)
    before = library_state(db)
    assert before == clean

    for slug in ("book-of-voyages", "harbour-manual", "lantern-stories"):
        proc = run_cli(tmp_path, "delete", slug, "--yes", kill_at="delete.before_commit:1")
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        assert_consistent(db)
        assert library_state(db) == before  # fully there

    for args in (("reindex-fts",), ("reindex-fts", "--book", "harbour-manual")):
        proc = run_cli(tmp_path, *args, kill_at="reindex.before_commit:1")
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        assert_consistent(db)
        assert library_state(db) == before
    proc = run_cli(tmp_path, "reindex-fts")
    assert proc.returncode == 0, proc.stderr
    assert library_state(db) == before

    proc = run_cli(tmp_path, "delete", "harbour-manual", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert_consistent(db)
    after = library_state(db)
    assert [b[0] for b in after["books"]] == ["book-of-voyages", "lantern-stories"]  # type: ignore[index]
    for key in ("chapters", "sections", "chunks"):
        rows = [r for r in before[key] if r[0] != "harbour-manual"]  # type: ignore[union-attr]
        assert after[key] == rows  # fully gone, the others untouched
    # The keyword index forgot it too: a search for its words finds only other books.
    proc = run_cli(tmp_path, "query", "Harbour section", "--mode", "keyword", "--json")
    assert proc.returncode == 0 and "harbour-manual" not in proc.stdout
