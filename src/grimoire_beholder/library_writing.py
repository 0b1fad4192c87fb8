"""The writing half of the facade: ingest, folders, sync and watch, resume, delete, unfollow,
reindex and the search-index fold that follows each write.

``LibraryWriting`` is mixed into ``Library`` (library.py), which supplies the connection,
config, models and book lookup it works with; nothing else uses it. Every method refuses a
read-only library before it writes, and folds what it committed into the search index.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from grimoire_beholder.errors import GrimoireError, ReadOnlyLibraryError
from grimoire_beholder.store import book_rows, source_rows
from grimoire_beholder.store.transactions import transaction

if TYPE_CHECKING:  # the rest only when a command writes: a search imports none of it
    from grimoire_beholder.config import Config
    from grimoire_beholder.ingest.deps import IngestDeps
    from grimoire_beholder.ingest.progress import Progress
    from grimoire_beholder.ingest.watch import StopEvent
    from grimoire_beholder.models import Models
    from grimoire_beholder.search.index_writer import UpdateResult
    from grimoire_beholder.store.records import BookRow
    from grimoire_beholder.store.server_engine import ServerEngine, Store
    from grimoire_beholder.views import FileOutcome, IngestReport, StageCounts, SyncReport


class LibraryWriting:
    """The writing commands of a ``Library`` (which sets the attributes below)."""

    config: Config
    models: Models
    server: ServerEngine | None
    read_only: bool

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection (``Library.conn``)."""
        raise NotImplementedError

    @property
    def store(self) -> Store:
        """The SQLite connection or the server engine (``Library.store``)."""
        raise NotImplementedError

    def book(self, book: str | int) -> BookRow:
        """The book a name, slug or id names (``Library.book``)."""
        raise NotImplementedError

    def _require_writable(self) -> None:
        if self.read_only:
            reason = getattr(self.server or self.conn, "read_only_reason", None) or (
                "it was opened read-only")
            where = self.server.location if self.server else self.config.database_path
            raise ReadOnlyLibraryError(
                f"the library {where} is read-only ({reason}); nothing was written")

    def _ingest_deps(self, *, writes: bool = True) -> IngestDeps:
        """What ingest, sync and watch work with: this library's connection, config and
        models, handed over explicitly (nothing under ingest/ sees the Library)."""
        from grimoire_beholder.ingest.deps import IngestDeps

        if writes:
            self._require_writable()
        fold = writes and self.server is None  # a server indexes as it writes
        return IngestDeps(self.store, self.config, self.models,
                          after_book=self._fold_search_index if fold else None)

    @contextmanager
    def _then_update_index(self, enabled: bool = True) -> Iterator[None]:
        """Run a writing command, then fold what it committed into the search index."""
        try:
            yield
        finally:
            if enabled and self.server is None:  # a server indexes as it writes
                self.update_search_index()

    def _fold_whole(self) -> None:
        """Fold everything committed into the search index, as a writing command's end
        does (a server indexes as it writes)."""
        if self.server is None:
            self.update_search_index()

    def _fold_search_index(self) -> None:
        self.update_search_index(force=False)  # between books: small changes wait

    def ingest(self, path: str | os.PathLike[str], *, name: str | None = None,
               force: bool = False, follow_links: bool = True,
               progress: Progress | None = None) -> IngestReport:
        """Parse, store and run the model stages for one file; idempotent and resumable.
        ``follow_links=False``: ``path`` is a real path already checked (MCP ``add_book``);
        it is read through no link, so one swapped in after the check is refused."""
        from grimoire_beholder.ingest.progress import NullProgress
        from grimoire_beholder.ingest.service import ingest_file
        from grimoire_beholder.parse.source import links_not_followed
        from grimoire_beholder.store import folders

        with self._then_update_index(), (
                links_not_followed() if not follow_links else contextlib.nullcontext()):
            report = ingest_file(self._ingest_deps(), Path(path), name=name, force=force,
                                 progress=progress or NullProgress())
        with transaction(self.store):  # asked for by name: a sync no longer leaves it out
            folders.undrop_file(self.store, report.source_path)
        return report

    def ingest_folder(self, folder: str | os.PathLike[str], *, include: tuple[str, ...] = (),
                      exclude: tuple[str, ...] = (), within: list[Path] | None = None,
                      progress: Progress | None = None) -> SyncReport:
        """Ingest every supported file under a folder (recursively) and remember the folder
        for ``sync``; per-file failures are in the report, not raised. With ``within``,
        files whose real path (links followed) is outside those folders are skipped."""
        from grimoire_beholder.ingest.external import ingest_library, is_library
        from grimoire_beholder.ingest.progress import NullProgress
        from grimoire_beholder.ingest.sync import ingest_folder

        if is_library(Path(folder)):  # a Calibre library or a Zotero data folder
            with self._then_update_index():
                return ingest_library(self._ingest_deps(), Path(folder), within=within,
                                      progress=progress or NullProgress())
        with self._then_update_index():
            return ingest_folder(self._ingest_deps(), Path(folder), include=include,
                                 exclude=exclude, within=within,
                                 progress=progress or NullProgress())

    def sync(self, folders: Sequence[str | os.PathLike[str]] | None = None, *,
             dry_run: bool = False, confined: bool = False,
             progress: Progress | None = None) -> SyncReport:
        """Bring books in line with their files: changed files re-embed only changed chunks,
        deleted files are removed, moves re-pointed, new files under synced folders added.

        ``folders`` narrows it to synced folders, folders or files inside them, or books'
        files; a path the library knows nothing about is an InputFileError. ``confined``:
        no new file is added through a link leading out of its synced folder (MCP).
        Calibre libraries and Zotero data folders ingested are followed too
        (ingest/external_sync.py): added and removed items, replaced files, edited metadata."""
        from grimoire_beholder.ingest.external_sync import sync_all
        from grimoire_beholder.ingest.progress import NullProgress

        dirs = [Path(f) for f in folders] if folders else None
        with self._then_update_index(enabled=not dry_run):
            return sync_all(self._ingest_deps(writes=not dry_run), dirs, dry_run=dry_run,
                            confined=confined, progress=progress or NullProgress())

    def watch(self, folders: Sequence[str | os.PathLike[str]] | None = None, *,
              stop_event: StopEvent | None = None,
              on_report: Callable[[SyncReport], None] | None = None,
              progress: Progress | None = None, debounce_ms: int = 1000
              ) -> list[FileOutcome]:
        """Sync, then keep syncing as files change until ``stop_event`` is set (or Ctrl-C);
        the files failing at the last sync then. A file that keeps failing (or being
        skipped) is named once, and again when it changed (``ingest/watch.py``). Each sync
        that wrote is folded into the search index before its report, as ``sync`` is at
        its end: a search from another process reads the index, not a growing delta."""
        from grimoire_beholder.ingest.watch import watch

        return watch(self._ingest_deps(), [Path(f) for f in folders] if folders else None,
                     stop_event=stop_event, on_report=on_report, progress=progress,
                     debounce_ms=debounce_ms,
                     after_sync=self._fold_whole)

    def resume(self, progress: Progress | None = None) -> StageCounts:
        """Finish the model stages for every book (after a crash or a dead daemon), each
        book under its lock (``ingest.service.resume``)."""
        from grimoire_beholder.ingest.progress import NullProgress
        from grimoire_beholder.ingest.service import resume

        with self._then_update_index():
            return resume(self._ingest_deps(), progress or NullProgress())

    def delete(self, book: str | int) -> BookRow:
        """Remove a book and everything under it in one transaction."""
        from grimoire_beholder import faults
        from grimoire_beholder.store import folders

        deps = self._ingest_deps()
        found = self.book(book)
        store = self.store
        origin = source_rows.origins(store, [found.id]).get(found.id)
        named = f"'{found.name}' ({Path(found.source_path).name})"
        with self._then_update_index(), deps.file_writer(found.source_hash, named), (
                transaction(store)):
            book_rows.delete_book(store, found.id)
            if origin is not None:  # a Calibre/Zotero item: its library's sync leaves it out
                source_rows.drop_item(store, origin.library, origin.item)
            if found.source_root:  # a file of a synced folder: the next sync leaves it out
                folders.drop_file(store, found.source_path, found.source_root)
            faults.reached("delete.before_commit")
        return found

    def unfollow(self, folder: str | os.PathLike[str], *,
                 delete_books: bool = False) -> tuple[str, list[BookRow]]:
        """Stop syncing a folder given to ``ingest DIR``: no new file of it is added again.
        Its books stay, as books of single files, unless ``delete_books``; returns the
        folder as stored and the books it held. InputFileError when it is not followed."""
        from grimoire_beholder.ingest.unfollow import unfollow

        with self._then_update_index(enabled=delete_books):
            real, books = unfollow(self._ingest_deps(), folder, delete_books=delete_books)
        return real, source_rows.attach_origins(self.store, books)

    def reindex_fts(self, book: str | int | None = None) -> int:
        """Drop and rebuild the keyword index (of one book, or all) from embedded chunks."""
        from grimoire_beholder import faults
        from grimoire_beholder.store import fts

        deps = self._ingest_deps()
        found = self.book(book) if book is not None else None
        with self._then_update_index(), deps.library_writer(), (
                deps.book_writer(*([found.source_hash] if found else []))), (
                transaction(self.store)):
            count = fts.rebuild(self.store, found.id if found else None)
            faults.reached("reindex.before_commit")
        return count

    def update_search_index(self, *, force: bool = True
                            ) -> UpdateResult | Literal["read-only", "failed"]:
        """Fold committed changes into the persisted search index beside the database.

        Writing commands call this after they commit (``force=False`` between the books of
        one command: small changes wait for its end). The index is a cache of the database,
        so a failure here only warns: searches fall back to the exact arms until it is
        rebuilt.
        """
        if self.read_only:
            return "read-only"
        conn = self.conn  # a server library has no index beside it to fold
        from grimoire_beholder.search.index_writer import update

        try:
            return update(conn, self.config.database_path, force=force)
        except (OSError, sqlite3.Error, ValueError, GrimoireError) as exc:
            import logging

            logging.getLogger(__name__).warning("search index not updated: %s", exc)
            return "failed"
