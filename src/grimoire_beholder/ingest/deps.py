"""What ingest, sync and watch need from a library, handed to them explicitly.

``Library`` (the composition root) builds one :class:`IngestDeps` per write call; nothing
under ``ingest/`` imports or reaches into ``Library``. The search engine notices the new
data on its own (``search.engine`` watches ``PRAGMA data_version``), so an ingest never
has to tell anyone it wrote.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from grimoire_beholder.config import Config
from grimoire_beholder.ingest.build import piece_limit
from grimoire_beholder.ingest.pipeline import StageRunner
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.models import Models
from grimoire_beholder.store import vectors
from grimoire_beholder.structure.chunks import PieceLimit
from grimoire_beholder.views import StageCounts


@dataclass(frozen=True)
class IngestDeps:
    conn: sqlite3.Connection
    config: Config
    models: Models
    # Called after each book's stages (the library folds large changes into its search
    # index there, so a long folder ingest does not leave readers a growing delta).
    after_book: Callable[[], None] | None = None

    @property
    def chunk_limit(self) -> PieceLimit | None:
        """How chunks are bounded for this library's embedder (``build.piece_limit``)."""
        return piece_limit(self.models.embedder)

    def check_models(self) -> None:
        """Before any write: the embedder matches the library's stamp, and both models run
        (each raises ModelError with the fix, e.g. the ``ollama pull`` to run)."""
        embedder = self.models.embedder
        vectors.check_identity(self.conn, embedder.identity)
        embedder.check()
        generator = self.models.generator
        if generator is not None:
            generator.check()

    def run_stages(self, book_id: int | None, progress: Progress) -> StageCounts:
        """Run (or resume) summaries → contexts → embeddings for one book or all."""
        from grimoire_beholder.ingest.contexts import make_context_writer

        writer = make_context_writer(self.models.generator)
        runner = StageRunner(self.conn, self.config, self.models.embedder, writer, progress)
        report = runner.run(book_id)
        if self.after_book is not None:
            self.after_book()
        return report
