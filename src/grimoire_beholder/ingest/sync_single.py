"""Books ingested one file at a time (``ingest FILE``, no synced folder) whose file a sync
does not find where it was stored (``sync_plan.plan`` hands them over).

Such a file is never taken as deleted: its folder may be on a drive not mounted, the file may
have been renamed, and re-embedding a book costs minutes. So:

- renamed or moved *within its own folder* (a file there the library does not hold yet,
  of the book's size and content hash) it is re-pointed, keeping its book id — a *moved*
  step, applied by the same code as a synced folder's moves (:func:`renamed_in_place`);
  only files of the book's size in that one folder are hashed;
- otherwise its book is *kept*, still searchable, and the sync warns once per sync
  (:func:`kept_warnings`): one line per missing folder ("folder not found", the wording of a
  synced folder that is gone) or per missing file, saying how to remove the book on purpose
  (``delete``) or re-point it (``ingest`` the file where it is now).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from grimoire_beholder.ingest.build import file_info
from grimoire_beholder.ingest.sync_steps import Step, display_of
from grimoire_beholder.store import folders

_NAMED = 3  # a missing folder's line names this many of its books' files


def renamed_in_place(missing: dict[str, list[folders.StoredFile]],
                     held: Collection[str]) -> list[Step]:
    """The *moved* steps of single-file books in ``missing`` (content hash → books whose
    file is gone) found renamed in their own folder: a regular file there (no link) whose
    path is not in ``held`` (the library's files and those the plan already acts on), of
    the book's size and hash. The books matched are taken out of ``missing``."""
    by_folder: dict[str, list[folders.StoredFile]] = {}
    for gone in missing.values():
        for stored in gone:
            if not stored.root:
                by_folder.setdefault(os.path.dirname(stored.path), []).append(stored)
    steps: list[Step] = []
    for folder, books in sorted(by_folder.items()):
        for path, size in _files(folder, held):
            candidates = [b for b in books if b.size == size]
            if not candidates:
                continue
            try:
                info = file_info(Path(path))
            except OSError:
                continue  # unreadable: not known to be the book; it stays kept
            book = next((b for b in candidates if b.sha256 == info.sha256), None)
            if book is None:
                continue
            books.remove(book)
            missing[book.sha256].remove(book)
            steps.append(Step("moved", display_of(path, None), path=Path(path),
                              stored=book, info=info, root=None, group=book.group))
            if not books:
                break
    return steps


def _files(folder: str, held: Collection[str]) -> list[tuple[str, int]]:
    """The regular files directly in ``folder`` not in ``held``, with their sizes; none
    when the folder cannot be listed."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.path not in held and entry.is_file(follow_symlinks=False):
                        found.append((entry.path, entry.stat(follow_symlinks=False).st_size))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(found)


def kept_warnings(kept: list[folders.StoredFile]) -> list[str]:
    """The warnings for single-file books whose file is gone and which the sync keeps: one
    line per folder that is gone altogether (an unmounted drive), else one per file."""
    by_folder: dict[str, list[folders.StoredFile]] = {}
    for stored in kept:
        by_folder.setdefault(os.path.dirname(stored.path), []).append(stored)
    lines = []
    for folder, books in sorted(by_folder.items()):
        books.sort(key=lambda b: b.path)
        if not os.path.isdir(folder):
            names = ", ".join(os.path.basename(b.path) for b in books[:_NAMED])
            more = " …" if len(books) > _NAMED else ""
            lines.append(
                f"{folder}: folder not found (a drive not mounted?); its {len(books)} "
                f"book(s) ingested as single files are kept ({names}{more}). If they are "
                "really gone, remove them with `grimoire-beholder delete BOOK --yes`; if they "
                "moved, `grimoire-beholder ingest` them where they are now (with --force if "
                "they changed too)")
            continue
        lines += [
            f"{b.path}: file not found; its book '{b.slug}' is kept. If it is really gone, "
            f"remove it with `grimoire-beholder delete {b.slug} --yes`; if it moved, "
            "`grimoire-beholder ingest` it where it is now (with --force if it changed too)"
            for b in books]
    return lines
