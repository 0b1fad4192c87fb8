"""Ingesting one file: checks, parse, store the structure atomically, run the model stages.

Order matters for the "never a half-written book" promise: every check that can fail on bad
input or missing models happens before the first write, and the whole structure (book,
chapters, sections, pending chunks) is inserted in one transaction. After that, the model
stages checkpoint as they go, so an interrupted ingest is resumed by running it again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputFileError, SlugConflictError
from ..store import books as book_store
from ..store.db import transaction
from ..views import IngestReport
from . import faults
from .build import book_slug, build_book, file_info, parse_options
from .lock import writer_lock
from .pipeline import StageReport, StageRunner
from .progress import Progress

if TYPE_CHECKING:
    from ..library import Library


def run_stages(lib: Library, book_id: int | None, progress: Progress) -> StageReport:
    """Run (or resume) summaries → contexts → embeddings for one book or all."""
    from .contexts import make_context_writer

    writer = make_context_writer(lib.generator)
    runner = StageRunner(lib.conn, lib.config, lib.embedder, writer, progress)
    return runner.run(book_id)


def _check_models(lib: Library) -> None:
    lib._check_embedding_stamp()
    lib.embedder.check()
    generator = lib.generator
    if generator is not None:
        generator.check()


def _check_path(path: Path) -> None:
    if not path.exists():
        raise InputFileError(f"{path}: no such file")
    if path.is_dir():
        raise InputFileError(f"{path}: is a directory, not a file")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"{path}: permission denied")


def ingest_file(lib: Library, path: Path, *, name: str | None, force: bool,
                progress: Progress) -> IngestReport:
    from ..parse import parse_file

    _check_path(path)
    info = file_info(path)
    with writer_lock(lib.config.database_path):
        _check_models(lib)
        same = book_store.find_book_by_hash(lib.conn, info.sha256)
        wanted_slug = book_slug(name, path, info.sha256) if name else None
        if same is not None and not force:
            if wanted_slug and wanted_slug != same.slug:
                raise SlugConflictError(
                    f"{path} is already in the library as '{same.slug}'; use --force to "
                    f"re-ingest it as '{wanted_slug}'")
            if same.source_path != info.path:
                with transaction(lib.conn):
                    book_store.touch_book(lib.conn, same.id, source_path=info.path,
                                          source_mtime=info.mtime)
            stages = run_stages(lib, same.id, progress)
            return _report(lib, same.id, created=False, replaced=False, stages=stages,
                           warnings=[])

        parsed = parse_file(path, parse_options(lib.config))
        for warning in parsed.warnings:
            progress.message(f"warning: {path.name}: {warning}")
        display = (name or parsed.title or path.stem).strip() or path.stem
        slug = wanted_slug or book_slug(display, path, info.sha256)
        replaced = lib.check_slug_free(slug, info.sha256, force)
        new_book = build_book(parsed, slug=slug, name=display, info=info, config=lib.config)
        if not any(s.chunks for ch in new_book.chapters for s in ch.sections):
            raise InputFileError(f"{path}: no text to index")
        with transaction(lib.conn):
            for old in {b.id: b for b in (replaced, same) if b is not None}.values():
                book_store.delete_book(lib.conn, old.id)
            book_id = book_store.insert_book(lib.conn, new_book)
            faults.reached("structure.before_commit")
        lib._engine = None
        stages = run_stages(lib, book_id, progress)
        return _report(lib, book_id, created=True, replaced=bool(replaced or same),
                       stages=stages, warnings=list(parsed.warnings))


def _report(lib: Library, book_id: int, *, created: bool, replaced: bool,
            stages: StageReport, warnings: list[str]) -> IngestReport:
    book = book_store.find_book(lib.conn, book_id)
    assert book is not None
    return IngestReport(
        slug=book.slug, name=book.name, book_id=book.id, source_path=book.source_path,
        created=created, replaced=replaced, chapters=book.chapters, sections=book.sections,
        chunks=book.chunks, summaries=stages.summaries, contexts=stages.contexts,
        embedded=stages.embedded, windowed=stages.windowed, seconds=stages.seconds,
        embed_seconds=stages.embed_seconds, warnings=warnings,
    )
