"""One planned action of a sync on one file, and how it is shown (``ingest/sync.py`` plans and
applies them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grimoire_beholder.ingest.build import FileInfo, failure_reason, file_info, file_version
from grimoire_beholder.ingest.progress import estimate_chunks
from grimoire_beholder.ingest.sync_scope import under
from grimoire_beholder.store import folders
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.views import FileOutcome

# The order a plan is applied and shown in.
ORDER = {"moved": 0, "removed": 1, "changed": 2, "added": 3}


@dataclass
class Step:
    """One planned action on one file."""

    action: str
    display: str
    path: Path | None = None
    stored: folders.StoredFile | None = None
    info: FileInfo | None = None
    root: str | None = None
    group: str = ""
    error: str | None = None  # why a *failed* step's file could not be read


def estimate(step: Step) -> int:
    """The chunks a step probably embeds: a new or changed file's guess from its size."""
    if step.action not in ("added", "changed") or step.path is None:
        return 0
    size = step.info.size if step.info is not None else step.stored.size if step.stored else 0
    return estimate_chunks(str(step.path), size)


def display_of(path: str, root: str | None) -> str:
    """``path`` as a report shows it: relative to its synced folder, else absolute."""
    if root and under(path, [root]):
        return Path(os.path.relpath(path, root)).as_posix()
    return path


def respell(step: Step, path: Path) -> Step:
    """The step for a book whose file is now listed as ``path``: moved there when its bytes
    are the same, else changed (and stored under the new spelling)."""
    if step.action == "unchanged":
        return Step("moved", display_of(str(path), step.root), path=path, stored=step.stored,
                     info=file_info(path), root=step.root, group=step.group)
    step.path, step.display = path, display_of(str(path), step.root)
    return step


def failed(step: Step, exc: Exception) -> FileOutcome:
    """The outcome of a file whose ingest raised ``exc``."""
    return FileOutcome("failed", step.display, error=failure_reason(exc, step.display, step.path),
                       version=version(step))


def version(step: Step) -> tuple[str, int, float, str] | None:
    """The step's file as the plan found it (``FileOutcome.version``)."""
    return file_version(step.path, step.info) if step.path is not None else None


def finished_unread(display: str, why: str, *, dry_run: bool = False) -> str:
    """The warning for a book an interrupted run left half-done that a sync finishes from
    its stored chunks and sections while its file cannot be read (``why``): finishing needs
    no file, so the book is searchable whether or not the file comes back."""
    done = "would be finished" if dry_run else "finished"
    return (f"{display}: {done} from what is stored, as an interrupted run left it "
            f"half-done ({why})")


def finished_by_steps(conn: Store, steps: list[Step]) -> set[int]:
    """The books an interrupted run left half-done whose own step finishes them: a moved
    file's (under *moved*) and an unreadable one's (told as *failed*); the other unfinished
    books are resumed on their own."""
    ids = {s.stored.book_id for s in steps if s.action in ("moved", "failed") and s.stored}
    return folders.unfinished_books(conn) & ids if ids else set()


def files_of(step: Step) -> list[str]:
    """The content hashes of the files whose books ``step`` writes (the old and the new)."""
    return [s for s in (step.stored.sha256 if step.stored else None,
                        step.info.sha256 if step.info else None) if s]
