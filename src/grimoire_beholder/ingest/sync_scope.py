"""Which paths a sync may reach: the folders and files the library already holds."""

from __future__ import annotations

import os
from pathlib import Path

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.store import folders


def under(path: str, dirs: list[str]) -> bool:
    """``path`` is one of ``dirs`` or inside one of them (paths compared as text)."""
    return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)


def resolve_dir(path: str | os.PathLike[str]) -> Path:
    """The real path of a folder given to ``ingest DIR``; InputFileError when it is not one."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise InputFileError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise InputFileError(f"{folder}: not a folder")
    return folder.resolve()


def sync_scope(deps: IngestDeps, paths: list[Path]) -> list[str]:
    """The real paths a sync is narrowed to; each must name something the library knows.

    A synced folder, a folder or file inside one (a new file there is added), a folder
    holding one, or a book's file (also once deleted: its book is then removed). Anything
    else is refused, so a sync never reaches past what was ingested.
    """
    roots = [r.path for r in folders.list_roots(deps.conn)]
    books = [s.path for s in folders.stored_files(deps.conn) if not s.root]
    scope = []
    for given in paths:
        path = Path(given).expanduser()
        try:
            real = str(path.resolve())
        except (OSError, RuntimeError, ValueError) as exc:  # a link loop on 3.11; a NUL
            raise InputFileError(f"{path}: cannot be resolved ({exc})") from None
        if not (under(real, roots) or any(under(p, [real]) for p in [*roots, *books])):
            if not path.exists():
                raise InputFileError(f"{path}: no such file or folder")
            shown = ", ".join(roots[:5]) + (" …" if len(roots) > 5 else "")
            raise InputFileError(
                f"{path}: nothing in the library comes from there; synced folders: "
                + (shown or "none") + f"; {len(books)} file(s) ingested one by one")
        scope.append(real)
    return scope
