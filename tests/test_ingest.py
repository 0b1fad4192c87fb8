"""Ingest end to end on real files and a real SQLite library (fake models)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fakes import FakeEmbedder, FakeGenerator
from grimoire_beholder.errors import (
    EmbeddingMismatchError,
    InputFileError,
    LibraryBusyError,
    SlugConflictError,
)
from grimoire_beholder.ingest.lock import writer_lock
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book


def _snapshot(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        rows: list[tuple[object, ...]] = []
        for table in ("books", "chapters", "sections", "chunks", "embeddings"):
            rows += [(table, *r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
        return rows
    finally:
        conn.close()


def test_ingest_builds_structure_and_embeds(library: Library, sample_book: Path) -> None:
    report = library.ingest(sample_book)
    assert report.created and report.slug == "the-garden-book"
    assert (report.chapters, report.sections) == (2, 4)
    assert report.embedded == report.chunks > 4  # sections are longer than one chunk
    (book,) = library.list_books()
    assert book.author == "Test Author" and book.source_type == "markdown"
    assert book.status == {"pending": 0, "contextualized": 0, "embedded": report.chunks}
    outline = library.outline("the-garden-book")
    assert [c.title for c in outline.chapters] == ["Soil", "Pests"]
    assert [s.title for s in outline.chapters[1].sections] == ["Aphids", "Slugs"]
    section = library.section(book.id, 1, 1)
    assert section.breadcrumb == "Pests › Slugs" and "copper tape" in section.text
    assert section.summary and section.line_start is not None
    integrity = library.integrity()
    assert integrity.integrity_check == "ok"
    assert integrity.fts_rows == integrity.embedded_chunks == integrity.vectors


def test_contexts_are_scoped_to_the_section(garden_library: Library) -> None:
    rows = garden_library.conn.execute(
        "SELECT s.title, c.context FROM chunks c JOIN sections s ON s.id = c.section_id"
    ).fetchall()
    for title, context in rows:
        assert context.startswith("The Garden Book › ") and title in context


def test_vectors_are_little_endian_float32_with_stamp(garden_library: Library) -> None:
    blob, = garden_library.conn.execute("SELECT vector FROM embeddings LIMIT 1").fetchone()
    vec = np.frombuffer(blob, dtype="<f4")
    assert vec.shape == (64,) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5
    assert garden_library.status().to_dict()["embedding_stamp"] == {
        "identity": "fake:fake-embedder", "dimension": 64}


def test_reingest_same_file_is_idempotent(library: Library, sample_book: Path) -> None:
    library.ingest(sample_book)
    before = _snapshot(library.config.database_path)
    again = library.ingest(sample_book)
    assert not again.created and again.embedded == 0
    assert _snapshot(library.config.database_path) == before


def test_different_file_same_slug_needs_force(library: Library, tmp_path: Path,
                                              sample_book: Path) -> None:
    library.ingest(sample_book)
    other = write_markdown_book(tmp_path / "other.md", "The Garden Book",
                                {"Trees": {"Oaks": "Oaks live for centuries. " * 30}})
    before = _snapshot(library.config.database_path)
    with pytest.raises(SlugConflictError, match="--force"):
        library.ingest(other)
    assert _snapshot(library.config.database_path) == before
    report = library.ingest(other, force=True)
    assert report.replaced and report.warnings == [
        f"replaced 'the-garden-book' (id 1), the book of {sample_book.resolve()}, which held "
        "that slug"]  # never silently
    (book,) = library.list_books()
    assert book.source_path == str(other.resolve()) and book.chapters == 1


def test_force_recut_never_takes_another_books_slug(library: Library, tmp_path: Path,
                                                    sample_book: Path) -> None:
    """``ingest --force --name SLUG`` of a file with its own book, SLUG another file's book:
    the re-cut is refused naming the clash (that other book was once deleted silently)."""
    library.ingest(sample_book)
    other = write_markdown_book(tmp_path / "other.md", "Orchard",
                                {"Trees": {"Oaks": "Oaks live for centuries. " * 30}})
    library.ingest(other)
    before = _snapshot(library.config.database_path)
    with pytest.raises(SlugConflictError, match=f"'the-garden-book' is taken by another "
                       f"book, of {sample_book.resolve()}.*'orchard'"):
        library.ingest(other, name="The Garden Book", force=True)
    assert _snapshot(library.config.database_path) == before


def test_name_option_sets_display_name_and_slug(library: Library, sample_book: Path) -> None:
    report = library.ingest(sample_book, name="My Garden Notes")
    assert (report.slug, report.name) == ("my-garden-notes", "My Garden Notes")


@pytest.mark.parametrize("make", [
    lambda d: d / "missing.md",
    lambda d: d,
    lambda d: _write(d / "empty.md", b""),
    lambda d: _write(d / "book.docx", b"PK\x03\x04 not supported"),
    lambda d: _write(d / "junk.txt", bytes(range(256)) * 40),
    lambda d: _write(d / "broken.pdf", b"%PDF-1.7\n garbage garbage"),
    lambda d: _write(d / "broken.epub", b"PK\x03\x04 truncated zip"),
])
def test_bad_input_leaves_library_unchanged(garden_library: Library, tmp_path: Path,
                                            make: object) -> None:
    before = _snapshot(garden_library.config.database_path)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    with pytest.raises(InputFileError) as info:
        garden_library.ingest(make(bad_dir))  # type: ignore[operator]
    message = str(info.value)
    assert "\n" not in message and len(message) < 300
    assert _snapshot(garden_library.config.database_path) == before


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_embedding_model_change_is_refused(tmp_path: Path, sample_book: Path) -> None:
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
    other = write_markdown_book(tmp_path / "b.md", "Second", {"A": {"B": "words " * 50}})
    with Library.open(config=config, embedder=FakeEmbedder(dimension=32, name="other")) as lib:
        with pytest.raises(EmbeddingMismatchError, match="new file"):
            lib.ingest(other)
        assert len(lib.list_books()) == 1


def test_llm_contexts_use_the_generator(tmp_path: Path, sample_book: Path) -> None:
    generator = FakeGenerator()
    config = fake_config(tmp_path, llm_backend="fake")
    with Library.open(config=config, embedder=FakeEmbedder(), generator=generator) as lib:
        report = lib.ingest(sample_book)
    assert report.summaries == 4 and report.contexts == report.chunks
    assert len(generator.prompts) == report.summaries + report.contexts


def test_delete_removes_everything(library: Library, sample_book: Path, tmp_path: Path) -> None:
    library.ingest(sample_book)
    other = write_markdown_book(tmp_path / "b.md", "Second", {"A": {"B": "words " * 50}})
    library.ingest(other)
    library.delete("the-garden-book")
    assert [b.slug for b in library.list_books()] == ["second"]
    left = library.integrity()
    assert left.fts_rows == left.embedded_chunks == left.vectors
    assert library.conn.execute(
        "SELECT count(*) FROM chunks WHERE book_id NOT IN (SELECT id FROM books)"
    ).fetchone()[0] == 0


def test_second_writer_is_refused(library: Library, sample_book: Path) -> None:
    with writer_lock(library.config.database_path), pytest.raises(
            LibraryBusyError, match="another ingest"):
        library.ingest(sample_book)
    assert library.list_books() == []


def test_reindex_fts_rebuilds(library: Library, sample_book: Path) -> None:
    library.ingest(sample_book)
    library.conn.execute("DELETE FROM chunks_fts")
    assert library.integrity().fts_rows == 0
    count = library.reindex_fts()
    assert count == library.integrity().fts_rows == library.integrity().embedded_chunks


def test_a_file_named_like_a_book_id_neither_shadows_nor_replaces_that_book(
        library: Library, sample_book: Path, tmp_path: Path) -> None:
    first = library.ingest(sample_book)
    digits = tmp_path / f"{first.book_id}.txt"
    digits.write_text("Zebras graze on the savanna at dawn.\n", encoding="utf-8")
    report = library.ingest(digits, force=True)  # --force must not take book 1 for slug "1"
    assert not report.replaced and report.slug == f"book-{first.book_id}"
    assert library.book(first.book_id).slug == "the-garden-book"
    assert library.book(str(first.book_id)).slug == "the-garden-book"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "7.md").write_text("Lions sleep most of the day.\n", encoding="utf-8")
    library.ingest_folder(notes)
    assert {b.slug for b in library.list_books()} == {"the-garden-book", "book-1", "book-7"}


def test_check_passes_a_sound_library_and_names_a_missing_keyword_row(
        garden_library: Library) -> None:
    sound = garden_library.check()
    assert sound.ok and not sound.problems, sound.to_dict()
    with garden_library.conn:  # behind the library's back: FTS5 loses a row
        garden_library.conn.execute(
            "DELETE FROM chunks_fts WHERE rowid = (SELECT min(id) FROM chunks)")
    damaged = garden_library.check()
    assert not damaged.ok and damaged.problems, damaged.to_dict()


def test_a_search_with_another_model_names_no_dimension_it_does_not_know(
        tmp_path: Path, sample_book: Path) -> None:
    """Searching with another embedder is refused before that model is asked anything, so
    its dimension is unknown: the message claimed the library's own ('ollama:nomic-embed-
    text (384 dimensions)' for a 768-dimension model)."""
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
    with (Library.open(config=config, embedder=FakeEmbedder(dimension=32, name="other")) as lib,
          pytest.raises(EmbeddingMismatchError) as info):
        lib.search("the lamp")
    message = str(info.value)
    assert "other" in message and "dimensions" in message, message
    assert not re.search(r"asks for \S*other \(\d+ dimensions\)", message), message
