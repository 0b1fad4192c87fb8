"""Folder ingest and sync: bring the library in line with files on disk, re-embedding little.

A sync first *plans* without writing (``sync_plan.py``: unchanged, changed, moved, added and
removed files), then *applies* the plan under the library's writer lock (``IngestDeps``: on
a server database, one lock among folder syncs and each book's own lock while it is
written): moves, removals, changed files, new files, each file on its own, so a broken file
is reported at the end without stopping the batch. A changed file is replaced in place (same
id and slug) by ``store.folders.replace_book``, which carries over the context and vector of
every chunk whose content hash (chunk text + section breadcrumb) is unchanged and the
summary of every section whose text is unchanged; only the rest goes through the model
stages. Errors that would fail every file (models unreachable, database unwritable, another
writer) stop the run instead; what was committed stays, and the next sync resumes
unfinished books: told as *resumed*, or under *moved* when that sync also finds its file
moved or renamed (it re-points the book and then finishes it, so one sync leaves every book
searchable).

A book whose file is there but fails (unreadable: permission denied; or damaged, refused
before any write) is *failed*, once, by every sync until it is mended; one an interrupted run
left half-done is finished all the same, from its stored chunks, with a warning saying so
(``Syncer._keep``).

A file with nothing to index (empty, only headings) is *skipped* with a warning rather than
failed, so it does not fail every later sync; a book whose file changed into such a file is
removed. A dry run says the same.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from grimoire_beholder.errors import (
    LibraryBusyError,
    ModelError,
    NoTextError,
    StorageError,
)
from grimoire_beholder.ingest.build import (
    book_slug,
    failure_reason,
    file_info,
    free_slug,
    prepare_book,
)
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.progress import (
    FolderChunks,
    NullProgress,
    Progress,
    estimate_chunks,
)
from grimoire_beholder.ingest.service import store_book
from grimoire_beholder.ingest.sync_plan import handed_over, plan
from grimoire_beholder.ingest.sync_scope import (
    known_spelling,
    resolve_dir,
    sync_scope,
    under,
)
from grimoire_beholder.ingest.sync_steps import (
    Step,
    display_of,
    estimate,
    failed,
    files_of,
    finished_by_steps,
    finished_unread,
    version,
)
from grimoire_beholder.parse.source import links_not_followed
from grimoire_beholder.store import book_rows, folders
from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.views import FileOutcome, SyncReport

# A book an earlier run left half-done: (id, path as shown, file size, file hash, on disk).
_Unfinished = tuple[int, str, int, str, bool]

# Errors that are about the library or the models, not about one file: they stop the run.
FATAL = (ModelError, StorageError, LibraryBusyError)


class Syncer:
    """Applies (or previews) one sync's plan (``sync_plan.plan``)."""

    def __init__(self, deps: IngestDeps, progress: Progress | None = None) -> None:
        self.deps = deps
        self.conn = deps.conn
        self.progress = progress or NullProgress()
        self.finishing: set[int] = set()  # see finished_by_steps
        self.half_done: set[int] = set()  # books an interrupted run left unfinished

    # -- applying ------------------------------------------------------------------------
    def apply(self, steps: list[Step], report: SyncReport, scope: list[str] | None) -> None:
        """Carry out the plan; per-file failures are recorded, fatal errors raised."""
        unfinished = self._unfinished(scope, steps)
        self.finishing = finished_by_steps(self.conn, steps)
        self.half_done = folders.unfinished_books(self.conn)
        if (any(s.action in ("added", "changed") for s in steps) or unfinished
                or self.finishing):
            self.deps.check_models()  # before any write: models and embedding stamp
        chunks = FolderChunks(self.progress)
        chunks.start([estimate_chunks(path, size) for _, path, size, _, _ in unfinished]
                     + [self._estimate(s) for s in steps])
        # An interrupted book first: the rerun is mostly its work, and it is told as resumed
        # (not also as unchanged, so the counts add up to the files looked at).
        resumed = self._resume(unfinished, report, chunks)
        for step in steps:
            if step.action == "unchanged":
                kept = self._unchanged(step)
                if step.stored is None or step.stored.book_id not in resumed:
                    report.files.append(kept)
                continue
            try:
                with self.deps.book_writer(*files_of(step)):
                    outcome = self._apply_one(step, report,
                                              chunks.file(self._estimate(step)))
            except FATAL:
                raise
            except NoTextError as exc:
                outcome = self._skip(step, exc, report, remove=True)
            except Exception as exc:  # one broken file must not stop the batch
                outcome = failed(step, exc)
            report.files.append(outcome)
            self._announce(outcome)
            chunks.done()

    def _resume(self, unfinished: list[_Unfinished], report: SyncReport,
                chunks: FolderChunks) -> set[int]:
        """Finish the model stages of books an earlier run left half-done; their ids. One
        whose file is not on disk (a drive unplugged) is finished too, from its stored
        chunks, with a warning saying so."""
        for book_id, display, size, source_hash, on_disk in unfinished:
            found = book_rows.find_book(self.conn, book_id)
            if found is not None:
                self.progress.message(f"resuming {display} ({found.status.get('embedded', 0)}"
                                      f"/{found.chunks} chunks embedded so far)")
            with self.deps.book_writer(source_hash):
                embedded = self._finish(book_id, report,
                                        chunks.file(estimate_chunks(display, size)))
            outcome = FileOutcome("resumed", display, slug=found.slug if found else None,
                                  chunks=found.chunks if found else 0, embedded=embedded)
            report.files.append(outcome)
            self._announce(outcome)
            if not on_disk:
                report.warnings.append(finished_unread(display, "its file is not on disk"))
            chunks.done()
        return {book_id for book_id, *_ in unfinished}

    def _finish(self, book_id: int, report: SyncReport, progress: Progress) -> int:
        """Run the model stages an earlier run left undone on ``book_id`` (from its stored
        chunks: no file is read); the chunks it embedded."""
        stages = self.deps.run_stages(book_id, progress)
        self._count(report, stages.summaries, stages.contexts, stages.embedded)
        return stages.embedded

    def _estimate(self, step: Step) -> int:
        """The chunks ``step`` probably embeds (an unfinished book's it finishes too)."""
        if step.stored is not None and step.stored.book_id in self.finishing:
            return estimate_chunks(step.display, step.stored.size)
        return estimate(step)

    def _unfinished(self, scope: list[str] | None, steps: list[Step]) -> list[_Unfinished]:
        """Books in scope left half-done by an earlier run that this plan does not touch:
        (id, path as shown, file size, file hash, whether the file is there), those whose
        file is missing (a root away, an empty mount point: the plan keeps them) too."""
        todo = folders.unfinished_books(self.conn)
        touched = {s.stored.book_id for s in steps if s.stored and s.action != "unchanged"}
        return [(s.book_id, display_of(s.path, s.root), s.size, s.sha256,
                 os.path.isfile(s.path))
                for s in folders.stored_files(self.conn)
                if s.book_id in todo and s.book_id not in touched
                and (scope is None or under(s.path, scope))]

    def _unchanged(self, step: Step) -> FileOutcome:
        stored = step.stored
        assert stored is not None and step.path is not None
        if step.info is not None or (step.root, step.group) != (stored.root, stored.group):
            st = step.path.stat()
            with transaction(self.conn):  # same bytes: remember the new stat and place
                folders.update_file_stat(self.conn, stored.book_id, st.st_size, st.st_mtime)
                book_rows.relocate_book(self.conn, stored.book_id, source_path=stored.path,
                                         source_mtime=st.st_mtime, source_root=step.root,
                                         source_group=step.group)
        return FileOutcome("unchanged", step.display, slug=stored.slug)

    def _apply_one(self, step: Step, report: SyncReport, progress: Progress) -> FileOutcome:
        if step.action == "moved":
            assert step.stored and step.info
            with transaction(self.conn):
                book_rows.relocate_book(self.conn, step.stored.book_id,
                                         source_path=step.info.path,
                                         source_mtime=step.info.mtime,
                                         source_root=step.root, source_group=step.group)
            # An interrupted run left it half-done: finished here, not by the next sync.
            embedded = (self._finish(step.stored.book_id, report, progress)
                        if step.stored.book_id in self.finishing else 0)
            return FileOutcome("moved", step.display, slug=step.stored.slug,
                               old_path=display_of(step.stored.path, step.stored.root),
                               embedded=embedded)
        if step.action == "removed":
            assert step.stored
            with transaction(self.conn):
                book_rows.delete_book(self.conn, step.stored.book_id)
            return FileOutcome("removed", step.display, slug=step.stored.slug)
        if step.action == "failed":  # the plan could not read it: so every sync until it can
            assert step.stored
            outcome = FileOutcome("failed", step.display, slug=step.stored.slug,
                                  error=step.error, version=version(step))
            self._keep(step, outcome, report, progress)
            return outcome
        return self._ingest(step, report, progress)

    def _keep(self, step: Step, outcome: FileOutcome, report: SyncReport,
              progress: Progress, *, dry_run: bool = False) -> None:
        """``step``'s file failed (``outcome``): its stored book stays as last read, and one
        an interrupted run left half-done is finished from what is stored (that needs no
        file), which a warning says; a dry run counts the chunks it would embed."""
        stored = step.stored
        if stored is None:
            return
        outcome.slug = stored.slug
        if stored.book_id not in self.half_done:
            return
        found = book_rows.find_book(self.conn, stored.book_id)
        if found is None:
            return
        outcome.slug, outcome.chunks = found.slug, found.chunks
        if dry_run:
            outcome.embedded = found.chunks - found.status.get("embedded", 0)
            report.embedded += outcome.embedded
        else:
            outcome.embedded = self._finish(stored.book_id, report, progress)
        report.warnings.append(finished_unread(step.display, outcome.error or "",
                                               dry_run=dry_run))

    def _ingest(self, step: Step, report: SyncReport, progress: Progress) -> FileOutcome:
        """Parse and store an added or changed file, then run its model stages (reported to
        ``progress``)."""
        path, stored = step.path, step.stored
        assert path is not None
        info = step.info or file_info(path)
        # Another process may have ingested it by name since the plan (a new file, or a
        # changed one with --force, which re-cut the planned book in place or replaced it):
        # its file lock is held here, so that writer is done; its book stands, never a
        # second one beside it.
        current = book_rows.find_book(self.conn, stored.book_id) if stored is not None else None
        if current is not None and current.source_hash == info.sha256:
            return FileOutcome("unchanged", step.display, slug=current.slug)
        if current is None:
            there = [b for b in book_rows.books_of_file(self.conn, info.path)
                     if b.source_hash == info.sha256]
            if there:
                return FileOutcome("unchanged", step.display, slug=there[0].slug)
            if stored is not None:  # deleted meanwhile: that delete stands (sync leaves it out)
                reason = ("its book was deleted by another process during this sync; left "
                          "out (`grimoire-beholder ingest` of the file brings it back)")
                report.warnings.append(f"skipped {step.display}: {reason}")
                return FileOutcome("skipped", step.display, error=reason)

        def naming(suggested: str) -> tuple[str, str]:
            if stored is not None:  # a changed file keeps its book's slug and name
                return stored.slug, stored.name
            return free_slug(book_slug(suggested, path, info.sha256), step.group,
                              book_rows.slugs(self.conn)), suggested

        # The parser's warnings (pages without text …) go in the report, which the CLI
        # prints at the end (under --quiet too), --json and the MCP tools return.
        try:
            prepared = prepare_book(path, info, self.deps.config, label=step.display,
                                    progress=NullProgress(), naming=naming, root=step.root,
                                    group=step.group, limit=self.deps.chunk_limit)
        except (*FATAL, NoTextError):
            raise
        except Exception as exc:  # nothing written: the book stays as last read
            outcome = failed(step, exc)
            self._keep(step, outcome, report, progress)
            return outcome
        report.warnings += [f"{step.display}: {w}" for w in prepared.warnings]
        _, reused, stages = store_book(
            self.deps, prepared.book, progress,
            in_place_of=stored.book_id if stored is not None else None)
        self._count(report, stages.summaries, stages.contexts, stages.embedded)
        report.reused += reused
        return FileOutcome(step.action, step.display, slug=prepared.book.slug,
                           chunks=len(prepared.chunk_hashes), embedded=stages.embedded,
                           reused=reused)

    def _skip(self, step: Step, exc: NoTextError, report: SyncReport, *,
              remove: bool) -> FileOutcome:
        """A file with nothing to index: a warning, and its old book (if any) removed."""
        reason = failure_reason(exc, step.display, step.path)
        if step.stored is not None:
            reason += (f"; its earlier version {'is' if remove else 'would be'} removed from "
                       "the library")
            if remove:
                with transaction(self.conn):
                    book_rows.delete_book(self.conn, step.stored.book_id)
        report.warnings.append(f"skipped {step.display}: {reason}")
        return FileOutcome("skipped", step.display, error=reason, version=version(step))

    @staticmethod
    def _count(report: SyncReport, summaries: int, contexts: int, embedded: int) -> None:
        report.summaries += summaries
        report.contexts += contexts
        report.embedded += embedded

    def _announce(self, outcome: FileOutcome) -> None:
        self.progress.message(outcome.describe())

    # -- dry run --------------------------------------------------------------------------
    def preview(self, steps: list[Step], report: SyncReport, scope: list[str] | None
                ) -> None:
        """What apply would do, including how many chunks would be embedded; no writes.
        Books an interrupted run left unfinished count too: apply resumes them."""
        unfinished = self._unfinished(scope, steps)
        resumed = {book_id for book_id, *_ in unfinished}
        finishing = finished_by_steps(self.conn, steps)
        self.half_done = folders.unfinished_books(self.conn)
        for step in steps:
            if step.action == "unchanged" and step.stored and step.stored.book_id in resumed:
                continue  # told as resumed below, as apply tells it
            outcome = FileOutcome(step.action, step.display,
                                  slug=step.stored.slug if step.stored else None)
            if step.action == "moved" and step.stored:
                outcome.old_path = display_of(step.stored.path, step.stored.root)
            if step.action == "failed":
                outcome.error, outcome.version = step.error, version(step)
                self._keep(step, outcome, report, self.progress, dry_run=True)
            elif step.stored and step.stored.book_id in finishing:  # apply finishes it
                found = book_rows.find_book(self.conn, step.stored.book_id)
                if found is not None:
                    outcome.embedded = found.chunks - found.status.get("embedded", 0)
                    report.embedded += outcome.embedded
            if step.action in ("added", "changed") and step.path is not None:
                try:
                    hashes = prepare_book(
                        step.path, step.info or file_info(step.path), self.deps.config,
                        label=step.display, progress=NullProgress(), limit=self.deps.chunk_limit,
                        naming=lambda suggested: ("preview", suggested)).chunk_hashes
                except NoTextError as exc:  # the real run skips it too
                    outcome = self._skip(step, exc, report, remove=False)
                except Exception as exc:  # the real run would fail on this file too
                    outcome = failed(step, exc)
                    self._keep(step, outcome, report, self.progress, dry_run=True)
                else:
                    old = (folders.embedded_hashes(self.conn, step.stored.book_id)
                           if step.stored else set())
                    outcome.chunks = len(hashes)
                    outcome.reused = sum(1 for h in hashes if h in old)
                    outcome.embedded = outcome.chunks - outcome.reused
                    report.embedded += outcome.embedded
                    report.reused += outcome.reused
            report.files.append(outcome)
        for book_id, display, _, _, on_disk in unfinished:
            found = book_rows.find_book(self.conn, book_id)
            if found is not None:
                todo = found.chunks - found.status.get("embedded", 0)
                report.files.append(FileOutcome("resumed", display, slug=found.slug,
                                                chunks=found.chunks, embedded=todo))
                report.embedded += todo
                if not on_disk:
                    report.warnings.append(finished_unread(display, "its file is not on "
                                                           "disk", dry_run=True))


