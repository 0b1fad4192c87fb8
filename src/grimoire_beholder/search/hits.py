"""What a search returns: ranked hits with full citations, and the result envelope.

The ``to_dict`` shapes are the wire format of the CLI's ``--json`` and the MCP tools, so
their keys are fixed; adding one is an interface change.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from grimoire_beholder.citation import Citation, Source, relative_path
from grimoire_beholder.store.hit_queries import HitRow
from grimoire_beholder.store.records import filled
from grimoire_beholder.structure import MAX_CHUNK_CHARS
from grimoire_beholder.text import clip

ARMS: tuple[str, ...] = ("vector", "keyword")
# Row fields that locate a chunk inside the store; the wire format leaves them out.
_STORE_ONLY = frozenset({"chunk_id", "chunk_index", "page_labels", "source_root"})
_ROW_FIELDS = tuple(f.name for f in fields(HitRow))
_ROW_VALUES = attrgetter(*_ROW_FIELDS)


@dataclass(frozen=True, kw_only=True)
class SearchHit(HitRow):
    """One ranked passage: the store's row plus its rank, scores and citation.

    ``ranks`` holds each arm's rank (None when the arm did not find it); ``rerank_score``
    the reranker's score, when one ran. ``section`` is the breadcrumb. ``context`` holds at
    most ``structure.MAX_CHUNK_CHARS`` characters, as the text does.
    """

    rank: int
    score: float
    ranks: dict[str, int | None]
    citation: Citation
    rerank_score: float | None = None

    @classmethod
    def from_row(cls, row: HitRow, rank: int, score: float, ranks: dict[str, int | None],
                 rerank_score: float | None = None) -> SearchHit:
        """A hit from the store's row plus its rank, fused score, per-arm ranks and the
        reranker's score (when one ran)."""
        source = Source.of(row.book, row.source_type, row.source_path, row.source_root,
                           row.page_labels)
        citation = source.cite_span(row.section, row)
        return filled(cls, {
            # the row's fields: its attributes (a SearchHit's own are all set below)
            **(vars(row) if isinstance(row, HitRow) else dict(
                zip(_ROW_FIELDS, _ROW_VALUES(row), strict=True))),
            # bounded as the text is, also for a context stored before ingest cut them (README)
            "context": clip(row.context or "", MAX_CHUNK_CHARS, at_sentence=True) or None,
            "rank": rank, "score": score, "ranks": {arm: ranks.get(arm) for arm in ARMS},
            "citation": citation, "rerank_score": rerank_score})

    @property
    def page_label(self) -> str | None:
        """The printed page label(s) of the span (PDFs with labels), else None."""
        return self.citation.printed

    @property
    def relative_path(self) -> str | None:
        """The file under its ingested folder (``notes/runbook.md``), else None."""
        return relative_path(self.source_path, self.source_root)

    def to_dict(self) -> dict[str, Any]:
        """The row's public fields, the ranking and the citation, as JSON-ready values."""
        row = {name: getattr(self, name) for name in _ROW_FIELDS if name not in _STORE_ONLY}
        out = {"rank": self.rank, "score": round(self.score, 6), "ranks": dict(self.ranks),
               **row, "relative_path": self.relative_path,
               **self.citation.to_dict()}
        if self.rerank_score is not None:
            out["rerank_score"] = round(self.rerank_score, 6)
        return out


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
