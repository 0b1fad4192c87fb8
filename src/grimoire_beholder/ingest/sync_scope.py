"""Which paths a sync may reach: the folders and files the library already holds."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Collection
from pathlib import Path

from grimoire_beholder import portable
from grimoire_beholder.errors import InputFileError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.store import folders


def under(path: str, dirs: list[str]) -> bool:
    """``path`` is one of ``dirs`` or inside one of them (paths compared as text)."""
    return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)


def _folded(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def folds(listed: Collection[str]) -> dict[str, list[str]]:
    """``listed`` paths by their case- and form-folded spelling, for :func:`respelled`."""
    index: dict[str, list[str]] = {}
    for path in listed:
        index.setdefault(_folded(path), []).append(path)
    return index


def respelled(stored: str, index: dict[str, list[str]]) -> str | None:
    """The path in ``index`` (of the files a scan found, :func:`fold_index`) that names the
    file a book stored as ``stored``, when only its case or Unicode form changed: on a
    case-insensitive volume the old spelling still opens the file, but no folder lists it
    any more. None otherwise (where both spellings are listed they are two files; where the
    old one is gone, the content hash finds the move)."""
    twins = [p for p in index.get(_folded(stored), ()) if p != stored]
    if not twins or not os.path.lexists(stored) or _listed(stored):
        return None
    return twins[0]


def _listed(path: str) -> bool:
    """Whether every part of ``path`` is listed by its folder under exactly that name."""
    current = Path(path)
    for parent in current.parents:
        try:
            if current.name and current.name not in os.listdir(parent):
                return False
        except OSError:
            return True  # cannot tell: treat as listed (never merge two files)
        current = parent
    return True


def resolve_dir(path: str | os.PathLike[str]) -> Path:
    """The real path of a folder given to ``ingest DIR``; InputFileError when it is not one."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise InputFileError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise InputFileError(f"{folder}: not a folder")
    return folder.resolve()


def known_spelling(deps: IngestDeps, real: Path) -> Path:
    """``real`` spelled the way the library already spells that place, where the volume
    compares names without case or Unicode form (``~/books`` typed on macOS for the synced
    ``~/Books``): a synced folder it lies in, or a stored path inside it. Else as given."""
    roots = [r.path for r in folders.list_roots(deps.conn)]
    known = [*roots, *(s.path for s in folders.stored_files(deps.conn))]
    text = str(real)
    if under(text, roots) or any(under(p, [text]) for p in known):
        return real
    names = portable.FolderNames.probe(real)
    if any(case or form for case, form in names.folds):
        for path in known:
            if names.holds(Path(path)):
                return Path(*Path(path).parts[:len(real.parts)])
    for root in roots:
        if portable.FolderNames.probe(Path(root)).holds(real):
            return Path(root, *real.parts[len(Path(root).parts):])
    return real


def sync_scope(deps: IngestDeps, paths: list[Path]) -> list[str]:
    """The real paths a sync is narrowed to; each must name something the library knows.

    A synced folder, a folder or file inside one (a new file there is added), a folder
    holding one, or a book's file (also once deleted: a synced folder's book is then
    removed, one ingested as a single file kept with a warning). Anything
    else is refused, so a sync never reaches past what was ingested.
    """
    roots = [r.path for r in folders.list_roots(deps.conn)]
    stored = folders.stored_files(deps.conn)
    books = [s.path for s in stored if not s.root]
    known = [*roots, *(s.path for s in stored)]
    scope = []
    for given in paths:
        path = Path(given).expanduser()
        try:
            real = str(known_spelling(deps, path.resolve()))
        except (OSError, RuntimeError, ValueError) as exc:  # a link loop on 3.11; a NUL
            raise InputFileError(f"{path}: cannot be resolved ({exc})") from None
        if not path.exists() and not any(under(p, [real]) for p in known):
            # a typo inside a synced folder too: no file is there, and none ever was
            raise InputFileError(f"{path}: no such file or folder")
        # ``known``, not only the roots and single files: a folder's book may be a file
        # the folder links to from elsewhere (``sync notes/paper.md``, a link out)
        if not (under(real, roots) or any(under(p, [real]) for p in known)):
            shown = ", ".join(roots[:5]) + (" …" if len(roots) > 5 else "")
            raise InputFileError(
                f"{path}: nothing in the library comes from there; synced folders: "
                + (shown or "none") + f"; {len(books)} file(s) ingested one by one")
        scope.append(real)
    return scope