def ingest_folder(deps: IngestDeps, folder: Path, *, include: tuple[str, ...] = (),
                  exclude: tuple[str, ...] = (), within: list[Path] | None = None,
                  progress: Progress) -> SyncReport:
    """Ingest every supported file under ``folder`` and remember it as a synced root.

    Like a sync of that root, except that books whose file is gone are not removed
    (removal is what ``sync`` is for). ``within``: see ``sync_plan.plan``.
    """
    started = time.perf_counter()
    root = folders.FolderRoot(str(known_spelling(deps, resolve_dir(folder))), tuple(include),
                              tuple(exclude))
    report = SyncReport()
    with deps.library_writer(), _reading(within is not None):
        with transaction(deps.conn):
            folders.save_root(deps.conn, root)
        syncer = Syncer(deps, progress)
        steps = plan(deps, [root.path], [root], report, remove_missing=False,
                            within=[str(w) for w in within] if within is not None else None)
        syncer.apply(steps, report, [root.path])
    report.seconds = time.perf_counter() - started
    return report


def hand_over(deps: IngestDeps, library: str, kind: str, report: SyncReport,
              progress: Progress) -> None:
    """Remove the books synced folders made of files under ``library``, a Calibre library
    or Zotero data folder now followed as such, which owns them (``sync_plan``'s rule):
    into ``report``, with one line saying why. Call holding the library's writer lock."""
    steps = [Step("removed", display_of(s.path, s.root), stored=s)
             for s in folders.stored_files(deps.conn) if s.root and under(s.path, [library])]
    if steps:
        Syncer(deps, progress).apply(steps, report, [library])
        report.warnings.append(handed_over(library, kind, len(steps)))


