"""Planning a sync (no writes): what to do with each book and file under the synced roots.

Every book in scope is compared with its file — same mtime and size means unchanged;
otherwise the sha256 decides (a touched but identical file is unchanged). Files under a
synced root that no book points at are hashed: a hash that matches a book whose file
vanished is a move (the book is re-pointed, no model call); anything else is new. Books
of a synced folder whose file vanished and did not reappear are removed; a book ingested as
a single file never is (``sync_single``: found renamed in its own folder it is moved, else
kept with a warning — its drive may be unmounted; ``delete`` removes it on purpose). A file
renamed only in case on a case-insensitive volume (still found by its old name, listed by its
new one), or only in Unicode form (NFC/NFD), is the same book moved.

A Calibre library or Zotero data folder inside a root that the library follows as such owns
its files: the folder's walk leaves it out (``ingest DIR`` says so once), and a book the folder
made of one of its files before is removed by the next sync (``external.ingest_library``
removes them when the library is ingested), so no file is two books.

A root folder that is missing altogether (an unplugged drive) is skipped with a warning: its
books are kept rather than all removed; likewise an empty folder left where a drive inside a
root was mounted. ``ingest/sync.py`` applies the plan.
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.ingest.build import file_info, file_version
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.folder import FolderFile, empty_mount_point, missing_drive, scan
from grimoire_beholder.ingest.sync_scope import folds, respelled, under
from grimoire_beholder.ingest.sync_single import kept_warnings, renamed_in_place
from grimoire_beholder.ingest.sync_steps import ORDER, Step, display_of, respell
from grimoire_beholder.sources.items import KIND_NAMES
from grimoire_beholder.store import folders, source_rows
from grimoire_beholder.views import FileOutcome, SyncReport


def plan(deps: IngestDeps, dirs: list[str] | None, roots: list[folders.FolderRoot],
         report: SyncReport, *, remove_missing: bool = True,
         within: list[str] | None = None, confined: bool = False) -> list[Step]:
    """The steps that bring the books under ``dirs`` (all, if None) in line with disk.

    ``within``: files found under the roots whose real path (links followed) lies
    outside these folders are skipped with a warning (``add_book`` over MCP).
    ``confined``: likewise for a file outside the root it was found under
    (``sync_library`` over MCP: the assistant never follows a link out of a synced
    folder to a file the library does not hold, e.g. one ``add_book`` skipped; a book
    reached that way is still synced, from its own stored place).
    """
    owned = dict(source_rows.libraries(deps.conn))
    found, gone_roots = _on_disk(deps, dirs, roots, report, remove_missing=remove_missing,
                                 within=within, confined=confined, owned=owned)
    steps: list[Step] = []
    missing: dict[str, list[folders.StoredFile]] = {}
    folded = folds(found)
    handed: dict[str, int] = {}  # followed library → folder books of its files removed
    books = folders.stored_files(deps.conn)
    for stored in books:
        if dirs is not None and not under(stored.path, dirs):
            continue
        if stored.root in gone_roots:
            continue
        if stored.root and (library := _owner(stored.path, owned)) is not None:
            if remove_missing:
                steps.append(Step("removed", display_of(stored.path, stored.root),
                                  stored=stored))
                handed[library] = handed.get(library, 0) + 1
            continue
        entry = found.pop(stored.path, None)
        spelling = None if entry else respelled(stored.path, folded)
        if spelling is not None and spelling in found:  # renamed in case or form only
            entry = found.pop(spelling)
        else:
            spelling = None
        root, group = (entry[1], entry[0].group) if entry else (stored.root, stored.group)
        try:
            step = _check_book(stored, root, group)
            if step is not None and spelling is not None:
                step = respell(step, Path(spelling))
        except OSError as exc:  # a step, so the book is told once (apply: as failed)
            steps.append(Step("failed", display_of(stored.path, root), path=Path(stored.path),
                              stored=stored, root=root, group=group,
                              error=f"cannot read ({exc.strerror or exc})"))
            continue
        if step is None:
            missing.setdefault(stored.sha256, []).append(stored)
        else:
            steps.append(step)
    for path, (f, root) in found.items():
        display = display_of(path, root)
        try:
            info = file_info(f.path)
        except OSError as exc:
            report.files.append(FileOutcome("failed", display,
                                            error=f"cannot read ({exc.strerror or exc})",
                                            version=file_version(f.path)))
            continue
        twins = missing.get(info.sha256)
        if twins:
            steps.append(Step("moved", display, path=f.path, stored=twins.pop(0),
                               info=info, root=root, group=f.group))
        else:
            steps.append(Step("added", display, path=f.path, info=info, root=root,
                               group=f.group))
    held = {s.path for s in books} | {
        str(s.path) for s in steps if s.path is not None}
    steps += renamed_in_place(missing, held)
    if remove_missing:
        kept: dict[str, list[str]] = {}  # an empty folder inside a root: a drive too
        singles: list[folders.StoredFile] = []  # ingested one by one: never removed here
        for gone in missing.values():
            for s in gone:
                if not s.root:
                    singles.append(s)
                elif (point := empty_mount_point(s.path, s.root)) is not None:
                    kept.setdefault(point, []).append(s.path)
                else:
                    steps.append(Step("removed", display_of(s.path, s.root), stored=s))
        report.warnings += [missing_drive(p, paths) or "" for p, paths in sorted(kept.items())]
        report.warnings += kept_warnings(singles)
    report.warnings += [handed_over(library, owned[library], n)
                        for library, n in sorted(handed.items())]
    steps.sort(key=lambda s: (ORDER.get(s.action, 9), s.display))
    return steps

def handed_over(library: str, kind: str, books: int) -> str:
    """The line that says why a synced folder's books of ``library``'s files went."""
    return (f"{library}: removed {books} book(s) a synced folder had made of its files: the "
            f"{KIND_NAMES[kind]} is followed on its own, and its books are its items")


def _owner(path: str, owned: dict[str, str]) -> str | None:
    """The followed library ``path`` lies in, if any."""
    return next((library for library in owned if under(path, [library])), None)


def _on_disk(deps: IngestDeps, dirs: list[str] | None, roots: list[folders.FolderRoot],
             report: SyncReport, *, remove_missing: bool, within: list[str] | None,
             confined: bool, owned: dict[str, str]
             ) -> tuple[dict[str, tuple[FolderFile, str]], set[str]]:
    """The files under the roots that :func:`plan` may act on (path → file and its root),
    and the roots that are gone; what is skipped and why goes into ``report``. ``owned``:
    the followed Calibre/Zotero libraries (path → kind), whose files are left out."""
    skip = deps.own_files()
    stored = folders.stored_files(deps.conn)
    known = {s.path for s in stored} if confined else set()
    dropped = folders.dropped_files(deps.conn)
    left_out = 0
    found: dict[str, tuple[FolderFile, str]] = {}
    gone_roots: set[str] = set()
    for folder in sorted(roots, key=lambda r: r.path):  # nested roots win (later)
        if not Path(folder.path).is_dir():
            gone_roots.add(folder.path)
            report.warnings.append(f"{folder.path}: folder not found; its books are kept")
            continue
        result = scan(Path(folder.path), include=folder.include, exclude=folder.exclude,
                      skip=skip, owned=[Path(p) for p in owned])
        report.warnings.extend(result.warnings)
        if not remove_missing:  # `ingest DIR` says it once; each sync would repeat
            report.warnings += [
                f"{folder.path}: left out {library}: the {KIND_NAMES[owned[str(library)]]} "
                "there is followed on its own (`sync` follows it), so its files are its "
                "books, not this folder's" for library in result.owned if str(library) in owned]
        unread = result.unread_note()
        if unread and not remove_missing:  # `ingest DIR` says it; each sync would repeat
            report.warnings.append(f"{folder.path}: {unread}")
        if (filtered := result.filtered_note()) and not remove_missing:
            report.warnings.append(f"{folder.path}: {filtered}")
        if not result.files and (note := missing_drive(
                folder.path, [s.path for s in stored if s.root == folder.path])):
            gone_roots.add(folder.path)  # its books are kept
            report.warnings.append(note)
            continue
        for f in result.files:
            if str(f.path) in dropped:  # its book was deleted: it stays out
                left_out += 1
            elif within is not None and not under(str(f.path), within):
                report.warnings.append(f"{f.relative}: leads outside the allowed folders "
                                       f"(to {f.path}), skipped")
            elif confined and not under(str(f.path), [folder.path]):
                if str(f.path) not in known:  # a book already is synced as itself
                    report.warnings.append(
                        f"{f.relative}: leads outside its synced folder (to {f.path}), "
                        "skipped; `grimoire-beholder sync` in a terminal adds it")
            elif dirs is None or under(str(f.path), dirs) or under(
                    str(Path(folder.path) / f.relative), dirs):  # found there, as a link
                found[str(f.path)] = (f, folder.path)
    if left_out and not remove_missing:  # said once, by `ingest DIR`; sync stays quiet
        report.warnings.append(
            f"left out {left_out} file(s) whose books were deleted from the library; "
            "`grimoire-beholder ingest FILE` brings one back")
    return found, gone_roots

def _check_book(stored: folders.StoredFile, root: str | None,
                group: str) -> Step | None:
    """The step for a book whose file may have changed; None when the file is gone."""
    path = Path(stored.path)
    display = display_of(stored.path, root)
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not path.is_file():
        return None
    step = Step("unchanged", display, path=path, stored=stored, root=root, group=group)
    if st.st_size != stored.size or st.st_mtime != stored.mtime:
        step.info = file_info(path)  # mtime/size moved: the hash decides
        if step.info.sha256 != stored.sha256:
            step.action = "changed"
    return step
