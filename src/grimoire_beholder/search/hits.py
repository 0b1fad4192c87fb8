"""What a search returns: ranked hits with full citations, and the result envelope.

The ``to_dict`` shapes are the wire format of the CLI's ``--json`` and the MCP tools, so
their keys are fixed; adding one is an interface change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store.search import HitRow

ARMS: tuple[str, ...] = ("vector", "keyword")


def page_label(labels: dict[int, str], page_start: int | None,
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


def relative_path(source_path: str, root: str | None) -> str | None:
    """``notes/runbook.md`` for a file ingested from a folder, None otherwise."""
    if not root or not source_path.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return Path(os.path.relpath(source_path, root)).as_posix()


@dataclass
class SearchHit:
    """One ranked passage with everything needed to cite it."""

    rank: int
    score: float
    ranks: dict[str, int | None]
    book_id: int
    slug: str
    book: str
    author: str | None
    source_type: str
    source_path: str
    chapter_index: int
    chapter: str
    section_index: int
    section: str
    page_start: int | None
    page_end: int | None
    page_label: str | None
    line_start: int | None
    line_end: int | None
    text: str
    context: str | None
    group: str = ""
    relative_path: str | None = None  # under the ingested folder root, when there is one
    rerank_score: float | None = None  # the reranker's score, when a reranker ran

    @classmethod
    def from_row(cls, row: HitRow, rank: int, score: float,
                 ranks: dict[str, int | None]) -> SearchHit:
        """A hit from the store's row plus its fused rank, score and per-arm ranks."""
        return cls(
            rank=rank, score=score, ranks={arm: ranks.get(arm) for arm in ARMS},
            book_id=row.book_id, slug=row.slug, book=row.book, author=row.author,
            source_type=row.source_type, source_path=row.source_path,
            chapter_index=row.chapter_index, chapter=row.chapter,
            section_index=row.section_index, section=row.section,
            page_start=row.page_start, page_end=row.page_end,
            page_label=page_label(row.page_labels, row.page_start, row.page_end),
            line_start=row.line_start, line_end=row.line_end, text=row.text,
            context=row.context or None, group=row.group,
            relative_path=relative_path(row.source_path, row.source_root),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "ranks": dict(self.ranks),
            "book_id": self.book_id,
            "slug": self.slug,
            "book": self.book,
            "author": self.author,
            "source_type": self.source_type,
            "source_path": self.source_path,
            "chapter_index": self.chapter_index,
            "chapter": self.chapter,
            "section_index": self.section_index,
            "section": self.section,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "page_label": self.page_label,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "text": self.text,
            "context": self.context,
            "group": self.group,
            "relative_path": self.relative_path,
            **({"rerank_score": round(self.rerank_score, 6)}
               if self.rerank_score is not None else {}),
        }


@dataclass
class SearchResults:
    """A search's hits plus how they were found.

    ``mode`` is the mode actually used (hybrid may degrade to keyword, see ``note``);
    ``fusion`` is "rrf"/"convex" in hybrid mode, else None. ``note`` explains an empty or
    degraded result ("the library is empty", "no match", ...). ``timings_ms`` has one entry
    per stage that ran. ``explain`` (per-candidate fusion traces) is filled only on request.
    """

    query: str
    mode: str
    hits: list[SearchHit] = field(default_factory=list)
    fusion: str | None = None
    note: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    explain: list[dict[str, object]] | None = None
    # Probability (0..1) that the answer is among the hits (search/confidence.py); None when
    # the setting is not calibrated or nothing was found. low_confidence: below min_confidence.
    confidence: float | None = None
    low_confidence: bool = False
    # the confidence model's inputs (for calibration; not part of the wire format)
    features: dict[str, float] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "fusion": self.fusion,
            "results": [hit.to_dict() for hit in self.hits],
            "note": self.note,
            "confidence": self.confidence,
            "low_confidence": self.low_confidence,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }
        if self.explain is not None:
            out["explain"] = self.explain
        return out