def sync(deps: IngestDeps, dirs: list[Path] | None = None, *, dry_run: bool = False,
         confined: bool = False, progress: Progress) -> SyncReport:
    """Sync every ingested file (or those under ``dirs``) with the disk; see module doc.
    ``confined``: see ``sync_plan.plan``."""
    started = time.perf_counter()
    scope = sync_scope(deps, dirs) if dirs else None
    roots = folders.list_roots(deps.conn)
    if scope is not None:  # roots inside a given folder, or containing one
        roots = [r for r in roots if under(r.path, scope)
                 or any(under(d, [r.path]) for d in scope)]
    report = SyncReport(dry_run=dry_run)
    syncer = Syncer(deps, progress)
    with _reading(confined):
        _sync_planned(syncer, deps, scope, roots, report, dry_run=dry_run, confined=confined)
    report.seconds = time.perf_counter() - started
    return report


def _reading(confined: bool) -> contextlib.AbstractContextManager[None]:
    """Confined (MCP write tools): files are read through no link (parse.source)."""
    return links_not_followed() if confined else contextlib.nullcontext()


def _sync_planned(syncer: Syncer, deps: IngestDeps, scope: list[str] | None,
                  roots: list[folders.FolderRoot], report: SyncReport, *, dry_run: bool,
                  confined: bool) -> None:
    if dry_run:
        syncer.preview(plan(deps, scope, roots, report, confined=confined), report, scope)
    else:
        with deps.library_writer():
            syncer.apply(plan(deps, scope, roots, report, confined=confined), report,
                         scope)
