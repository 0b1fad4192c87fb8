"""PDF tables as records: one ``Header: value; Header: value`` block per table row.

Why records: a table's plain text comes out cell by cell (often column-interleaved), so a
question about one row ("what do bits 4-7 of CTRL do?") meets a bag of unrelated cells and a
chunk that names the column headers once, far away. Written as ``Field: MODE; Bits: 4-7;
Description: …`` each row carries its own field names, reads as a sentence to the embedder,
and is one block, so the chunker keeps it whole.

Why the records *replace* the table's prose text rather than sit beside it: every cell is in
exactly one record, so nothing is lost, and doubling the same words would double their BM25
weight and waste chunk budget. The prose around the table is untouched, and a page without a
detected table yields exactly the blocks it did before.

Why only ruled tables: pymupdf's ``find_tables`` costs ~0.2 s a page even without its layout
model (and ~1.5 s with it, which also mistook tables of contents for tables), so it runs only
on pages whose vector drawings hold at least two horizontal and two vertical rules (rectangle
edges count) — a check that costs ~3 ms a page. Text-aligned tables without rules stay prose.

Cell text comes from MuPDF's own word extraction (the same as the prose), not from
``Table.extract``, whose character clustering splits letter-spaced words ("P ref ace").
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pymupdf

_MIN_RULE = 5.0  # points: shorter strokes are glyph decorations, not table rules
_FLAT = 1.0  # points: how far from exactly horizontal/vertical a rule may be
_WS = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class TableRecords:
    """One detected table: the area its prose text is taken from, and its row records."""

    area: tuple[float, float, float, float]  # x0, y0, x1, y1 (header included)
    rows: list[tuple[float, float, str]]  # (y0, y1, record text), top to bottom

    def covers(self, bbox: tuple[float, float, float, float]) -> bool:
        """True when a text line's centre lies inside the table: its text is in a record."""
        x, y = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
        x0, y0, x1, y1 = self.area
        return x0 - 1 <= x <= x1 + 1 and y0 - 1 <= y <= y1 + 1


MAX_DRAWING_BYTES = 4_000_000  # decompressed drawing instructions a page may have for its
# paths to be listed: pymupdf builds a dict per path, and one 88 KB PDF page of 2M tiny
# strokes took 3 GB that way. Real ruled tables take a few kB to a few hundred.


def too_many_drawings(page: Any) -> bool:
    """Whether ``page``'s content (its streams and the form XObjects it uses, decompressed)
    exceeds MAX_DRAWING_BYTES: such a page's paths are never listed. Counted stream by
    stream, stopping at the bound; a stream that cannot be read counts as nothing."""
    doc = page.parent
    xrefs = [*page.get_contents(), *(x[0] for x in page.get_xobjects())]
    total = 0
    for xref in dict.fromkeys(xrefs):
        try:
            total += len(doc.xref_stream(xref) or b"")
        except Exception:
            continue
        if total > MAX_DRAWING_BYTES:
            return True
    return False


def _rules(page: Any) -> tuple[dict[int, list[tuple[float, float]]], list[tuple[float, ...]]]:
    """The page's horizontal rules as x-spans by rounded y, and its vertical rules (x, y0, y1);
    rectangles count as their four edges."""
    horizontal: dict[int, list[tuple[float, float]]] = defaultdict(list)
    vertical: list[tuple[float, ...]] = []
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) < _FLAT and abs(ax - bx) > _MIN_RULE:
                    horizontal[round(ay)].append((min(ax, bx), max(ax, bx)))
                elif abs(ax - bx) < _FLAT and abs(ay - by) > _MIN_RULE:
                    vertical.append((ax, min(ay, by), max(ay, by)))
            elif item[0] == "re":
                rect = pymupdf.Rect(item[1])
                x0, y0, x1, y1 = float(rect.x0), float(rect.y0), float(rect.x1), float(rect.y1)
                if x1 - x0 > _MIN_RULE:
                    horizontal[round(y0)].append((x0, x1))
                    horizontal[round(y1)].append((x0, x1))
                if y1 - y0 > _MIN_RULE:
                    vertical += [(x0, y0, y1), (x1, y0, y1)]
    return horizontal, vertical


