"""Ingest and sync the books of a Calibre library or a Zotero data folder.

``ingest DIR`` on a folder that ``sources.discover.detect`` recognises takes it as such a
library: it says so, remembers it (``source_libraries``) and ingests one book per item
with a readable file, under the item's own title and authors, with its metadata, labels
and link (``book_sources``, ``book_labels``) written in the book's own transaction. Items
without a readable format (an entry with metadata only, a MOBI-only book) are *skipped*,
reported by name with the formats they have, and so are items whose every listed file is
missing from disk (removed by hand, not downloaded by Zotero): the library's state, which no
rerun can change, so not a failure (``sync`` exits 0); a book read from such an item before
is kept as it was.

``sync`` follows every remembered library, item by item (its key: Calibre's book id,
Zotero's item key), planning first like a folder sync (``ingest/sync.py``):

* a new item is *added*; an item gone from the library (or left with no readable format)
  is *removed*;
* a new file (another format chosen, a format replaced) or changed annotations: *changed*,
  replaced in place (``store.folders.replace_book``: only chunks whose text changed are
  embedded again);
* the same bytes at another path (Calibre renames a book's folder with its title): *moved*;
* only the metadata edited (authors, tags, series …): *updated* — the book's author,
  labels and link are rewritten and its keyword rows rebuilt from the stored chunks; no
  chunk is embedded again. A new title is *updated* too, but its book is read again under
  it, as a new book would be (every chunk's context names the book: kept, the old title
  would go on matching searches and the new one would not).

A book an interrupted run left unfinished (killed between the model stages' checkpoints,
during an ``add``, a change or a retitle's re-read) is finished by the next sync or ingest of
its library: its origin was saved with its structure, so the plan finds it *unchanged*,
and it is told as *resumed*, as a folder sync tells one (a moved or updated one is finished
too, under its own action). Finishing reads no file, so one whose file is missing now (or
whose whole library is away or unreadable) is finished from its stored chunks as well, told
as *resumed* with a warning saying why its file was not read. An item whose file is there but
fails (unreadable, or damaged) is *failed* (exit 1) by every sync until it is mended; its
unfinished book is finished all the same, with that warning (``_Applier.finish_unread``).

A library folder that is missing (an unplugged drive) keeps its books, with a warning; one
that moved is followed when ingested where it is now (``library_moves.py``). Which
remembered libraries a sync reaches, and its one report of folders and libraries, are
``external_sync.py``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.ingest import library_moves
from grimoire_beholder.ingest.build import (
    FileInfo,
    PreparedBook,
    book_slug,
    file_version,
    prepare_book,
)
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.external_plan import ItemStep, content_key, plan
from grimoire_beholder.ingest.progress import NullProgress, Progress
from grimoire_beholder.ingest.service import store_book
from grimoire_beholder.ingest.sync import hand_over
from grimoire_beholder.ingest.sync_steps import finished_unread
from grimoire_beholder.parse.document import ParsedBook
from grimoire_beholder.sources.calibre import calibre_library
from grimoire_beholder.sources.discover import detect
from grimoire_beholder.sources.items import (
    CALIBRE_DB,
    KIND_NAMES,
    ZOTERO_DB,
    SourceItem,
    SourceLibrary,
    reader_chapter,
)
from grimoire_beholder.sources.zotero import zotero_library
from grimoire_beholder.store import book_rows, calibre_rows, folders, fts, source_rows, zotero_rows
from grimoire_beholder.store.foreign_copy import foreign_database
from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.views import FileOutcome, SyncReport

_T = TypeVar("_T")


def is_library(folder: Path) -> bool:
    """Whether ``folder`` is a Calibre library or a Zotero data folder."""
    return detect(Path(folder)) is not None


def formats_of(deps: IngestDeps) -> tuple[str, ...]:
    return tuple(f.strip().lower() for f in deps.config.source_formats.split(",") if f.strip())


class _Applier:
    def __init__(self, deps: IngestDeps, library: SourceLibrary | None, progress: Progress,
                 unfinished: set[int]) -> None:
        self.deps, self.conn, self.library, self.progress = deps, deps.conn, library, progress
        self.unfinished = unfinished  # books an interrupted run left half-done

    def origin(self, item: SourceItem, info: FileInfo) -> source_rows.Origin:
        assert self.library is not None  # None only to finish the books of one not read
        metadata = {**item.described(), "content_key": content_key(info, item),
                    "source": self.library.kind}
        return source_rows.Origin(str(self.library.path), item.key, item.link, metadata,
                                  item.metadata_hash(), tuple(item.tags),
                                  tuple(item.collections), item.series)

    def prepare(self, step: ItemStep, progress: Progress) -> PreparedBook:
        """The item's book as :meth:`ingest` stores it: its title and authors, the stored
        book's slug (a new one's made free), a Zotero item's annotations as a chapter."""
        item, info, stored = step.item, step.info, step.stored
        assert item is not None and item.file is not None and info is not None
        taken = book_rows.slugs(self.conn)

        def naming(suggested: str) -> tuple[str, str]:
            if stored is not None:
                return stored.slug, item.title
            base = slug = book_slug(item.title, Path(info.path), info.sha256)
            n = 2
            while slug in taken:
                slug, n = f"{base}-{n}", n + 1
            return slug, item.title

        def amend(parsed: ParsedBook) -> None:
            chapter = reader_chapter(item)
            if chapter is not None:
                parsed.chapters.append(chapter)

        prepared = prepare_book(Path(info.path), info, self.deps.config, label=step.display,
                                progress=progress, naming=naming, amend=amend,
                                limit=self.deps.chunk_limit)
        prepared.book.author = item.author or prepared.book.author
        return prepared

    def ingest(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        item, info, stored = step.item, step.info, step.stored
        assert item is not None and info is not None
        prepared = self.prepare(step, self.progress)
        origin = self.origin(item, info)
        _, reused, stages = store_book(
            self.deps, prepared.book, NullProgress(),
            in_place_of=stored.book_id if stored is not None else None,
            then=lambda book_id: source_rows.save_origin(self.conn, book_id, origin))
        report.summaries += stages.summaries
        report.contexts += stages.contexts
        report.embedded += stages.embedded
        report.reused += reused
        return FileOutcome(step.action, step.display, slug=prepared.book.slug,
                           chunks=len(prepared.chunk_hashes), embedded=stages.embedded,
                           reused=reused)

    def preview(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        """What :meth:`apply` would do with ``step`` (a dry run), with the chunks it would
        embed and reuse; writes nothing. A retitled book is read again, so it counts too."""
        item, stored = step.item, step.stored
        outcome = FileOutcome(step.action, step.display, error=step.error,
                              slug=stored.slug if stored else None)
        found = book_rows.find_book(self.conn, stored.book_id) if stored else None
        renamed = found is not None and item is not None and found.name != item.title
        if not (step.action in ("added", "changed")
                or (step.action in ("moved", "updated") and renamed)):
            if step.action == "failed":
                self.finish_unread(step, outcome, report, dry_run=True)
            elif found is not None and found.id in self.unfinished:  # apply finishes it
                todo = found.chunks - found.status.get("embedded", 0)
                if step.action in ("unchanged", "skipped"):
                    outcome.action, outcome.chunks = "resumed", found.chunks
                if step.action == "skipped":
                    outcome.error = None
                    report.warnings.append(finished_unread(step.display, step.error or "",
                                                           dry_run=True))
                outcome.embedded = todo
                report.embedded += todo
            return outcome
        try:
            prepared = self.prepare(step, NullProgress())
        except (InputFileError, NoTextError) as exc:  # as the real run reports it
            outcome = FileOutcome("failed", step.display, error=str(exc))
            self.finish_unread(step, outcome, report, dry_run=True)
            return outcome
        old = (folders.embedded_hashes(self.conn, stored.book_id)
               if stored is not None and not renamed else set())
        outcome.chunks = len(prepared.chunk_hashes)
        outcome.reused = sum(1 for h in prepared.chunk_hashes if h in old)
        outcome.embedded = outcome.chunks - outcome.reused
        report.embedded += outcome.embedded
        report.reused += outcome.reused
        return outcome

    def update(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        """Moved and/or metadata edited: rewrite where it is and what it is called. A new
        title is read again as a new book's would be (:meth:`ingest`): every chunk's
        context names its book, so the old title would go on matching searches."""
        item, info, stored = step.item, step.info, step.stored
        assert item is not None and info is not None and stored is not None
        found = book_rows.find_book(self.conn, stored.book_id)
        if found is not None and found.name != item.title:
            return self.ingest(step, report)
        with transaction(self.conn):
            book_rows.relocate_book(self.conn, stored.book_id, source_path=info.path,
                                    source_mtime=info.mtime, source_root=None,
                                    source_group="")
            folders.update_file_stat(self.conn, stored.book_id, info.size, info.mtime)
            source_rows.save_origin(self.conn, stored.book_id, self.origin(item, info))
            found = book_rows.find_book(self.conn, stored.book_id)
            if found is not None and (found.name, found.author) != (item.title, item.author):
                source_rows.rename_book(self.conn, stored.book_id, item.title, item.author)
                fts.rebuild(self.conn, stored.book_id)
        old = stored.source_path if step.action == "moved" else None
        return FileOutcome(step.action, step.display, slug=stored.slug, old_path=old,
                           embedded=self.finish(stored.book_id, report))

    def finish(self, book_id: int, report: SyncReport) -> int:
        """Run the model stages of a book an interrupted run left unfinished (nothing for
        another); the chunks it embedded."""
        if book_id not in self.unfinished:
            return 0
        stages = self.deps.run_stages(book_id, NullProgress())
        report.summaries += stages.summaries
        report.contexts += stages.contexts
        report.embedded += stages.embedded
        return stages.embedded

    def apply(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        """Carry out one step, holding its book's lock (``IngestDeps.book_writer``)."""
        sha256 = (step.info.sha256 if step.info is not None else
                  step.stored.content_key.split(":")[0] if step.stored is not None else None)
        with self.deps.book_writer(*([sha256] if sha256 else [])):
            try:
                return self._apply(step, report)
            except (InputFileError, NoTextError) as exc:  # raised before any write
                outcome = FileOutcome("failed", step.display, error=str(exc),
                                      version=_version(step))
                self.finish_unread(step, outcome, report)
                return outcome

    def resume(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        """Finish a book an interrupted run left half-done, told as resumed; a *skipped*
        one's file is not read now (``step.error`` says why), which a warning says."""
        stored = step.stored
        assert stored is not None
        found = book_rows.find_book(self.conn, stored.book_id)
        if found is not None:
            self.progress.message(f"resuming {step.display} ("
                                  f"{found.status.get('embedded', 0)}/{found.chunks} "
                                  "chunks embedded so far)")
        outcome = FileOutcome("resumed", step.display, slug=stored.slug,
                              chunks=found.chunks if found is not None else 0,
                              embedded=self.finish(stored.book_id, report))
        if step.action == "skipped":
            report.warnings.append(finished_unread(step.display, step.error or ""))
        return outcome

    def finish_unread(self, step: ItemStep, outcome: FileOutcome, report: SyncReport, *,
                      dry_run: bool = False) -> None:
        """``step``'s file failed (``outcome``: there but unreadable, or not a book it can
        read), as every sync tells it until it can be read: its stored book stays as last
        read, and one an interrupted run left half-done is finished from what is stored
        (that needs no file), which a warning says; a dry run counts the chunks to embed."""
        if step.stored is None:
            return
        outcome.slug = step.stored.slug
        found = book_rows.find_book(self.conn, step.stored.book_id)
        if found is None or found.id not in self.unfinished:
            return
        outcome.chunks = found.chunks
        if dry_run:
            outcome.embedded = found.chunks - found.status.get("embedded", 0)
            report.embedded += outcome.embedded
        else:
            outcome.embedded = self.finish(found.id, report)
        report.warnings.append(finished_unread(step.display, outcome.error or "",
                                               dry_run=dry_run))

    def _apply(self, step: ItemStep, report: SyncReport) -> FileOutcome:
        if step.action == "removed" and step.stored is not None:
            with transaction(self.conn):
                book_rows.delete_book(self.conn, step.stored.book_id)
            return FileOutcome("removed", step.display, slug=step.stored.slug,
                               error=step.error)
        if step.action == "skipped" and step.stored and step.stored.book_id in self.unfinished:
            return self.resume(step, report)  # its file is missing: finished from the rows
        if step.action in ("skipped", "failed"):
            outcome = FileOutcome(step.action, step.display, error=step.error,
                                  version=_version(step))
            if step.action == "failed":
                self.finish_unread(step, outcome, report)
            return outcome
        if step.action in ("moved", "updated"):
            return self.update(step, report)
        if step.action == "unchanged":
            stored, info = step.stored, step.info
            assert stored is not None and info is not None
            if (info.size, info.mtime) != (stored.source_size, stored.source_mtime):
                with transaction(self.conn):
                    folders.update_file_stat(self.conn, stored.book_id, info.size, info.mtime)
            if stored.book_id not in self.unfinished:
                return FileOutcome("unchanged", step.display, slug=stored.slug)
            return self.resume(step, report)
        return self.ingest(step, report)


def follow(deps: IngestDeps, library: SourceLibrary | str, report: SyncReport,
            progress: Progress, *, remove_missing: bool, dry_run: bool,
            within: list[str] | None = None, unread: str = "") -> None:
    """Bring one library's books in line with it (see the module doc). A library not read
    now is given as its path, with why in ``unread``: only its unfinished books are acted
    on, finished from what is stored."""
    if isinstance(library, str):
        current = None
        steps = [ItemStep("skipped", None, stored, error=unread)
                 for stored in source_rows.stored_items(deps.conn, library).values()]
    else:
        current = library
        steps = plan(deps.conn, library, remove_missing=remove_missing, within=within)
        report.warnings += library.warnings
        left_out = [s for s in steps if s.action == "left out"]
        steps = [s for s in steps if s.action != "left out"]
        if left_out and not remove_missing:  # said once, by `ingest LIBRARY`; sync is quiet
            report.warnings.append(f"{library.path}: left out {len(left_out)} item(s) whose "
                                   "books were deleted from grimoire-beholder")
    stored = {s.stored.book_id for s in steps if s.stored is not None}
    unfinished = folders.unfinished_books(deps.conn) & stored if stored else set()
    if current is None:
        steps = [s for s in steps if s.stored is not None and s.stored.book_id in unfinished]
    if dry_run:
        previewer = _Applier(deps, current, progress, unfinished)
        report.files += [previewer.preview(s, report) for s in steps]
        return
    if any(s.action in ("added", "changed") for s in steps) or unfinished:
        deps.check_models()
    if current is not None and remove_missing:  # dropped by the library too: a reused
        where = str(current.path)                 # key is a new item
        gone = source_rows.dropped_items(deps.conn, where) - {i.key for i in current.items}
        if gone:
            with transaction(deps.conn):
                for key in gone:
                    source_rows.undrop_item(deps.conn, where, key)
    applier = _Applier(deps, current, progress, unfinished)
    progress.stage("books", sum(1 for s in steps if s.action != "unchanged"
                                or (s.stored is not None and s.stored.book_id in unfinished)))
    for step in steps:
        outcome = applier.apply(step, report)
        report.files.append(outcome)
        if outcome.action != "unchanged":
            progress.message(outcome.describe())
            progress.advance()


def _version(step: ItemStep) -> tuple[str, int, float, str] | None:
    """The item's file as the plan found it (``FileOutcome.version``), when it has one."""
    if step.info is not None:
        return file_version(step.info.path, step.info)
    return file_version(step.item.file) if step.item and step.item.file else None


def read_library(deps: IngestDeps, folder: Path) -> SourceLibrary:
    """The library at ``folder`` (resolved): its database's rows, read from a private copy
    (``store/foreign_copy.py``), made into items by ``sources/``."""
    order = formats_of(deps)
    if detect(folder) == "calibre":
        with foreign_database(folder / CALIBRE_DB, "Calibre library database") as conn:
            books = _named(folder / CALIBRE_DB, calibre_rows.read_books, conn)
        return calibre_library(folder, books, order)
    with foreign_database(folder / ZOTERO_DB, "Zotero database") as conn:
        items = _named(folder / ZOTERO_DB, zotero_rows.read_items, conn)
        annotations = _named(folder / ZOTERO_DB, zotero_rows.read_annotations, conn)
    return zotero_library(folder, items, annotations, order)


def _named(path: Path, read: Callable[[Any], _T], conn: Any) -> _T:
    """``read(conn)``, its InputFileError naming the database (a sync warning names which
    of several libraries could not be read)."""
    try:
        return read(conn)
    except InputFileError as exc:
        raise InputFileError(f"{path}: {exc}") from exc


def ingest_library(deps: IngestDeps, folder: Path, *, within: list[Path] | None = None,
                   progress: Progress) -> SyncReport:
    """Ingest every readable item of the Calibre library or Zotero data folder at ``folder``
    and remember it for ``sync`` (which also removes what the library dropped); with
    ``within``, items whose file lies outside those folders are skipped."""
    folder = Path(folder).resolve()
    kind = detect(folder)
    if kind is None:
        raise InputFileError(f"{folder}: neither a Calibre library nor a Zotero data folder")
    library = read_library(deps, folder)
    started = time.perf_counter()
    report = SyncReport()
    with deps.library_writer():
        old = library_moves.moved_from(deps.conn, library)
        if old is None:
            progress.message(f"{folder} is a {KIND_NAMES[kind]}: ingesting its "
                             f"{len(library.items)} item(s) with their metadata")
            with transaction(deps.conn):
                source_rows.save_library(deps.conn, str(folder), kind)
        else:  # its books follow it, as a sync would follow its edits
            progress.message(f"{folder} is the {KIND_NAMES[kind]} that was at {old}: its "
                             "books follow it")
            library_moves.follow_move(deps.conn, old, library)
        hand_over(deps, str(folder), kind, report, progress)
        follow(deps, library, report, progress, remove_missing=old is not None,
                dry_run=False,
                within=None if within is None else [str(Path(w).resolve()) for w in within])
    report.seconds = time.perf_counter() - started
    return report
