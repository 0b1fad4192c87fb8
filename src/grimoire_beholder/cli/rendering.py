"""Rendering for the CLI: rich tables and text on stdout, progress bars on stderr (a query's
hits: ``hit_lines.py``; JSON: ``plain_output.py``).

Text from books and file names may hold terminal escape sequences: the consoles escape
control characters in everything they print (``cli/terminal.py`` has the rule and the
plain-stream half of it).
"""

from __future__ import annotations

import io
import time
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from grimoire_beholder.citation import extent
from grimoire_beholder.cli.terminal import terminal_safe

if TYPE_CHECKING:  # rich.progress costs ~80 ms to import; only ingest/sync draw bars
    from rich.progress import Progress, TaskID


class _SafeConsole(Console):
    """A rich console that escapes control characters in the text it is given.

    ``render_str`` is where rich turns every string it prints (a ``print`` argument, a
    table cell) into styled text, before measuring it, so tables stay aligned."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)

    @property  # type: ignore[misc]  # read-only here: nothing in rich reassigns it
    def file(self) -> IO[str]:
        """The real stream under every wrapper: rich's live display (progress bars) wraps
        ``sys.stderr`` in its own proxy, around ``terminal``'s escaping stream, and rich
        unwraps only one layer; the bar's own control codes must reach the terminal raw."""
        file = super().file
        while hasattr(file, "rich_proxied_file"):
            file = file.rich_proxied_file
        return file


# No emoji codes: ``:fire:`` in a book or a file name is printed as written, as it is to a
# pipe (plain_output.py) and in --json.
out = _SafeConsole(highlight=False, soft_wrap=True, emoji=False)
err = _SafeConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)


FULL_BAR_WIDTH = 64  # columns that hold every progress column and a bar of ~10
# Columns a bar line leaves free at its end: Ctrl-C makes the terminal echo "^C" where the
# cursor is, the end of the last bar line; on a line of the full width that echo wrapped to
# a new line, and every redraw (rich moves up by lines) then printed the top bar once more.
ECHO_ROOM = 2
DUMB_EVERY = 10.0  # seconds between a dumb terminal's progress lines


class ShownLines:
    """The lines a run's progress showed on stderr, so a folder's recap of problems at the
    end (``sync_output``) repeats none of them — unless the first problem shown has
    scrolled off the terminal since (about a screenful of lines after it, as the terminal
    wraps them). A pipe or a file keeps every line: there it is never repeated."""

    PROBLEMS = ("failed ", "skipped ")  # how ``FileOutcome.describe`` starts them
    BELOW = 4  # lines under the last message: up to three stage bars and the result line

    def __init__(self) -> None:
        self.lines: set[str] = set()
        self._after_problem: int | None = None

    def add(self, text: str) -> None:
        if self._after_problem is not None:
            self._after_problem += 1 + len(text) // max(err.width, 1)
        elif text.startswith(self.PROBLEMS):
            self._after_problem = 0
        self.lines.add(text)

    def scrolled_away(self) -> bool:
        """Whether the first problem shown is off the terminal's screen by now."""
        return (self._after_problem is not None and err.is_terminal
                and self._after_problem + self.BELOW >= err.height)


