"""Where a PDF's headings are: outline entries placed on the page, or headings guessed from fonts.

Split from ``parse/pdf.py`` because finding the headings is one concern (outline
destinations, their coordinate systems, snapping to the printed heading, the font-size
fallback) and assigning text to them is another. See ``parse/pdf.py``'s docstring for the
rules an outline entry follows when it points at a page the file does not have.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pymupdf

_WS = re.compile(r"\s+")


@dataclass
class PdfLine:
    """One extracted text line with what the later passes need to know about it."""

    page: int  # 1-based physical page
    y0: float
    y1: float
    text: str
    size: float
    block: int  # block number on its page: lines of one block form one paragraph
    record: bool = False  # a table row record: never a heading, header or joined paragraph


@dataclass
class HeadingEntry:
    """A heading (outline entry or detected) at a position: page and top-down y."""

    level: int
    title: str
    page: int
    y: float


def _dest_y(doc: Any, page: int, dest: dict[str, Any]) -> float:
    """Top-down y of an outline destination on ``page`` (1-based); page top if unknown.

    pymupdf reports explicit (GoTo) destinations in top-down page coordinates but named
    destinations (pdfTeX's kind) in PDF coordinates, whose origin is the bottom-left corner.
    """
    to = dest.get("to")
    if to is None or isinstance(to, str):
        return 0.0
    x, y = float(to[0]), float(to[1])
    pg = doc[page - 1]
    if dest.get("kind") == pymupdf.LINK_NAMED:
        if y <= 0:  # a null /XYZ top: no position given
            return 0.0
        y = (pymupdf.Point(x, y) * pg.transformation_matrix).y
    return min(max(y, 0.0), pg.rect.height)


def _loaded(item: Any) -> bool:
    """Whether an outline item is there (a document without an outline has an empty one,
    which must not be asked for its destination)."""
    try:
        return item is not None and item.title is not None
    except AttributeError:
        return False


def _destinations(doc: Any) -> list[dict[str, Any]]:
    """Each outline item's destination (``kind`` and ``to``, as ``get_toc(simple=False)``
    gives them), in ``get_toc``'s order. Read item by item: ``get_toc(simple=False)`` also
    collects every item's style, which is quadratic in the outline (40k entries: 34 s)."""
    found: list[dict[str, Any]] = []
    stack = [doc.outline]
    while stack:
        item = stack.pop()
        if not _loaded(item):
            continue
        dest = item.destination(doc)
        entry: dict[str, Any] = {"kind": dest.kind}
        if dest.kind == pymupdf.LINK_NAMED:
            entry.update(dest.named)
            if "to" in entry:
                entry["to"] = pymupdf.Point(entry["to"])
        elif dest.kind == pymupdf.LINK_GOTO:
            entry["to"] = pymupdf.Point(
                dest.lt.x if dest.flags & pymupdf.LINK_FLAG_L_VALID else 0,
                dest.lt.y if dest.flags & pymupdf.LINK_FLAG_T_VALID else 0)
        found.append(entry)
        stack.append(item.next)  # depth first, children before siblings, as get_toc
        stack.append(item.down)
    return found


def outline_entries(doc: Any, warnings: list[str]) -> list[HeadingEntry]:
    """Outline entries with positions, invalid pages clamped (see the module docstring)."""
    try:
        toc = doc.get_toc(simple=True)
        dests = _destinations(doc) if toc else []  # no outline: no item to walk
    except Exception as exc:
        warnings.append(f"outline unreadable ({exc}); guessing headings")
        return []
    if len(dests) != len(toc):
        dests = [{} for _ in toc]  # positions unknown: page tops
    found: list[HeadingEntry] = []
    for item, dest in zip(toc, dests, strict=True):
        level, title, page = int(item[0]), str(item[1]).strip(), int(item[2])
        title = title or (f"Untitled (page {page})" if page > 0 else "Untitled")
        if not 1 <= page <= doc.page_count:
            found.append(HeadingEntry(level, title, -1, -1.0))
            continue
        try:
            found.append(HeadingEntry(level, title, page, _dest_y(doc, page, dest)))
        except Exception:
            found.append(HeadingEntry(level, title, page, 0.0))
    entries: list[HeadingEntry] = []
    after: HeadingEntry | None = None
    bad = 0
    for entry in reversed(found):
        if entry.page == -1:
            bad += 1
            if after is None:
                continue
            entry.page, entry.y = after.page, after.y
        else:
            after = entry
        entries.append(entry)
    if bad:
        warnings.append(
            f"{bad} outline entr{'y' if bad == 1 else 'ies'} point at pages this "
            "file does not have; placed at the next entry"
        )
    entries.reverse()
    return entries


