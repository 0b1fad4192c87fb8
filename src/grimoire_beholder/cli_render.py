"""Rendering for the CLI: rich tables and cited hits on stdout, progress bars on stderr."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # rich.progress costs ~80 ms to import; only ingest/sync draw bars
    from rich.progress import Progress, TaskID

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    """JSON on stdout, unstyled, for scripts."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


class RichProgress:
    """The pipeline's Progress as rich bars on stderr; silent when not a TTY or --quiet."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.enabled = not quiet and err.is_terminal
        self.quiet = quiet
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._started = time.perf_counter()
        self._stage_started = self._started

    def __enter__(self) -> RichProgress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.description:<11}"), BarColumn(),
                MofNCompleteColumn(), TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                TextColumn("eta"), TimeRemainingColumn(),
                console=err, transient=False,
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def stage(self, name: str, total: int) -> None:
        if self._bar is not None:
            if self._task is not None:
                self._bar.update(self._task, completed=self._bar.tasks[-1].total)
            self._task = self._bar.add_task(name, total=total, rate="")
            self._stage_started = time.perf_counter()

    def advance(self, n: int = 1) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, n)
            done = self._bar.tasks[-1].completed
            elapsed = max(time.perf_counter() - self._stage_started, 1e-6)
            self._bar.update(self._task, rate=f"{done / elapsed:6.1f}/s")

    def message(self, text: str) -> None:
        if not self.quiet:
            err.print(text, markup=False)


class MessageProgress:
    """Per-file lines on stderr and no bar: for ``sync --watch``, which runs many syncs."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet

    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def message(self, text: str) -> None:
        if not self.quiet:
            err.print(text, markup=False)


def sync_summary(report: dict[str, Any]) -> str:
    """``added 2 · changed 1 · … — 3 chunks re-embedded, 40 reused (1.2s)``."""
    counts = report["counts"]
    shown = [f"{name} {counts[name]}" for name in
             ("added", "changed", "removed", "moved", "unchanged")]
    shown += [f"{name} {counts[name]}" for name in ("resumed", "failed") if counts[name]]
    verb = "would re-embed" if report["dry_run"] else "re-embedded"
    return (("dry run: " if report["dry_run"] else "") + " · ".join(shown)
            + f" — {report['chunks_embedded']} chunks {verb}, {report['chunks_reused']} reused"
            + f" ({report['seconds']:.1f}s)")


def books_table(books: list[dict[str, Any]]) -> Table:
    table = Table(show_lines=False)
    for col in ("id", "slug", "name", "author", "type", "pages", "ch", "sec", "chunks",
                "embedded"):
        table.add_column(col, overflow="fold")
    for b in books:
        pages = b["page_count"] if b["page_count"] is not None else (
            f"{b['line_count']} lines" if b.get("line_count") else "")
        table.add_row(str(b["id"]), b["slug"], b["name"], b["author"] or "", b["source_type"],
                      str(pages), str(b["chapters"]), str(b["sections"]), str(b["chunks"]),
                      f"{b['status'].get('embedded', 0)}/{b['chunks']}")
    return table


def citation(hit: dict[str, Any]) -> str:
    """``Book · Chapter · Section · p. 12–13``; Markdown and text hits cite like an editor
    would jump: ``notes/runbook.md:120-148 · Runbook › Deploys › Rollback`` (the path is
    relative to the ingested folder when there is one, else to the working directory when the
    file is below it, else absolute)."""
    if hit.get("source_type") in ("markdown", "text") and hit.get("line_start") is not None:
        path = hit.get("relative_path") or _near(hit.get("source_path")) or hit["book"]
        start, end = hit["line_start"], hit.get("line_end")
        lines = f"{start}" if end is None or end == start else f"{start}-{end}"
        crumb = hit.get("section") or hit.get("chapter") or ""
        return f"{path}:{lines}" + (f" · {crumb}" if crumb else "")
    parts = [hit["book"], hit["chapter"]]
    section = hit.get("section") or ""
    tail = section.split(" › ")[-1] if section else ""
    if tail and tail != hit["chapter"]:
        parts.append(tail)
    if hit.get("page_start") is not None and hit.get("source_type") == "pdf":
        span = _span(hit["page_start"], hit["page_end"])
        label = hit.get("page_label")
        parts.append(f"p. {span}" + (f" (printed {label})" if label and label != span else ""))
    elif hit.get("line_start") is not None:
        parts.append(f"lines {_span(hit['line_start'], hit['line_end'])}")
    elif hit.get("page_start") is not None:
        parts.append(f"loc. {_span(hit['page_start'], hit['page_end'])}")
    return " · ".join(p for p in parts if p)


def _near(path: str | None) -> str | None:
    """``path`` relative to the working directory when it lies below it."""
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def _span(a: int, b: int | None) -> str:
    return str(a) if b is None or b == a else f"{a}–{b}"


def excerpt(text: str, limit: int = 600) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + " …"
