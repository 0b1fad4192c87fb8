"""How a folder ingest's or a sync's report is told on the terminal: its problems once, its
summary line (or its JSON), its exit code — and under ``sync --watch`` each batch's report
and the line at Ctrl-C.

``library_commands`` parses the commands and calls the Library; this module only lays out
what came back. Exit code 1 when a one-shot run left any file failing, and likewise when a
watch is stopped (Ctrl-C) with files still failing; 0 otherwise.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from grimoire_beholder.citation import one_line
from grimoire_beholder.cli.plain_output import json_text, print_json
from grimoire_beholder.cli.rendering import MessageProgress, ShownLines, err, fit
from grimoire_beholder.text import plural
from grimoire_beholder.views import FileOutcome, sync_summary

if TYPE_CHECKING:
    from grimoire_beholder.library import Library
    from grimoire_beholder.views import SyncReport


def print_problems(data: dict[str, Any], shown: ShownLines | None = None,
                   report: SyncReport | None = None) -> None:
    """A sync report's warnings (skipped files among them) and failed files, on stderr —
    but those its progress already named as it went (``shown``), while still on screen,
    and under ``sync --watch`` those an earlier batch named (``report``'s ``told_before``
    and ``warned_before``, ``data`` being its ``to_dict``): a person is told each problem
    once (``rendering.ShownLines``). Files of the same relative name in two folders are
    told apart by their place in the report, not by their line."""
    told = set() if shown is None or shown.scrolled_away() else shown.lines
    said = {(f["action"], f["path"], f["error"]) for f in data["files"]
            if FileOutcome(**f).describe() in told}
    before = [any(f is t for t in report.told_before) for f in report.files] if report \
        else [False] * len(data["files"])
    repeated = Counter(report.warned_before if report else ())
    for warning in data["warnings"]:
        if repeated[warning] > 0:
            repeated[warning] -= 1
        elif not any(warning == f"skipped {path}: {error}" for _, path, error in said):
            err.print(fit(f"warning: {warning}", 2, err), markup=False)
    for f, named in zip(data["files"], before, strict=True):
        if f["action"] == "failed" and not named and ("failed", f["path"], f["error"]) \
                not in said:
            err.print(fit(f"failed: {f['path']}: {f['error']}", 2, err), markup=False)


def finish_sync(data: dict[str, Any], json_out: bool, shown: ShownLines | None = None
                ) -> None:
    """Print a folder ingest/sync report (its problems as :func:`print_problems` tells
    them); exit 1 when any file failed."""
    if json_out:
        print_json(data)
    else:
        print_problems(data, shown)
        print(fit(sync_summary(data), 2))
    if data["counts"]["failed"]:
        raise typer.Exit(1)


class _NoInterruptNotice(logging.Filter):
    """Drops watchfiles' own notice that Ctrl-C stopped its watch ("KeyboardInterrupt
    caught, stopping watch"): :func:`watch_folders` tells the stop itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "KeyboardInterrupt" not in record.getMessage()


def _no_watchfiles_notice() -> None:
    """Keep watchfiles' Ctrl-C notice off stderr. ``watchfiles.watch(...,
    raise_interrupt=False)``, as the watch calls it, logs that notice as a warning through
    the standard logging module as it stops, and with no handler configured Python's
    last-resort handler prints it, under ``--quiet`` and ``--json`` too. A logger's filter
    sees the records logged on it, so it goes on the logger of the module that logs."""
    logger = logging.getLogger("watchfiles.main")
    if not any(isinstance(f, _NoInterruptNotice) for f in logger.filters):
        logger.addFilter(_NoInterruptNotice())


