"""Rendering for the CLI: rich tables and cited hits on stdout, progress bars on stderr.

Text from books and file names may hold terminal escape sequences: the consoles escape
control characters in everything they print (``cli_terminal.py`` has the rule and the
plain-stream half of it).
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .cli_terminal import terminal_safe
from .text import clip, flat

if TYPE_CHECKING:  # rich.progress costs ~80 ms to import; only ingest/sync draw bars
    from rich.progress import Progress, TaskID



class _SafeConsole(Console):
    """A rich console that escapes control characters in the text it is given.

    ``render_str`` is where rich turns every string it prints (a ``print`` argument, a
    table cell) into styled text, before measuring it, so tables stay aligned."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)


out = _SafeConsole(highlight=False, soft_wrap=True)
err = _SafeConsole(stderr=True, highlight=False, soft_wrap=True)


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


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 chapter``, ``3 chapters`` (``plural_form`` for the irregular ones)."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"


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


def excerpt(text: str, limit: int = 600) -> str:
    """A hit's text on one line, clipped at a word boundary."""
    return clip(flat(text), limit)
