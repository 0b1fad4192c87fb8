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


def watch_folders(lib: Library, folders: Sequence[Path] | None, *, quiet: bool,
                  json_out: bool) -> None:
    """Run ``sync --watch`` on ``lib`` until Ctrl-C: each report with news as a summary line
    on stdout (one JSON object a line under ``--json``), its problems named once on stderr;
    at the stop the files still failing are named on stderr, and then the exit code is 1
    (as a one-shot ``sync`` that left files failing), else 0. Only these lines reach
    stderr at Ctrl-C, not watchfiles' own."""
    lines = MessageProgress(quiet=quiet)

    def show(report: SyncReport) -> None:
        data = report.to_dict()
        if json_out:
            print(json_text(data, sys.stdout, indent=None), flush=True)
        else:
            print_problems(data, lines.shown, report)
            print(sync_summary(data), flush=True)
        lines.shown = ShownLines()

    _no_watchfiles_notice()
    if not quiet:
        err.print("watching for changes (Ctrl-C to stop)", markup=False)
    failing = lib.watch(folders or None, on_report=show, progress=lines)
    if failing:  # named once as they failed: the count at the end is the truth
        err.print(fit(f"stopped; {plural(len(failing), 'file')} still failing: "
                      + ", ".join(one_line(f.path) for f in failing), 2, err),
                  markup=False)
        raise typer.Exit(1)
