"""``sync --watch``: keep folder libraries — and Calibre libraries and Zotero data folders,
whose database their application rewrites on every edit — in sync while files change, until
stopped.

One initial sync, then a watchfiles loop over the roots: changes are debounced (about a
second, so an editor's save-rename-delete dance or a ``git checkout`` arrives as one batch)
and each batch runs a sync of the watched folders. A sync only stats unchanged files and
hashes the ones whose mtime or size moved, so handling a batch this way costs milliseconds
for the untouched files and treats each changed one exactly like ``sync`` would — moves
included, when the delete and the create arrive in one batch.

Safe next to the MCP server: the server only reads, SQLite runs in WAL mode, and each batch
commits file by file, so a reader always sees whole books. The writer lock is taken per
batch, not for the whole watch, so an ``ingest`` in another terminal can run in between; a
batch that finds the lock busy (or the models down) is reported and retried on the next
change.

A file that fails (a corrupt PDF, an unreadable file) or is skipped (nothing to index) is
tried again by every batch, but named once: a batch's report names it again only when its
file changed since (size, mtime or hash) or its reason did, and one that ingests is told as
added or changed; the names it need not repeat are in its ``told_before``. A warning that
stands from one batch to the next (a file whose name is not UTF-8, a second watched folder
gone, a folder that cannot be listed) is likewise named once, in the first report it appears
in (a new one makes a batch worth reporting), and listed in the later ones'
``warned_before`` while it stands. Two folders' files of the same relative name are told
apart by their file, not by the line that names them. The watch returns the files failing
when it stopped.

A file whose name is not UTF-8 makes the watcher fail as it reports its change (watchfiles
hands over names as text): the watcher is set up again and a sync finds whatever changed
with it, so such a file is skipped with its warning, as by ``sync``, and the watch goes on.

A watched folder that is deleted, or deleted and made again (a fresh clone, a restore from
backup), is noticed by its own deletion event or, failing that, by its changed inode within
about half a second: the watcher, which was bound to the old folder, is set up again on
what is there after a sync, and a folder gone entirely is looked for until it comes back
(its books are kept meanwhile, as by ``sync``).

``stop_event`` (anything with ``is_set()``, e.g. ``threading.Event``) ends the loop within
a fraction of a second; Ctrl-C ends it too.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from grimoire_beholder.citation import one_line
from grimoire_beholder.errors import GrimoireError, LibraryBusyError, ModelError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.external_sync import sync_all
from grimoire_beholder.ingest.folder import ALWAYS_SKIPPED_DIRS
from grimoire_beholder.ingest.progress import NullProgress, Progress, Retotals
from grimoire_beholder.parse import SUPPORTED_EXTENSIONS
from grimoire_beholder.sources.items import CALIBRE_DB, ZOTERO_DB
from grimoire_beholder.store import folders, source_rows
from grimoire_beholder.views import FileOutcome, SyncReport

DEBOUNCE_MS = 1000
_PROBLEMS = ("failed", "skipped")  # the outcomes a watch names once
_LIBRARY_FILES = {name + end for name in (CALIBRE_DB, ZOTERO_DB) for end in ("", "-wal",
                                                                            "-journal")}
_POLL_S = 0.5  # how often a watch whose folders are all gone looks for them
# What watchfiles' watcher raises (a RuntimeError) for a changed file whose name is not UTF-8.
_UNDECODABLE = "Unable to decode path"


class StopEvent(Protocol):
    def is_set(self) -> bool: ...


class _Relevant:
    """watchfiles filter: changes that could matter to a sync (never the library's own db)."""

    def __init__(self, roots: list[str], skip: set[Path]) -> None:
        self.roots = roots
        self.skip = {str(p) for p in skip}

    def __call__(self, change: Any, path: str) -> bool:
        if path in self.skip:
            return False
        if path in self.roots:  # the watched folder itself deleted: its watcher is dead
            return True
        root = next((r for r in self.roots if path.startswith(r.rstrip(os.sep) + os.sep)),
                    None)
        if root is None:
            return False
        parts = Path(os.path.relpath(path, root)).parts
        if any(p.startswith(".") or p in ALWAYS_SKIPPED_DIRS for p in parts):
            return False
        if Path(path).name in _LIBRARY_FILES:  # Calibre or Zotero wrote its database
            return True
        suffix = Path(path).suffix.lower()
        # a folder (created, renamed or deleted) can hold or have held supported files
        return suffix in SUPPORTED_EXTENSIONS or os.path.isdir(path) or (
            suffix == "" and not os.path.exists(path))


def watch(deps: IngestDeps, dirs: list[Path] | None = None, *, stop_event: StopEvent | None = None,
          on_report: Callable[[SyncReport], None] | None = None,
          progress: Progress | None = None, debounce_ms: int = DEBOUNCE_MS,
          after_sync: Callable[[], None] | None = None) -> list[FileOutcome]:
    """Sync now, then again after every batch of changes under the folders, until stopped;
    the files failing at the last sync then.

    ``dirs`` defaults to every synced root (one not there now is waited for); a file among
    them is refused (GrimoireError), as nothing would ever be noticed of it. ``on_report``
    receives the initial report and the report of every batch with news: a change, or a
    failed or skipped file not named before as it is now (see the module doc). ``progress``
    gets a batch's lines naming such files at the batch's end, and only the news among them.
    ``after_sync`` runs after each sync that wrote something, before its report is passed on
    (the facade folds the batch into the search index there, as after a ``sync``).
    """
    import watchfiles

    held = _Held(progress or NullProgress())
    settle = after_sync or (lambda: None)
    told = _Told()
    report_to = on_report or (lambda report: None)
    if dirs:
        watched = [str(Path(d).expanduser().resolve()) for d in dirs]
        files = [d for d, path in zip(dirs, watched, strict=True) if os.path.isfile(path)]
        if files:  # a watch is set on folders: one on a file would wait for it for good
            raise GrimoireError(f"{one_line(str(files[0]))} is a file: `sync --watch` "
                                "watches folders; give the folder that holds it (or run "
                                "`grimoire-beholder sync FILE` after each edit)")
    else:
        # a root not there now (an unplugged drive) is waited for, not dropped
        watched = [r.path for r in folders.list_roots(deps.conn)] + [
            path for path, _ in source_rows.libraries(deps.conn)]
    if not watched:
        raise GrimoireError("nothing to watch: ingest a folder first (ingest DIR)")

    def sync_now() -> SyncReport:  # the folders, and the Calibre and Zotero libraries
        try:
            report = sync_all(deps, dirs or None, dry_run=False, confined=False,
                              progress=held)
        except ModelError:
            settle()  # the books it committed before the models failed
            raise
        if report.changed_anything:
            settle()  # as a sync does at its end, before the report is told
        return report

    first = sync_now()
    told.sort(first)  # all of it is news
    report_to(first)
    held.holding = True
    relevant = _Relevant(watched, deps.own_files())

    def batch() -> None:
        try:
            report = sync_now()
        except (LibraryBusyError, ModelError) as exc:
            held.release([])
            held.message(f"warning: {exc} — will retry on the next change")
            return
        fresh, warned = told.sort(report)
        held.release(fresh)
        if fresh or warned or any(f.action not in (*_PROBLEMS, "unchanged")
                                  for f in report.files):
            report_to(report)

    def tell_moved(paths: list[str]) -> None:
        for path in paths:
            held.message(f"{path}: " + ("replaced or back; watching it again"
                                        if os.path.isdir(path) else
                                        "gone; watching for it to come back"))

    while True:  # one watcher per arrangement of the folders; re-armed when one goes or comes
        armed = {path: _identity(path) for path in watched}
        present = [path for path, identity in armed.items() if identity is not None]
        if not present:
            if not _wait_for_any(watched, stop_event):
                return told.failing
            batch()  # it came back, perhaps full of files
            continue
        try:
            for changes in watchfiles.watch(*present, watch_filter=relevant,
                                            debounce=debounce_ms, stop_event=stop_event,
                                            rust_timeout=500, yield_on_timeout=True,
                                            raise_interrupt=False):
                touched = {path for _, path in changes}
                moved = [path for path in watched
                         if path in touched or _identity(path) != armed[path]]
                if changes or moved:
                    batch()
                if moved:
                    tell_moved(moved)
                    break
            else:
                return told.failing  # stopped
        except RuntimeError as exc:  # the watcher died on a name that is not UTF-8
            if _UNDECODABLE not in str(exc):
                raise
            batch()  # the changes it held are lost with it: a sync finds them
        except FileNotFoundError:  # a folder went between arming and the watcher's start
            moved = [path for path in watched if _identity(path) != armed[path]]
            if not moved:
                raise
            batch()  # then re-armed on the folders there now, as when one goes while watched
            tell_moved(moved)


class _Told:
    """The failed and skipped files a watch's reports have named, each as it was then
    (reason and ``FileOutcome.version``), and the warnings standing apart from them; one
    that is gone is forgotten, so it is named again if it comes back."""

    def __init__(self) -> None:
        self.named: set[tuple[str, str, str | None, object]] = set()
        self.warned: set[str] = set()
        self.failing: list[FileOutcome] = []  # as the last sync left them

    def sort(self, report: SyncReport) -> tuple[list[FileOutcome], list[str]]:
        """The report's failed and skipped files not named before as they are now, and its
        warnings not named before; the others go into its ``told_before`` and
        ``warned_before``. A skipped file's warning goes with its file; a warning about a
        file this sync read again (a parser's) is always news, with the file."""
        problems = [f for f in report.files if f.action in _PROBLEMS]
        keys = [(f.action, f.path, f.error, f.version) for f in problems]
        report.told_before = [f for f, key in zip(problems, keys, strict=True)
                              if key in self.named]
        fresh = [f for f, key in zip(problems, keys, strict=True) if key not in self.named]
        skips = Counter(f"skipped {f.path}: {f.error}" for f in problems
                        if f.action == "skipped")
        told_skips = Counter(f"skipped {f.path}: {f.error}" for f in report.told_before
                             if f.action == "skipped")
        read = tuple(f"{f.path}: " for f in report.files
                     if f.action not in (*_PROBLEMS, "unchanged", "removed"))
        standing: list[str] = []
        for warning in report.warnings:
            if skips[warning] > 0:  # a skipped file's: told before with its file, or not
                skips[warning] -= 1
                if told_skips[warning] > 0:
                    told_skips[warning] -= 1
                    report.warned_before.append(warning)
            elif not warning.startswith(read):
                standing.append(warning)
        report.warned_before += [w for w in standing if w in self.warned]
        warned = [w for w in standing if w not in self.warned]
        self.named, self.warned, self.failing = set(keys), set(standing), report.failed
        return fresh, warned


class _Held:
    """A watch's progress. Once ``holding`` (after the first sync), the lines naming failed
    or skipped files wait for the batch's end, where :meth:`release` passes on those of
    the files that are news and drops the rest."""

    def __init__(self, inner: Progress) -> None:
        self.inner, self.holding, self.held = inner, False, list[str]()

    def stage(self, name: str, total: int) -> None:
        self.inner.stage(name, total)

    def advance(self, n: int = 1) -> None:
        self.inner.advance(n)

    def retotal(self, total: int) -> None:
        if isinstance(self.inner, Retotals):
            self.inner.retotal(total)

    def message(self, text: str) -> None:
        if self.holding and text.startswith(tuple(f"{action} " for action in _PROBLEMS)):
            self.held.append(text)
        else:
            self.inner.message(text)

    def release(self, fresh: list[FileOutcome]) -> None:
        """Pass on the held lines of ``fresh`` (as ``FileOutcome.describe`` wrote them),
        one each: two folders' files of one relative name write the same line."""
        lines, held, self.held = Counter(f.describe() for f in fresh), self.held, []
        for text in held:
            if lines[text] > 0:
                lines[text] -= 1
                self.inner.message(text)


def _identity(path: str) -> tuple[int, int] | None:
    """The folder at ``path`` (device, inode), or None when there is none: a watch is
    bound to the folder, so one deleted and made again is a new folder to watch."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _wait_for_any(paths: list[str], stop_event: StopEvent | None) -> bool:
    """Wait until one of the folders exists again: True then, False when stopped first."""
    try:
        while stop_event is None or not stop_event.is_set():
            if any(_identity(path) is not None for path in paths):
                return True
            time.sleep(_POLL_S)
    except KeyboardInterrupt:
        pass
    return False
