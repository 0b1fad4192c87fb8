"""Opt-in upkeep tools for the MCP server: sync the library, add books, remove one — their
result shapes (the output schemas), their text, the tools themselves.

* Off unless asked: ``serve-mcp --allow-sync`` adds ``sync_library``, ``--allow-add DIR``
  adds ``add_book`` for paths inside those folders only (``allowed.py`` judges a path after
  following its links), ``--allow-remove`` adds ``remove_book``. Without a flag the tool does
  not exist and the server stays read-only.
* A writer only for the length of a call: searches keep their read-only connection; each
  upkeep call opens its own read-write ``Library`` inside the worker thread the SDK runs it on
  (a SQLite connection belongs to the thread that made it), shares the warm embedding model,
  and closes it before answering. The core's writer lock refuses a second writer at once, so
  a busy library is an immediate tool error, never a wait.
* Honest annotations: none is read-only; ``sync_library`` is destructive (it removes the books
  of deleted files) and idempotent, ``add_book`` adds without replacing, ``remove_book`` is
  destructive.
* Progress: the ingest's ``Progress`` callbacks become MCP progress notifications.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.allowed import Upkeep
from grimoire_beholder.mcp_server.serving import bounded_result, served, with_note
from grimoire_beholder.views import FileOutcome, IngestReport, SyncReport, sync_summary

log = logging.getLogger("grimoire_beholder.mcp")

MAX_FILES = 100  # file lines per result; the counts cover every file
MAX_WARNINGS = 20

SYNC = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                       open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                      open_world_hint=False)
REMOVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                         open_world_hint=False)


# ------------------------------------------------------------------------ result shapes
class FileEntry(BaseModel):
    action: str = Field(description="added, changed, removed, moved, unchanged, resumed or "
                                    "failed.")
    path: str = Field(description="Relative to its synced folder when it has one.")
    slug: str | None = Field(description="The book (usable as book_id).")
    chunks: int
    embedded: int = Field(description="Chunks sent to the embedding model.")
    reused: int = Field(description="Chunks whose context and vector were kept.")
    old_path: str | None = None
    error: str | None = None


class UpkeepReport(BaseModel):
    dry_run: bool = Field(description="True when nothing was written (only planned).")
    counts: dict[str, int] = Field(description="Files per action.")
    chunks_embedded: int
    chunks_reused: int
    seconds: float
    files: list[FileEntry] = Field(description="Every file that was not unchanged (capped).")
    warnings: list[str]
    note: str | None = None


class RemovedBook(BaseModel):
    book_id: int
    slug: str
    name: str
    note: str | None = None


def upkeep_text(result: UpkeepReport) -> str:
    """The counts line, one line per file listed, the warnings, the note."""
    lines = [sync_summary(result.model_dump()),
             *(FileOutcome(**f.model_dump()).describe() for f in result.files),
             *(f"warning: {w}" for w in result.warnings)]
    return with_note(lines, result.note)


def removed_text(result: RemovedBook) -> str:
    return with_note([f"removed {result.slug} ({result.name})"], result.note)


def _report(report: SyncReport, note: str | None = None) -> CallToolResult:
    """Counts, the files that changed and the warnings, bounded, as text and structure."""
    data = report.to_dict()
    moved = [f for f in report.files if f.action != "unchanged"]
    notes = [note] if note else []
    if len(moved) > MAX_FILES:
        notes.append(f"Only the first {MAX_FILES} of {len(moved)} files are listed.")
    if report.failed:
        notes.append(f"{len(report.failed)} file(s) failed; the rest were done.")
    result = UpkeepReport.model_validate({
        **data, "files": [FileEntry.model_validate(vars(f)) for f in moved[:MAX_FILES]],
        "warnings": data["warnings"][:MAX_WARNINGS], "note": " ".join(notes) or None})
    return bounded_result(upkeep_text, result)


def _as_sync_report(one: IngestReport, path: str) -> SyncReport:
    """A single-file ingest in the shape of a folder's report, so add_book has one shape."""
    action = "added" if one.created else "resumed" if one.embedded else "unchanged"
    return SyncReport(
        files=[FileOutcome(action, path, slug=one.slug, chunks=one.chunks,
                           embedded=one.embedded)],
        summaries=one.summaries, contexts=one.contexts, embedded=one.embedded,
        seconds=one.seconds, warnings=list(one.warnings))