def has_grid(page: Any) -> bool:
    """Cheap pre-check: do two horizontal rules each meet three vertical rules at distinct x?

    That is the least a ruled table of two columns draws (top and bottom border, each met by
    the left, middle and right rule). A framed code box or a figure frame meets only two, so
    pages full of those never pay for the table finder. Collinear pieces of a rule (one per
    cell) are joined first.
    """
    horizontal, vertical = _rules(page)
    if len(horizontal) < 2 or len(vertical) < 3:
        return False
    crossed = 0
    for y, spans in horizontal.items():
        for x0, x1 in _joined(spans):
            xs = {round(v[0]) for v in vertical
                  if x0 - 1 <= v[0] <= x1 + 1 and v[1] - 1 <= y <= v[2] + 1}
            if len(xs) >= 3:
                crossed += 1
                if crossed >= 2:
                    return True
    return False


def _joined(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Touching or overlapping x-spans of one rule row, merged."""
    out: list[tuple[float, float]] = []
    for x0, x1 in sorted(spans):
        if out and x0 <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], x1))
        else:
            out.append((x0, x1))
    return out


def page_tables(page: Any, flags: int, problems: list[str]) -> list[TableRecords]:
    """The ruled tables on ``page`` as records; [] when there are none.

    A failure inside the table finder must never cost the page its text: the page is left
    to the ordinary prose extraction, and what failed is added to ``problems`` (the parser
    turns them into one warning).
    """
    if too_many_drawings(page) or not has_grid(page):
        return []
    try:
        found = page.find_tables(strategy="lines", use_layout=False).tables
        if not found:
            return []
        words = page.get_text("words", flags=flags, sort=True)
        tables = [_records(table, words) for table in found]
    except Exception as exc:  # pymupdf raises many kinds on odd drawings
        problems.append(f"{type(exc).__name__}: {exc}")
        return []
    return [t for t in tables if t is not None]


def _records(table: Any, words: list[Any]) -> TableRecords | None:
    """Records of one table, or None when it has no usable content (a drawn frame)."""
    header = table.header
    rows = list(table.rows)
    if not header.external and rows:
        rows = rows[1:]  # the first row is the header
    if table.col_count < 2 or not rows:
        return None
    texts = [_cell_text(cell, words) for cell in header.cells]
    worded = sum(1 for text in texts if _LETTER.search(text))
    if worded < max(2, (len(texts) + 1) // 2):
        return None  # no header to name the fields: a figure's frame, not a table
    names = _names(texts)
    records: list[tuple[float, float, str]] = []
    above: list[tuple[Any, str] | None] = [None] * len(names)
    for row in rows:
        parts = []
        for col, cell in enumerate(row.cells[: len(names)]):
            if cell is not None:
                value = _cell_text(cell, words)
                above[col] = (cell, value)
            else:  # merged: a cell from a row above that reaches down here repeats its value
                prev = above[col]
                value = prev[1] if prev is not None and prev[0][3] > row.bbox[1] + 1 else ""
            if value:
                parts.append(f"{names[col]}: {value}")
        if parts:
            records.append((row.bbox[1], row.bbox[3], "; ".join(parts)))
    if not records:
        return None
    area = pymupdf.Rect(table.bbox) | pymupdf.Rect(header.bbox)
    return TableRecords((area.x0, area.y0, area.x1, area.y1), records)


def _names(texts: list[str]) -> list[str]:
    """Field names from header cells: blanks become "Column N", repeats get a number."""
    names: list[str] = []
    for index, text in enumerate(texts):
        name = text.rstrip(":") or f"Column {index + 1}"
        if name in names:
            name = f"{name} ({index + 1})"
        names.append(name)
    return names


def _cell_text(cell: Any, words: list[Any]) -> str:
    """The words whose centre lies in ``cell``, in reading order, wrapped lines rejoined."""
    if cell is None:
        return ""
    x0, y0, x1, y1 = cell[:4]
    text = ""
    line: tuple[int, int] | None = None
    for word in words:
        cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
        if not (x0 <= cx <= x1 and y0 <= cy <= y1):
            continue
        here = (word[5], word[6])
        token = word[4]
        if (
            line is not None
            and here != line
            and text.endswith("-")
            and len(text) > 1
            and text[-2].isalpha()
            and token[:1].islower()
        ):
            text = text[:-1] + token  # a word hyphenated at the cell's line break
        else:
            text = f"{text} {token}" if text else token
        line = here
    return _WS.sub(" ", text).strip()
