"""Ingesting one file into a library in a server database (``store.server_engine``).

The same promises as ``service.ingest_file`` on SQLite: every check that can fail on bad
input or missing models comes before the first write; the book's structure (book, chapters,
sections, pending chunks, printed-index entries) is written in one transaction; the model
stages (``pipeline.StageRunner``, the very same code) checkpoint as they go, so a killed
ingest resumes where its last commit left off when run again, to the same chunks.

Writers lock per book, not per library: the file's content hash for the whole ingest (the
same file from two processes: the second refuses at once, as on SQLite) and the slug while
the structure is written (two files wanting one slug cannot both take it). Other books'
writers go on at the same time, and readers never wait.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from grimoire_beholder import faults
from grimoire_beholder.config import Config
from grimoire_beholder.errors import SlugConflictError
from grimoire_beholder.ingest.build import book_slug, file_info, piece_limit, prepare_book
from grimoire_beholder.ingest.contexts import make_context_writer
from grimoire_beholder.ingest.pipeline import StageRunner
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.models import Models
from grimoire_beholder.parse.source import stat_source
from grimoire_beholder.store.server_engine import ServerEngine
from grimoire_beholder.views import IngestReport, StageCounts


def run_stages(engine: ServerEngine, config: Config, models: Models, book_id: int | None,
               progress: Progress) -> StageCounts:
    """Run (or resume) summaries → contexts → embeddings for one book or all."""
    runner = StageRunner(engine, config, models.embedder, make_context_writer(models.generator),
                         progress)
    return runner.run(book_id)


def ingest_file_on_server(engine: ServerEngine, config: Config, models: Models, path: Path, *,
                          name: str | None, force: bool, progress: Progress) -> IngestReport:
    stat_source(path)
    info = file_info(path)
    with engine.book_lock("file", info.sha256, wait=False):
        embedder = models.embedder
        engine.check_identity(embedder.identity)
        embedder.check()
        if models.generator is not None:
            models.generator.check()
        same = engine.find_book_by_hash(info.sha256)
        wanted_slug = book_slug(name, path, info.sha256) if name else None
        if same is not None and not force:
            if wanted_slug and wanted_slug != same.slug:
                raise SlugConflictError(
                    f"{path} is already in the library as '{same.slug}'; use --force to "
                    f"re-ingest it as '{wanted_slug}'")
            stages = run_stages(engine, config, models, same.id, progress)
            return _report(engine, same.id, created=False, replaced=False, stages=stages,
                           warnings=[])

        def naming(suggested: str) -> tuple[str, str]:
            if not name:
                return book_slug(suggested, path, info.sha256), suggested
            assert wanted_slug is not None
            return wanted_slug, name.strip() or path.stem

        prepared = prepare_book(path, info, config, label=str(path), progress=progress,
                                naming=naming, limit=piece_limit(embedder))
        with engine.book_lock("slug", prepared.book.slug):
            taken = engine.find_book(prepared.book.slug)
            if taken is not None and taken.source_hash != info.sha256 and not force:
                raise SlugConflictError(
                    f"slug '{prepared.book.slug}' is already taken by {taken.source_path}; "
                    "use --force to replace that book, or --name to give this one another name")
            removing = {b.id for b in (taken, same) if b is not None}
            with engine.transaction():
                for old in sorted(removing):
                    engine.delete_book(old)
                book_id = engine.insert_book(prepared.book)
                faults.reached("structure.before_commit")
        stages = run_stages(engine, config, models, book_id, progress)
        return _report(engine, book_id, created=True, replaced=bool(removing), stages=stages,
                       warnings=prepared.warnings)


def _report(engine: ServerEngine, book_id: int, *, created: bool, replaced: bool,
            stages: StageCounts, warnings: list[str]) -> IngestReport:
    book = engine.find_book(book_id)
    assert book is not None
    return IngestReport(
        slug=book.slug, name=book.name, book_id=book.id, source_path=book.source_path,
        created=created, replaced=replaced, chapters=book.chapters, sections=book.sections,
        chunks=book.chunks, warnings=warnings, **asdict(stages))