class _WatchLines(MessageProgress):
    """``sync --watch``'s stderr: the sync's per-file lines as they come, but those naming
    a failed or skipped file, which each report names itself (:meth:`problems`) by a name
    that tells two watched folders' files of one relative name apart (:meth:`name`)."""

    def __init__(self, *, quiet: bool, file_lines: bool = True) -> None:
        super().__init__(quiet=quiet, file_lines=file_lines)
        self.shared: set[str] = set()  # relative paths two folders' files have had
        self.roots: dict[str, str] = {}  # a folder's name as shown → that folder

    def message(self, text: str) -> None:
        if not text.startswith(ShownLines.PROBLEMS):  # the report names those
            super().message(text)

    def name(self, f: FileOutcome) -> str:
        """``f``'s path under its folder, as ``sync`` names it, unless another watched
        folder has a file of that path: then ``folder/path``, the folder being its own
        folder's name — or the whole path, when two folders of one name hold it."""
        if f.path not in self.shared or f.version is None:
            return one_line(f.path)
        where, depth = Path(f.version[0]), len(Path(f.path).parts)
        if where.parts[-depth:] != Path(f.path).parts or len(where.parts) <= depth:
            return one_line(str(where))  # a link to a file elsewhere: its own path
        root = where.parents[depth - 1]
        if self.roots.setdefault(root.name, str(root)) != str(root):
            return one_line(str(where))
        return one_line(f"{root.name}/{f.path}")

    def problems(self, report: SyncReport, *, recap: bool = True) -> None:
        """Name the report's failed and skipped files that no earlier report named as
        they are now (its ``told_before``), once each, as their per-file lines (only
        those, and not under ``--quiet``, without ``recap``: ``--json`` holds the rest),
        and its warnings not named before (its ``warned_before``); a skipped file's
        warning is its own line."""
        self.shared |= {p for p, n in Counter(f.path for f in report.files).items() if n > 1}
        fresh = [f for f in report.files if f.action in ("failed", "skipped")
                 and not any(f is t for t in report.told_before)]
        warnings = report.warnings if recap else []
        if not recap and (self.quiet or not self.file_lines):
            fresh = []
        skipped = Counter(f"skipped {f.path}: {f.error}" for f in report.files
                          if f.action == "skipped")
        repeated = Counter(report.warned_before)
        for warning in warnings:
            if repeated[warning] > 0:
                repeated[warning] -= 1
            elif skipped[warning] > 0:
                skipped[warning] -= 1
            else:
                err.print(fit(f"warning: {warning}", 2, err), markup=False)
        for f in fresh:
            if not self.quiet:
                err.print(fit(f"{f.action:<9} {self.name(f)}: {f.error}", 2, err),
                          markup=False)
            elif f.action == "failed":
                err.print(fit(f"failed: {self.name(f)}: {f.error}", 2, err), markup=False)
            else:
                err.print(fit(f"warning: skipped {self.name(f)}: {f.error}", 2, err),
                          markup=False)


def watch_folders(lib: Library, folders: Sequence[Path] | None, *, quiet: bool,
                  json_out: bool) -> None:
    """Run ``sync --watch`` on ``lib`` until Ctrl-C: each report with news as a summary line
    on stdout (one JSON object a line under ``--json``), its problems named once on stderr;
    at the stop the files still failing are named on stderr, and then the exit code is 1
    (as a one-shot ``sync`` that left files failing), else 0. Only these lines reach
    stderr at Ctrl-C, not watchfiles' own. Two watched folders' files of one relative name
    are named with their folder (:meth:`_WatchLines.name`), on stderr; JSON keeps ``path``
    as ``sync --json`` has it."""
    lines = _WatchLines(quiet=quiet, file_lines=not json_out)  # --json: reports name files

    def show(report: SyncReport) -> None:
        data = report.to_dict()
        lines.problems(report, recap=not json_out)
        if json_out:
            print(json_text(data, sys.stdout, indent=None), flush=True)
        else:
            print(sync_summary(data), flush=True)

    _no_watchfiles_notice()
    if not quiet:
        err.print("watching for changes (Ctrl-C to stop)", markup=False)
    failing = lib.watch(folders or None, on_report=show, progress=lines)
    if failing:  # named once as they failed: the count at the end is the truth
        err.print(fit(f"stopped; {plural(len(failing), 'file')} still failing: "
                      + ", ".join(lines.name(f) for f in failing), 2, err),
                  markup=False)
        raise typer.Exit(1)
