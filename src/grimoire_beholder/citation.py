"""Where a passage is, and the one way to write it down.

Every surface that names a location — the CLI's text and ``--json``, the MCP tools, the
assistant hooks — shows :class:`Citation` as the core made it and never rebuilds it from
the span fields, so one section is cited the same way everywhere. The rules, per format:

* PDF: physical pages, which every viewer can jump to, plus the printed page labels when
  the book has them and they differ: ``p. 19``, ``pp. 19–20 (printed 15–16)``.
* EPUB: the "pages" are synthetic (~1,024 characters each, see ``parse/epub.py``), which
  no reader shows, so they are locations, never pages: ``loc. 18–19``.
* Markdown and text: the file and its lines, the way an editor jumps:
  ``notes/runbook.md:120-148`` (relative to the ingested folder, else absolute).

Also the book's own number a hit's heading prints (``own_number``) and the command that
prints a section (``show_command``), which every hit and outline line name.

Core module: imports nothing from the adapters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from grimoire_beholder.text import plural

SEPARATOR = " · "
# Every line break splitlines knows: a file name may hold any of them, and a location is
# one line (else a hit's citation in `query` starts a forged line).
_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def page_label(labels: Mapping[int, str], page_start: int | None,
               page_end: int | None) -> str | None:
    """The printed page label(s) of a span, e.g. ``"xii"`` or ``"12–13"``; None without labels.

    A span whose two ends carry the same label (or only one labelled end) shows one label.
    """
    if not labels or page_start is None:
        return None
    first = labels.get(page_start)
    last = labels.get(page_end) if page_end is not None else None
    if first is None or last is None or first == last:
        return first if first is not None else last
    return f"{first}–{last}"


def one_line(name: str) -> str:
    """A file name as one line: each line break written ``⏎``."""
    return _BREAKS.sub(" ⏎ ", name)


def relative_path(source_path: str, root: str | None) -> str | None:
    """``notes/runbook.md`` for a file ingested from a folder, None otherwise."""
    if not root or not source_path.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return Path(os.path.relpath(source_path, root)).as_posix()


def extent(source_type: str, page_count: int | None, line_count: int | None) -> str:
    """A book's size in the unit its citations use: ``12 pages``, ``40 loc.``, ``300 lines``."""
    if page_count is not None:
        return plural(page_count, "page") if source_type == "pdf" else f"{page_count} loc."
    return plural(line_count or 0, "line")


def _span(start: int, end: int | None, dash: str = "–") -> str:
    return str(start) if end is None or end == start else f"{start}{dash}{end}"


@dataclass(frozen=True)
class Citation:
    """A passage's place: its book, breadcrumb and span in the unit a reader can find.

    ``unit`` is ``"page"`` (PDF), ``"loc"`` (EPUB's synthetic pages), ``"line"`` (Markdown
    and text) or ``""`` when no span is known. ``printed`` is the PDF's own page label(s)
    of the span; ``path`` the file a line span is in.
    """

    book: str
    breadcrumb: str
    unit: str = ""
    start: int | None = None
    end: int | None = None
    printed: str | None = None
    path: str | None = None

    @property
    def location(self) -> str:
        """``pp. 19–20 (printed 15–16)``, ``loc. 18``, ``notes/a.md:12-20`` or ``""``."""
        if self.start is None:
            return ""
        if self.unit == "line":
            path = one_line(self.path or "")
            return f"{path}:{_span(self.start, self.end, '-')}"
        if self.unit == "loc":
            return f"loc. {_span(self.start, self.end)}"
        pages = _span(self.start, self.end)
        where = f"p. {pages}" if pages == str(self.start) else f"pp. {pages}"
        return where + (f" (printed {self.printed})"
                        if self.printed and self.printed != pages else "")

    def __str__(self) -> str:
        """``Book · Chapter › Section · pp. 19–20``; a line span leads, as in grep output:
        ``notes/runbook.md:120-148 · Runbook › Deploys › Rollback``."""
        if self.unit == "line" and self.start is not None:
            parts = [self.location, self.breadcrumb]
        else:
            parts = [self.book, self.breadcrumb, self.location]
        return SEPARATOR.join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        """The citation's keys in the wire format (CLI ``--json``, MCP results)."""
        return {"page_label": self.printed, "citation": str(self), "location": self.location}


class Spanned(Protocol):
    """Anything with a page span and a line span (a hit's row, a section row)."""

    @property
    def page_start(self) -> int | None: ...
    @property
    def page_end(self) -> int | None: ...
    @property
    def line_start(self) -> int | None: ...
    @property
    def line_end(self) -> int | None: ...


@dataclass(frozen=True)
class Source:
    """What citing a passage needs to know about its book (one per book, many citations)."""

    name: str
    source_type: str
    path: str
    page_labels: Mapping[int, str]

    @classmethod
    def of(cls, name: str, source_type: str, source_path: str, source_root: str | None,
           page_labels: Mapping[int, str]) -> Source:
        return cls(name, source_type, relative_path(source_path, source_root) or source_path,
                   page_labels)

    def cite(self, breadcrumb: str, page_start: int | None = None,
             page_end: int | None = None, line_start: int | None = None,
             line_end: int | None = None) -> Citation:
        """The citation of a span of this book (pages win over lines when both are known)."""
        if page_start is not None:
            unit = "page" if self.source_type == "pdf" else "loc"
            return Citation(self.name, breadcrumb, unit, page_start, page_end,
                            page_label(self.page_labels, page_start, page_end))
        if line_start is not None:
            return Citation(self.name, breadcrumb, "line", line_start, line_end,
                            path=self.path)
        return Citation(self.name, breadcrumb)

    def cite_span(self, breadcrumb: str, span: Spanned) -> Citation:
        return self.cite(breadcrumb, span.page_start, span.page_end, span.line_start,
                         span.line_end)


# A heading's own number: "5.7.2 Title", "§ 4.1", "IV. Title", "Chapter 5: Title", "Part II";
# a lone number of four digits or more starts a heading as a year ("2024 in review"), not as
# a section.
_OWN_NUMBER = re.compile(
    r"^\s*(?:§\s*)?(?P<n>\d+(?:\.\d+)+|\d{1,3}|[IVXLC]+(?=\.))\.?\s+\S"
    r"|^\s*(?P<word>(?:chapter|part|book|section|appendix|lecture|lesson)\s+"
    r"(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])\b)", re.IGNORECASE)


def own_number(breadcrumb: str) -> str | None:
    """The book's own number of a section, from the deepest heading of ``breadcrumb``
    ("A › B › C") that prints one: ``5.7.2``, ``IV``, ``Chapter 5``; None when none does.
    It differs from the chapter and section indices (positions in the outline, from 0)."""
    for title in reversed(breadcrumb.split(" › ")):
        match = _OWN_NUMBER.match(title)
        if match:
            return match.group("n") or " ".join(match.group("word").split())
    return None


def show_command(slug: str, chapter_index: int | str, section_index: int | str) -> str:
    """The command that prints a section: what every hit and outline line points to."""
    return f"grimoire-beholder show {slug} {chapter_index} {section_index}"
