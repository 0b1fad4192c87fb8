"""``sync`` over the Calibre libraries and Zotero data folders the library follows, beside
its synced folders: which remembered libraries a sync reaches (:func:`split_scope`), each
read and followed in turn (:func:`sync_libraries`, through ``external.follow``), and the one
report of the folder sync and the libraries (:func:`sync_all`, also ``sync --watch``'s).

A library not on disk (an unplugged drive, a moved folder) or whose database cannot be read
keeps its books, with a warning saying why; only the books an interrupted run left
unfinished are acted on, finished from what is stored (``external.py``'s module doc).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.external import follow, read_library
from grimoire_beholder.ingest.external_plan import under
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.ingest.sync import sync
from grimoire_beholder.sources.discover import detect
from grimoire_beholder.sources.items import CALIBRE_DB, KIND_NAMES, ZOTERO_DB, SourceLibrary
from grimoire_beholder.store import source_rows
from grimoire_beholder.views import SyncReport


def sync_all(deps: IngestDeps, dirs: list[Path] | None, *, dry_run: bool, confined: bool,
             progress: Progress) -> SyncReport:
    """The folder sync (``ingest/sync.py``) of what lies outside the remembered libraries,
    then the sync of those libraries, in one report."""
    started = time.perf_counter()
    in_libraries, elsewhere = split_scope(deps, dirs)
    report = (sync(deps, elsewhere, dry_run=dry_run, confined=confined, progress=progress)
              if dirs is None or elsewhere else SyncReport(dry_run=dry_run))
    sync_libraries(deps, in_libraries, report, dry_run=dry_run, confined=confined,
                   progress=progress)
    report.seconds = time.perf_counter() - started
    return report


def split_scope(deps: IngestDeps, dirs: list[Path] | None
                ) -> tuple[list[str] | None, list[Path] | None]:
    """A sync's folders split into (those in or holding a remembered library, the rest for
    the folder sync); (None, None) when the sync is not narrowed."""
    if dirs is None:
        return None, None
    libraries = [path for path, _ in source_rows.libraries(deps.conn)]
    ours: list[str] = []
    rest: list[Path] = []
    for given in dirs:
        try:
            real = str(Path(given).expanduser().resolve())
        except (OSError, RuntimeError, ValueError):
            rest.append(given)  # the folder sync names the problem
            continue
        if real not in libraries and not os.path.lexists(real):
            rest.append(given)  # a typo inside a library: the folder sync's error names it
        elif any(under(real, [lib]) or under(lib, [real]) for lib in libraries):
            ours.append(real)
        else:
            rest.append(given)
    return ours, rest


def sync_libraries(deps: IngestDeps, scope: list[str] | None, report: SyncReport, *,
                   dry_run: bool, confined: bool = False, progress: Progress) -> None:
    """Follow every remembered library (those inside or holding ``scope``'s folders when
    given) into ``report``: additions, removals, replaced files and metadata edits.
    ``confined``: no new item is added whose file lies outside its library's folder."""
    for path, kind in source_rows.libraries(deps.conn):
        if scope is not None and not (under(path, scope) or any(under(s, [path])
                                                                 for s in scope)):
            continue
        folder = Path(path)
        library: SourceLibrary | str = path  # not read: its books are kept
        if detect(folder) != kind and (denied := _denied(folder, kind)) is not None:
            unread = f"its library cannot be read: {denied}"
            report.warnings.append(f"{path}: the {KIND_NAMES[kind]} cannot be read "
                                   f"({denied}); its books are kept")
        elif detect(folder) != kind:
            unread = f"the {KIND_NAMES[kind]} is not on disk"
            report.warnings.append(f"{path}: {KIND_NAMES[kind]} not found; its books are "
                                   "kept (moved? `ingest` it where it is now: they follow)")
        else:
            try:
                library, unread = read_library(deps, folder), ""
            except InputFileError as exc:
                unread = f"its library could not be read: {exc}"
                report.warnings.append(f"{exc}; its books are kept")
        within = [path] if confined else None
        with deps.library_writer() if not dry_run else contextlib.nullcontext():
            follow(deps, library, report, progress, remove_missing=True, dry_run=dry_run,
                    within=within, unread=unread)


def _denied(folder: Path, kind: str) -> str | None:
    """Why a remembered library's database cannot be seen when the folder on its way may
    not be searched (permission denied), or None when it is just not there: then the
    library is away or moved, which its warning says instead."""
    try:
        os.stat(folder / (CALIBRE_DB if kind == "calibre" else ZOTERO_DB))
    except PermissionError as exc:
        return exc.strerror or str(exc)
    except OSError:
        return None
    return None