class RichProgress:
    """The pipeline's Progress as rich bars on stderr; silent when not a TTY or --quiet.
    Per-file lines go to stderr as they come, but not under ``--quiet`` nor, with
    ``file_lines`` false, under ``--json`` (its stdout names each file with its action and
    error); a ``warning:`` line always does.

    A dumb terminal (``TERM=dumb``: Emacs' shell, some IDE consoles) cannot redraw a bar,
    and rich would show nothing until the run ends: there each stage gets a plain line as
    it starts, then one every ``DUMB_EVERY`` seconds and one when it is done."""

    def __init__(self, *, quiet: bool = False, file_lines: bool = True) -> None:
        self.enabled = not quiet and err.is_terminal
        self.lines = self.enabled and err.is_dumb_terminal
        self.quiet = quiet
        self.file_lines = file_lines
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._started = time.perf_counter()
        self._stage_started = self._started
        self._stage: list[Any] = []  # dumb terminal: [name, total, done, done when last shown]
        self._shown_at = self._started
        self.shown = ShownLines()

    def __enter__(self) -> RichProgress:
        if self.enabled and not self.lines:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            # Below FULL_BAR_WIDTH the rate and elapsed time are left out: squeezed in, rich
            # cut the count to "…" and the elapsed time to "0…" (40 columns)
            timing = ([TextColumn("{task.fields[rate]}"), TimeElapsedColumn()]
                      if err.width >= FULL_BAR_WIDTH else [])
            class Bars(Progress):
                """Bars drawn ``ECHO_ROOM`` columns short of the terminal's width."""

                def get_renderables(self) -> Any:
                    from rich.constrain import Constrain

                    width = max(err.width - ECHO_ROOM, 1)
                    for renderable in super().get_renderables():
                        yield Constrain(renderable, width=width)

            self._bar = Bars(
                TextColumn("[bold]{task.description:<11}"), BarColumn(),
                MofNCompleteColumn(), *timing, TextColumn("eta [cyan]{task.fields[eta]}"),
                console=err, transient=False,
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        self._stage_line(final=True)

    def stage(self, name: str, total: int) -> None:
        if self.lines:
            self._stage_line(final=True)
            self._stage = [name, total, 0, None]
            self._stage_started = time.perf_counter()
            self._stage_line()
        if self._bar is not None:
            if self._task is not None:
                self._bar.update(self._task, completed=self._bar.tasks[-1].total)
            self._task = self._bar.add_task(name, total=total, rate="", eta="-:--:--")
            self._stage_started = time.perf_counter()

    def retotal(self, total: int) -> None:
        if self._stage:
            self._stage[1] = total
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, total=total)
            self._show_rate()

    def advance(self, n: int = 1) -> None:
        if self._stage:
            self._stage[2] += n
            if time.perf_counter() - self._shown_at >= DUMB_EVERY:
                self._stage_line()
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, n)
            self._show_rate()

    def _rate(self, completed: float, total: float) -> tuple[str, str]:
        """The stage's rate so far and the ETA at that rate, as shown."""
        elapsed = max(time.perf_counter() - self._stage_started, 1e-6)
        rate = completed / elapsed
        left = int(max(total - completed, 0) / rate)
        return f"{rate:6.1f}/s", f"{left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d}"

    def _stage_line(self, *, final: bool = False) -> None:
        """A dumb terminal's line for the current stage: its count (with the rate and ETA
        once something is done); ``final``: only if the count changed since the last."""
        if not self._stage or (final and self._stage[2] == self._stage[3]):
            return
        name, total, done, _ = self._stage
        line = f"{name:<11} {done}/{total}"
        if done > 0:
            rate, eta = self._rate(done, total)
            line += f" {rate.strip()} eta {eta}"
        self._stage[3] = done
        self._shown_at = time.perf_counter()
        err.print(line, markup=False, highlight=False)

    def _show_rate(self) -> None:
        """The stage's rate so far and the ETA at that rate: rich's own ETA follows the last
        seconds' speed, which a folder's bursts (parse a file, embed its chunks at once) make
        say a second when minutes remain."""
        assert self._bar is not None and self._task is not None
        task = self._bar.tasks[-1]
        if task.completed <= 0:
            return
        rate, eta = self._rate(task.completed, task.total or 0)
        self._bar.update(self._task, rate=rate, eta=eta)

    def message(self, text: str) -> None:
        if not self.file_lines and is_file_line(text):  # --json: stdout names each file
            return
        if not self.quiet or text.startswith("warning:"):  # --quiet: no progress, still warnings
            err.print(fit(text, 2, err), markup=False)  # wrapped at words, as summaries are
            self.shown.add(text)


def is_file_line(text: str) -> bool:
    """Whether ``text`` is a file's outcome line (``views.FileOutcome.describe``)."""
    from grimoire_beholder.views import SYNC_ACTIONS

    return any(text.startswith(f"{action:<9} ") for action in SYNC_ACTIONS)


class MessageProgress:
    """Per-file lines on stderr and no bar: for ``sync --watch``, which runs many syncs."""

    def __init__(self, *, quiet: bool = False, file_lines: bool = True) -> None:
        self.quiet = quiet
        self.file_lines = file_lines  # False under --json: its reports name each file
        self.shown = ShownLines()  # the CLI starts it anew after each sync's report

    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def message(self, text: str) -> None:
        if not self.file_lines and is_file_line(text):
            return
        if not self.quiet or text.startswith("warning:"):  # --quiet: no progress, still warnings
            err.print(fit(text, 2, err), markup=False)  # wrapped at words, as summaries are
            self.shown.add(text)