# ------------------------------------------------------------------------ plumbing
class ToolProgress:
    """The ingest's ``Progress`` as MCP progress notifications.

    The protocol wants the progress value to grow with every notification, so it is one
    running count over all stages (the total grows as stages start); the message names the
    stage and the last file done. Called on the tool's worker thread; a notification that
    cannot be sent is dropped, never allowed to stop the work.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.done = self.total = self.stage_done = self.stage_total = 0
        self.stage_name = ""
        self.note: str | None = None

    def stage(self, name: str, total: int) -> None:
        self.stage_name, self.stage_total, self.stage_done = name, total, 0
        self.total += total

    def retotal(self, total: int) -> None:
        self.total += total - self.stage_total
        self.stage_total = total

    def advance(self, n: int = 1) -> None:
        if n <= 0:
            return
        self.done += n
        self.stage_done += n
        message = f"{self.stage_name} {self.stage_done}/{self.stage_total}" + (
            f": {self.note}" if self.note else "")
        self.note = None
        try:
            anyio.from_thread.run(self.ctx.report_progress, self.done, self.total or None,
                                  message)
        except Exception as exc:  # the client went away: finish the work anyway
            log.debug("progress not sent: %s", exc)

    def message(self, text: str) -> None:
        self.note = text  # sent with the next step, so every notification moves forward


@contextmanager
def _library(ctx: Context, *, read_only: bool = False) -> Iterator[Library]:
    """A Library of its own for one call, opened in this thread; errors become ToolErrors."""
    reader = served(ctx).library
    try:
        lib = Library.open(config=reader.config, read_only=read_only,
                           embedder=reader.embedder)
    except GrimoireError as exc:
        raise ToolError(str(exc)) from exc
    try:
        yield lib
    except GrimoireError as exc:
        raise ToolError(str(exc)) from exc
    finally:
        lib.close()


# ------------------------------------------------------------------------ the tools
def sync_library(
    ctx: Context,
    path: Annotated[str | None, Field(
        description="Only this synced folder, a folder or file inside one, or a book's file "
                    "(absolute, or relative to where the server runs). Leave out for the "
                    "whole library.")] = None,
    dry_run: Annotated[bool, Field(
        description="Only report what would change; write nothing.")] = False,
) -> Annotated[CallToolResult, UpkeepReport]:
    """Bring the library in line with its files on disk, as `grimoire-beholder sync`
    does: changed files are re-read and only their changed chunks re-embedded, files
    deleted from disk have their books REMOVED, moved files are followed, new files under
    an already ingested folder are added (not through a link leading out of the folder).
    Only what is already in the library is looked at; it never adds a folder. Returns
    added · changed · removed · moved · unchanged counts and the chunks re-embedded.
    Use dry_run=true first to see what would change."""
    with _library(ctx, read_only=dry_run) as lib:
        report = lib.sync([path] if path else None, dry_run=dry_run, confined=True,
                          progress=ToolProgress(ctx))
    return _report(report)


def add_book(
    ctx: Context,
    path: Annotated[str, Field(
        description="A .pdf, .epub, .md/.markdown/.mdx, .txt, .html/.htm/.xhtml or .docx "
                    "file, or a folder of them, inside one of the allowed folders (absolute, "
                    "or relative to an allowed folder).")],
    name: Annotated[str | None, Field(
        description="Display name (and slug) for a single file; default: its title.")] = None,
) -> Annotated[CallToolResult, UpkeepReport]:
    """Add a book file, or every book under a folder, to the library: parse, embed,
    and make it searchable. Only paths inside the folders the user allowed are accepted
    (links are followed first; anything outside is refused). A folder is remembered, so
    sync_library keeps it current. A file already in the library is left as it is."""
    allowed = served(ctx).allowed_upkeep()
    if allowed is None or allowed.add is None:  # over HTTP: this token may not add
        raise ToolError("Unknown tool: add_book")
    try:
        target = allowed.add.resolve(path)
    except GrimoireError as exc:
        raise ToolError(str(exc)) from exc
    if target.is_dir():
        if name:
            raise ToolError("name applies to a single file; a folder's books are named after "
                            "their titles")
        with _library(ctx) as lib:
            return _report(lib.ingest_folder(target, within=list(allowed.add.folders),
                                             progress=ToolProgress(ctx)),
                           note="The folder is remembered: sync_library keeps it current.")
    with _library(ctx) as lib:
        one = lib.ingest(target, name=name, follow_links=False, progress=ToolProgress(ctx))
    return _report(_as_sync_report(one, str(target)))


def remove_book(ctx: Context, book_id: Annotated[int | str, Field(
        description="The book: numeric id or slug, as list_books shows.")],
) -> Annotated[CallToolResult, RemovedBook]:
    """Remove one book and everything under it (sections, chunks, vectors) from the
    library. The file on disk is not touched. This cannot be undone; ask the user first."""
    with _library(ctx) as lib:
        removed = lib.delete(book_id)
    note = ("Its file is under a synced folder: sync_library would add it back while the "
            "file is there." if removed.source_root else None)
    result = RemovedBook(book_id=removed.id, slug=removed.slug, name=removed.name, note=note)
    return bounded_result(removed_text, result)


TOOLS: tuple[tuple[str, Any, str, ToolAnnotations], ...] = (
    ("sync", sync_library, "Sync the library with its files", SYNC),
    ("add", add_book, "Add a book from an allowed folder", ADD),
    ("remove", remove_book, "Remove a book", REMOVE),
)


def _enabled(upkeep: Upkeep) -> dict[str, bool]:
    return {"sync": upkeep.sync, "add": upkeep.add is not None, "remove": upkeep.remove}


def enabled_tools(upkeep: Upkeep) -> list[tuple[Any, str, ToolAnnotations]]:
    """The upkeep tools the user allowed, and only those: (function, title, hints) for
    ``server.py`` to register as it registers its own."""
    enabled = _enabled(upkeep)
    return [(fn, title, hints) for key, fn, title, hints in TOOLS if enabled[key]]


UPKEEP_TOOL_NAMES = frozenset(fn.__name__ for _key, fn, _title, _hints in TOOLS)


def allows(upkeep: Upkeep | None, tool: str) -> bool:
    """Whether ``upkeep`` lets ``tool`` be listed and called (any tool not an upkeep one:
    always)."""
    if tool not in UPKEEP_TOOL_NAMES:
        return True
    enabled = _enabled(upkeep) if upkeep is not None else {}
    return any(enabled.get(key, False) for key, fn, _t, _h in TOOLS if fn.__name__ == tool)
