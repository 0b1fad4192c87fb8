"""Finding the files of a folder library: recursive walk, globs, hidden files, symlink loops.

Rules (the same for ``ingest DIR``, ``sync`` and ``sync --watch``):

* only supported extensions (``parse.SUPPORTED_EXTENSIONS``) are candidates;
* skipped by default: hidden files and folders (name starting with "."; this covers
  ``.git``), ``node_modules``, and the library's own database, WAL, SHM and lock files;
* ``--exclude GLOB`` skips files and whole folders; ``--include GLOB`` keeps only matching
  files. A glob is matched (``fnmatch``, case-sensitive on POSIX, ``*`` also crosses "/")
  against the path relative to the root, with "/" separators, and against the bare name,
  so ``drafts`` excludes every folder called drafts and ``notes/*.md`` one subtree;
* symlinks are followed, but a folder whose resolved path was already visited is skipped,
  so a link back up the tree cannot loop; a file reached twice (two links) counts once;
* a Calibre library or Zotero data folder the library follows as such (``owned``) is not
  walked: its files are that library's books (``ingest/external.py``), not the folder's.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grimoire_beholder.parse import SUPPORTED_EXTENSIONS
from grimoire_beholder.parse.source import unstorable_name

ALWAYS_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
# Documents a person may expect to be read, which are not: ``ingest DIR`` says it left them.
UNREAD_DOCUMENTS = frozenset({".docx", ".doc", ".odt", ".rtf", ".pages", ".mobi", ".azw3",
                              ".djvu", ".pptx", ".html", ".htm"}) - set(SUPPORTED_EXTENSIONS)


@dataclass(frozen=True)
class FolderFile:
    """A file found under a root: where it really is and where it sits in the library."""

    path: Path  # resolved: what books.source_path stores
    relative: str  # posix path under the root as walked (links not resolved)
    group: str  # first folder of ``relative``, "" for files directly in the root


@dataclass
class Scan:
    files: list[FolderFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unread: dict[str, int] = field(default_factory=dict)  # UNREAD_DOCUMENTS found, by suffix
    filtered: int = 0  # files of a kind the library reads that --include/--exclude left out
    owned: list[Path] = field(default_factory=list)  # followed libraries met, not walked

    def unread_note(self) -> str | None:
        """One line naming the documents of kinds the library does not read, if any."""
        if not self.unread:
            return None
        kinds = ", ".join(f"{n} {suffix}" for suffix, n in sorted(self.unread.items()))
        return (f"left out {kinds} file(s): a kind the library does not read (it reads "
                f"{', '.join(sorted(SUPPORTED_EXTENSIONS))}); save them as PDF or Markdown "
                "to add them")

    def filtered_note(self) -> str | None:
        """One line when --include/--exclude left out every file the library would read (a
        typo in a glob follows a folder of nothing), else None."""
        if self.files or not self.filtered:
            return None
        return (f"--include/--exclude left out all {self.filtered} file(s) the library "
                "would read here; nothing is added from this folder")


def library_files(db_path: Path) -> set[Path]:
    """The database and its companions, which must never be ingested or trigger a sync."""
    db = db_path.resolve()
    return {db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", ".lock",
                                                                 "-journal"))}


def _matches(patterns: Sequence[str], relative: str, name: str) -> bool:
    return any(fnmatch.fnmatchcase(relative, p) or fnmatch.fnmatchcase(name, p)
               for p in patterns)


def is_candidate(relative: str, *, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """Whether a file at ``relative`` (posix, under the root) is part of the library."""
    parts = relative.split("/")
    if any(p.startswith(".") or p in ALWAYS_SKIPPED_DIRS for p in parts):
        return False
    if Path(parts[-1]).suffix.lower() not in SUPPORTED_EXTENSIONS:
        return False
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    if any(_matches(exclude, prefix, prefix.rsplit("/", 1)[-1]) for prefix in prefixes):
        return False
    return not include or _matches(include, relative, parts[-1])


def group_of(relative: str) -> str:
    return relative.split("/", 1)[0] if "/" in relative else ""


def scan(root: Path, *, include: Sequence[str] = (), exclude: Sequence[str] = (),
         skip: set[Path] | None = None, owned: Collection[Path] = ()) -> Scan:
    """Every candidate file under ``root`` (see the module docstring), in path order;
    ``owned``: the real paths of followed Calibre/Zotero libraries, neither walked nor
    reached through a link (those met are listed in ``Scan.owned``)."""
    result = Scan()
    skip = skip or set()
    owned = set(owned)
    visited_dirs: set[Path] = set()
    seen_files: set[Path] = set()
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            real = directory.resolve(strict=True)
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on 3.11
            result.warnings.append(f"{directory}: skipped ({exc})")
            continue
        if real in visited_dirs:
            continue  # a symlink back into a folder already walked
        visited_dirs.add(real)
        if real in owned:
            result.owned.append(real)
            continue
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.warnings.append(f"{directory}: cannot list ({exc.strerror or exc})")
            continue
        subdirs: list[tuple[Path, str]] = []
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            if entry.name.startswith(".") or entry.name in ALWAYS_SKIPPED_DIRS:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
                is_file = not is_dir and entry.is_file(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                if not _matches(exclude, relative, entry.name):
                    subdirs.append((Path(entry.path), relative + "/"))
                continue
            if is_file and Path(entry.name).suffix.lower() in UNREAD_DOCUMENTS \
                    and not _matches(exclude, relative, entry.name):
                suffix = Path(entry.name).suffix.lower()
                result.unread[suffix] = result.unread.get(suffix, 0) + 1
            if not is_file or not is_candidate(relative, include=include, exclude=exclude):
                if is_file and is_candidate(relative, include=(), exclude=()):
                    result.filtered += 1
                continue
            if (unstorable := unstorable_name(entry.path)) is not None:
                result.warnings.append(f"{unstorable}; skipped")
                continue
            try:
                resolved = Path(entry.path).resolve(strict=True)
            except (OSError, RuntimeError):
                result.warnings.append(f"{entry.path}: broken link, skipped")
                continue
            if resolved in skip or resolved in seen_files or not owned.isdisjoint(
                    resolved.parents):
                continue
            seen_files.add(resolved)
            result.files.append(FolderFile(resolved, relative, group_of(relative)))
        stack.extend(reversed(subdirs))
    result.files.sort(key=lambda f: f.relative)
    return result


def missing_drive(root: str, paths: list[str]) -> str | None:
    """What to say when a synced folder's books, ``paths``, are all gone at once (their
    folder holds no file now): its drive is not mounted, most likely (an empty mount point
    remains), so the books are kept. None while any of them is there, or there are none."""
    if not paths or any(os.path.lexists(p) for p in paths):
        return None
    return (f"{root}: the folder holds none of its {len(paths)} book file(s) (a drive not "
            "mounted?); its books are kept. If they are really gone, remove them with "
            "`grimoire-beholder delete`")


def empty_mount_point(path: str, root: str | None) -> str | None:
    """The folder between a vanished book file ``path`` and its synced ``root`` that still
    exists but is empty — a drive mounted inside the synced folder and now unplugged (its
    empty mount point remains) — or None. Its books are kept, as for a whole root."""
    if not root:
        return None
    folder = os.path.dirname(path)
    while folder and folder != root and folder.startswith(root.rstrip(os.sep) + os.sep):
        try:
            if os.path.isdir(folder) and not os.path.islink(folder) and not os.listdir(folder):
                return folder
        except OSError:
            return None
        folder = os.path.dirname(folder)
    return None
