"""The resumable model stages: section summaries → chunk contexts → embeddings + FTS rows.

Checkpoints (what a crash can lose is at most the unit in flight):
1. summaries: one section per transaction, only sections whose summary is NULL;
2. contexts: one chunk per transaction, only ``pending`` chunks (→ ``contextualized``);
   up to ``context_concurrency`` model requests run at once, but commits stay one chunk at a
   time, on this thread (the SQLite connection is never shared across threads);
3. embeddings: one batch per transaction, only ``contextualized`` chunks (→ ``embedded``);
   the FTS rows are written in the same transaction, so the keyword index never disagrees
   with the vectors.
A rerun simply runs the stages again: each picks up the rows still in its input state.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from grimoire_beholder import faults
from grimoire_beholder.config import Config
from grimoire_beholder.ingest.contexts import ContextWriter
from grimoire_beholder.ingest.progress import NullProgress, Progress
from grimoire_beholder.models.protocols import Embedder, FitsWindow
from grimoire_beholder.store import chunk_progress
from grimoire_beholder.store.records import ChunkWork
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.views import StageCounts


def embedding_text(work: ChunkWork) -> str:
    """What the embedder reads: the situating context, then the chunk itself."""
    return f"{work.context}\n\n{work.text}" if work.context else work.text


CONTEXT_ROOM: int | None = None
"""At most this many pieces of a chunk's context are embedded (None: as many as fit)."""

BOOK_SOURCES = frozenset({"pdf", "epub", "docx", "html"})
BOOK_CONTEXT_PIECES: int | None = 16
"""At most this many pieces of the context of a chunk of a book (:data:`BOOK_SOURCES`) are
embedded (None: as many as fit); so is a contents or index chunk's of any kind of file.
Other Markdown and plain text keep the whole room their chunk budget leaves them."""

NAVIGATION_ROLES = frozenset({"contents", "index"})
NAVIGATION_PIECES: int | None = 48
"""A chunk of a contents page or a printed index is embedded from at most this many pieces
of its text (None: all of it), after its context cut like a book's."""


def embedding_texts(embedder: Embedder, batch: list[ChunkWork]) -> list[str]:
    """What ``embedder`` reads for each chunk of ``batch``: :func:`embedding_text`, or, for a
    model with a window (the embedded MiniLM's ``fit_context``), the context cut to leave
    the chunk whole in one window — and shorter for a book's chunk and for a contents or
    index page (see ARCHITECTURE.md, "What the model reads")."""
    if not isinstance(embedder, FitsWindow):
        return [embedding_text(w) for w in batch]
    return [embedder.fit_context(w.context or "", w.text, _context_room(w),
                                 NAVIGATION_PIECES if w.role in NAVIGATION_ROLES else None)
            for w in batch]


def _context_room(work: ChunkWork) -> int | None:
    """The most pieces of ``work``'s context the model reads (None: as many as fit)."""
    rooms = [CONTEXT_ROOM]
    if work.source_type in BOOK_SOURCES or work.role in NAVIGATION_ROLES:
        rooms.append(BOOK_CONTEXT_PIECES)
    known = [room for room in rooms if room is not None]
    return min(known) if known else None


class StageRunner:
    """Runs the model stages over whatever is left to do (optionally for one book)."""

    def __init__(self, conn: Store, config: Config, embedder: Embedder,
                 writer: ContextWriter, progress: Progress | None = None) -> None:
        self.conn = conn
        self.config = config
        self.embedder = embedder
        self.writer = writer
        self.progress = progress or NullProgress()

    def run(self, book_id: int | None = None) -> StageCounts:
        report = StageCounts()
        started = time.perf_counter()
        report.summaries = self.summarize(book_id)
        report.contexts = self.contextualize(book_id)
        embed_started = time.perf_counter()
        windowed_before = self.embedder.windowed
        report.embedded = self.embed(book_id)
        report.embed_seconds = time.perf_counter() - embed_started
        report.windowed = self.embedder.windowed - windowed_before
        report.seconds = time.perf_counter() - started
        return report

    def summarize(self, book_id: int | None) -> int:
        todo = chunk_progress.sections_without_summary(self.conn, book_id)
        if not todo:
            return 0
        self.progress.stage("summaries", len(todo))
        for section_id, _book_id, book_name, crumb, text in todo:
            summary = self.writer.summarize_section(book=book_name, breadcrumb=crumb,
                                                    text=text) if text.strip() else ""
            with transaction(self.conn):
                chunk_progress.set_summary(self.conn, section_id, summary)
                faults.reached("summaries.before_commit")
            faults.reached("summaries.commit")
            self.progress.advance()
        return len(todo)

    def _context_jobs(self, todo: list[ChunkWork]) -> Iterator[tuple[ChunkWork, dict[str, str]]]:
        cache: dict[int, tuple[str, str, str, str]] = {}
        for work in todo:
            if work.section_id not in cache:
                cache.clear()  # chunks come grouped by section; keep one section's text
                cache[work.section_id] = chunk_progress.section_info(self.conn, work.section_id)
            book, crumb, summary, section_text = cache[work.section_id]
            yield work, {"book": book, "breadcrumb": crumb, "summary": summary,
                         "section_text": section_text, "chunk_text": work.text}

    def contextualize(self, book_id: int | None) -> int:
        todo = chunk_progress.pending_chunks(self.conn, book_id, "pending")
        if not todo:
            return 0
        self.progress.stage("contexts", len(todo))
        workers = max(1, self.config.context_concurrency)
        done = 0
        with ThreadPoolExecutor(max_workers=workers) as pool:
            in_flight: list[tuple[ChunkWork, Future[str]]] = []
            jobs = self._context_jobs(todo)
            try:
                for work, kwargs in jobs:
                    in_flight.append((work, pool.submit(self.writer.chunk_context, **kwargs)))
                    if len(in_flight) >= workers * 2:
                        done += self._commit_context(*in_flight.pop(0))
                while in_flight:
                    done += self._commit_context(*in_flight.pop(0))
            except BaseException:
                for _, future in in_flight:
                    future.cancel()
                raise
        return done

    def _commit_context(self, work: ChunkWork, future: Future[str]) -> int:
        context = future.result()
        with transaction(self.conn):
            chunk_progress.set_context(self.conn, work.id, context)
            faults.reached("contexts.before_commit")
        faults.reached("contexts.commit")
        self.progress.advance()
        return 1

    def embed(self, book_id: int | None) -> int:
        todo = chunk_progress.pending_chunks(self.conn, book_id, "contextualized")
        if not todo:
            return 0
        self.progress.stage("embeddings", len(todo))
        size = max(1, self.config.embed_batch_size)
        for start in range(0, len(todo), size):
            batch = todo[start:start + size]
            vectors = self.embedder.embed_documents(embedding_texts(self.embedder, batch))
            with transaction(self.conn):
                chunk_progress.mark_embedded(self.conn, list(zip(batch, vectors, strict=True)),
                                          self.embedder.identity, self.embedder.dimension)
                faults.reached("embeddings.before_commit")
            faults.reached("embeddings.commit")
            self.progress.advance(len(batch))
        return len(todo)