_NUMBER_PREFIX = re.compile(
    r"^(?:(?:chapter|appendix|part)\s+)?(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+|[a-z](?=[.:]))[.:]?\s+")


def _heading_key(text: str) -> str:
    """A heading without its number or case: '1.6 An introductory session' → 'an intro…'."""
    flat = _WS.sub(" ", text).strip().lower()
    return _NUMBER_PREFIX.sub("", flat) if len(flat) > 6 else flat


def snap_to_headings(entries: list[HeadingEntry], lines: list[PdfLine]) -> list[HeadingEntry]:
    """Move an entry down to its printed heading when its destination sits above it.

    Some generators (texinfo's named destinations, for one) point an entry at the top of the
    page while its heading is lower down; the text above the heading still belongs to the
    previous section. An entry moves only to a line on its page that reads as its title, below
    the destination and above the next entry placed on the same page.
    """
    by_page: dict[int, list[tuple[PdfLine, str]]] = {}
    for line in lines:
        if not line.record:
            by_page.setdefault(line.page, []).append((line, _heading_key(line.text)))
    limits = _next_below(entries)
    for entry, limit in zip(entries, limits, strict=True):
        title = _heading_key(entry.title)
        if entry.page < 1 or len(title) < 3:
            continue
        for line, key in by_page.get(entry.page, []):
            if not entry.y - 2.0 <= line.y0 < limit:
                continue
            if key == title or (len(key) >= 12 and title.startswith(key)):
                entry.y = max(entry.y, line.y0 - 0.5)
                break
    return entries


def _next_below(entries: list[HeadingEntry]) -> list[float]:
    """For each entry, the highest y below it of a later entry on its page (inf if none):
    each page's entries are walked from the last, keeping the later ones' y sorted, so an
    outline of 100k entries costs n log n, not n² (it took minutes)."""
    limits = [float("inf")] * len(entries)
    later: dict[int, list[float]] = {}
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        ys = later.setdefault(entry.page, [])
        at = bisect.bisect_right(ys, entry.y)
        if at < len(ys):
            limits[i] = ys[at]
        bisect.insort(ys, entry.y)
    return limits


def heading_entries(lines: list[PdfLine]) -> list[HeadingEntry]:
    """Guess headings from font sizes: larger-than-body sizes, biggest first, as levels 1-3."""
    weight: Counter[float] = Counter()
    for ln in lines:
        weight[ln.size] += len(ln.text)
    lines = [ln for ln in lines if not ln.record]  # a table row is never a heading
    if not weight:  # no text lines at all: nothing to take headings from
        return []
    body = weight.most_common(1)[0][0]
    heads: list[PdfLine] = []
    for ln in lines:
        if ln.size < body * 1.15 or len(ln.text) > 150 or not re.search(r"[^\W\d_]", ln.text):
            continue
        prev = heads[-1] if heads else None
        if prev and (prev.page, prev.block, prev.size) == (ln.page, ln.block, ln.size):
            prev.text, prev.y1 = f"{prev.text} {ln.text}", ln.y1  # a heading wrapped in two
        else:
            heads.append(PdfLine(ln.page, ln.y0, ln.y1, ln.text, ln.size, ln.block))
    sizes = sorted({h.size for h in heads}, reverse=True)
    if len(sizes) > 1 and all(h.page == 1 for h in heads if h.size == sizes[0]):
        sizes = sizes[1:]  # a cover title, not a chapter heading
    levels = {size: rank + 1 for rank, size in enumerate(sizes[:3])}
    return [
        HeadingEntry(levels[h.size], h.text, h.page, h.y0 - 1) for h in heads if h.size in levels
    ]
