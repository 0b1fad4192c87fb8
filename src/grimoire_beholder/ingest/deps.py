"""What ingest, sync and watch need from a library, handed to them explicitly.

``Library`` (the composition root) builds one :class:`IngestDeps` per write call; nothing
under ``ingest/`` imports or reaches into ``Library``. The search engine notices the new
data on its own (``search.engine`` watches ``PRAGMA data_version``), so an ingest never
has to tell anyone it wrote.

The same ingest, sync and watch code runs on a SQLite library and on one in a server
database (``store.server_engine``); only the locks differ, and they are chosen here. On
SQLite one writer lock covers the library (``lock.py``). On a server, writers lock per book
(the file's content hash, and the slug while a new book takes it), so other books' writers
go on; folder ingests and syncs also hold one lock among themselves, since each plans
against the whole library.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from grimoire_beholder.config import Config
from grimoire_beholder.errors import LibraryBusyError
from grimoire_beholder.ingest.build import piece_limit
from grimoire_beholder.ingest.folder import library_files
from grimoire_beholder.ingest.lock import writer_lock
from grimoire_beholder.ingest.pipeline import StageRunner
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.models import Models
from grimoire_beholder.store import vectors
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.structure.piece_limit import PieceLimit
from grimoire_beholder.views import StageCounts


@dataclass(frozen=True)
class IngestDeps:
    conn: Store
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

    # -- locks (see the module docstring) --------------------------------------------------
    def library_writer(self) -> AbstractContextManager[None]:
        """Held for a whole folder ingest or sync: LibraryBusyError at once when another
        process holds it (on a server, only another folder ingest or sync does)."""
        if isinstance(self.conn, sqlite3.Connection):
            return writer_lock(self.config.database_path)
        return self._busy_says(self.conn.book_lock("sync", "folders", wait=False),
                               f"another folder ingest or sync is writing to "
                               f"{self.conn.location}; wait for it to finish and run this "
                               "again")

    def file_writer(self, source_hash: str, book: str) -> AbstractContextManager[None]:
        """Held while one book is written by itself (a file ingested by name, a book
        deleted): the library's writer lock on SQLite, that file's own lock on a server;
        LibraryBusyError at once when another process holds it, naming ``book`` (its file
        or its name, as the user knows it; never the hash the lock is keyed by)."""
        if isinstance(self.conn, sqlite3.Connection):
            return writer_lock(self.config.database_path)
        return self._busy_says(self.conn.book_lock("file", source_hash, wait=False),
                               f"another process is writing {book} in {self.conn.location}; "
                               "wait for it to finish and run this again")

    @contextmanager
    def book_writer(self, *source_hashes: str, slug: str | None = None) -> Iterator[None]:
        """Inside :meth:`library_writer` or :meth:`file_writer`: on a server, the locks of
        the books these files make or replace (waiting for a writer of the same file) and,
        with ``slug``, of the slug a book takes while it is written. Nothing more on SQLite,
        whose writer lock covers the library."""
        if isinstance(self.conn, sqlite3.Connection):
            yield
            return
        with ExitStack() as held:  # always in one order: two writers never wait on each other
            for value in sorted(set(source_hashes)):
                held.enter_context(self.conn.book_lock("file", value))
            if slug is not None:
                held.enter_context(self.conn.book_lock("slug", slug))
            yield

    def own_files(self) -> set[Path]:
        """The library's own files, never ingested (none for a library in a server)."""
        if isinstance(self.conn, sqlite3.Connection):
            return library_files(self.config.database_path)
        return set()

    @staticmethod
    @contextmanager
    def _busy_says(lock: AbstractContextManager[None], message: str) -> Iterator[None]:
        with ExitStack() as held:
            try:
                held.enter_context(lock)
            except LibraryBusyError:
                raise LibraryBusyError(message) from None
            yield