# Columns of `list`, and which go first when the terminal is too narrow for all of them.
BOOK_COLUMNS = ("id", "slug", "name", "author", "type", "size", "ch/sec", "embedded")
DROP_WHEN_NARROW = ("labels", "author", "type", "ch/sec", "name", "size")
LABELS_MAX_WIDTH = 40
NAME_MIN_WIDTH = 16
AUTHOR_MAX_WIDTH = 24
COLUMN_GAP = 2


def _book_cells(b: dict[str, Any]) -> dict[str, str]:
    return {"id": str(b["id"]), "slug": b["slug"], "name": b["name"],
            "author": b["author"] or "", "type": b["source_type"],
            "size": extent(b["source_type"], b["page_count"], b.get("line_count")),
            "ch/sec": f"{b['chapters']}/{b['sections']}",
            "embedded": f"{b['status'].get('embedded', 0)}/{b['chunks']}",
            "labels": book_labels(b)}


def book_labels(b: dict[str, Any]) -> str:
    """A Calibre or Zotero book's series (and index), collections and tags, on one line:
    ``Coastal Guides #1 · [Ocean Physics] · sea, tides``; "" for other books."""
    parts = []
    if b.get("series"):
        index = (b.get("metadata") or {}).get("series_index")
        parts.append(b["series"] + (f" #{index:g}" if isinstance(index, int | float) else ""))
    parts += [f"[{c}]" for c in b.get("collections") or []]
    if b.get("tags"):
        parts.append(", ".join(b["tags"]))
    return " · ".join(parts)


def books_table(books: list[dict[str, Any]], width: int) -> str:
    """One row per book, fitted to ``width`` columns: a slug (what the other commands take)
    is never broken, the name wraps at words, a long author is cut with "…"; author, type,
    chapter/section counts, name and size are left out, in that order, when they would not
    fit (``list --json`` has everything). A slug is at most ~62 characters, so 80 columns
    always fit. Lines carry no trailing blanks."""
    rows = [_book_cells(b) for b in books]
    columns = list(BOOK_COLUMNS)
    if any(r["labels"] for r in rows):  # books from a Calibre or Zotero library
        columns.insert(columns.index("type"), "labels")
    natural = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in columns}
    natural["author"] = min(natural["author"], AUTHOR_MAX_WIDTH)
    natural["labels"] = min(natural.get("labels", 0), LABELS_MAX_WIDTH)

    def needed() -> int:
        return sum(min(natural[c], NAME_MIN_WIDTH) if c == "name" else natural[c]
                   for c in columns) + COLUMN_GAP * (len(columns) - 1)

    for column in DROP_WHEN_NARROW:
        if needed() <= width:
            break
        if column in columns:
            columns.remove(column)
    from rich.table import Table  # only `list` draws a table; a query's import skips it

    table = Table(box=None, pad_edge=False, padding=(0, COLUMN_GAP // 2))
    for column in columns:
        table.add_column(column, no_wrap=column != "name",
                         max_width={"author": AUTHOR_MAX_WIDTH,
                                    "labels": LABELS_MAX_WIDTH}.get(column),
                         overflow="ellipsis" if column in ("author", "labels") else "fold",
                         justify="right" if column in ("id", "ch/sec", "embedded") else "left")
    for row in rows:
        table.add_row(*(row[c] for c in columns))
    # Too narrow even so: the lines overflow (the terminal wraps them) rather than cut slugs.
    buffer = io.StringIO()
    _SafeConsole(file=buffer, width=max(width, needed()), color_system=None,
                emoji=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def fit(line: str, indent: int = 0, console: Console | None = None) -> str:
    """``line`` wrapped at words to the terminal's width, later lines indented by
    ``indent``; a word longer than the width (a path) is left whole. Unchanged when the
    console (stdout's unless given) is not a terminal, so piped lines stay whole."""
    console = console or out
    if not console.is_terminal or len(line) <= console.width:
        return line
    import textwrap

    return textwrap.fill(line, width=console.width, subsequent_indent=" " * indent,
                         break_long_words=False, break_on_hyphens=False)
