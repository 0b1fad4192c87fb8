"""Checking a quotation against the library: is it there, where exactly, and how does it
differ from what the book says?

1. **Candidates from the keyword index** — never a scan of every book: the quotation's words
   (as typed and NFKC-folded, so ``ﬁ`` and ``fi`` both count) go through the keyword arm's
   safe FTS5 query; the best :data:`CANDIDATE_CHUNKS` chunks name the sections to look in.
2. **Alignment within those sections** — a window of each section's text around its
   candidate chunks (:mod:`textmatch`: typography never counts, omissions marked with an
   ellipsis are allowed, everything else lowers the similarity).
3. **Location** — the chunks of the section narrow the span to a physical page (and its
   printed label) or a line range; when the book's file is still the one ingested, the
   PDF's pages or the text file's lines pin it down exactly.

A quotation is *found* at similarity ≥ :data:`FOUND_AT`; otherwise the closest passage and
what differs are reported. Restricted to one book, a quotation that is in another book says
so in ``note``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from grimoire_beholder.checks.textmatch import (
    Alignment,
    align,
    fold,
    quote_pieces,
    skeleton,
    word_differences,
)
from grimoire_beholder.citation import Citation
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.search import keyword
from grimoire_beholder.store import book_rows, text_spans
from grimoire_beholder.store.records import BookRow, ChunkSpan, SectionPlace
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.text import MAX_QUOTE_CHARS

CANDIDATE_CHUNKS = 24
FOUND_AT = 0.85
_MARKS = "\"'“”‘’«»„‚.,;:!?()[]-–—…"  # what a quotation may carry at its ends
_SLACK = 300  # characters of section text read beyond the candidate chunks on each side


Verdict = Literal["exact", "close", "not_found"]


@dataclass(frozen=True, kw_only=True)
class Passage(SectionPlace):
    """Where a passage is in a book, and the book's own text of it."""

    page_start: int | None
    page_end: int | None
    line_start: int | None
    line_end: int | None
    char_start: int  # in the section's text (get_section)
    char_end: int
    text: str
    citation: Citation

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "citation"}
        return {**out, **self.citation.to_dict()}


@dataclass
class QuoteCheck:
    """The verdict on one quotation: ``exact`` (the same words; typography aside), ``close``
    (found, with small differences) or ``not_found`` (``passage`` is then the closest)."""

    quote: str
    found: bool
    verdict: Verdict
    similarity: float
    passage: Passage | None = None
    differences: list[str] = field(default_factory=list)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"quote": self.quote, "found": self.found, "verdict": self.verdict,
                "similarity": round(self.similarity, 3),
                "passage": self.passage.to_dict() if self.passage else None,
                "differences": list(self.differences), "note": self.note}


@dataclass(frozen=True)
class _Window:
    book_id: int
    chapter_index: int
    section_index: int
    start: int
    end: int
    rank: int


@dataclass
class _Best:
    window: _Window
    alignment: Alignment
    text: str  # the window's text
    spans: list[tuple[int, int]]  # original-text spans of the pieces, within the window


def _windows(conn: Store, chunk_ids: list[int], quote_len: int) -> list[_Window]:
    """Windows of section text around the candidate chunks, merged per section, best first."""
    spans = text_spans.chunk_spans(conn, chunk_ids)
    slack = _SLACK + 2 * quote_len
    merged: list[_Window] = []
    for rank, chunk_id in enumerate(chunk_ids):
        span = spans.get(chunk_id)
        if span is None:
            continue
        start, end = max(0, span.char_start - slack), span.char_end + slack
        for i, w in enumerate(merged):
            same = (w.book_id, w.chapter_index, w.section_index) == (
                span.book_id, span.chapter_index, span.section_index)
            if same and start <= w.end and w.start <= end:
                merged[i] = _Window(w.book_id, w.chapter_index, w.section_index,
                                    min(w.start, start), max(w.end, end), w.rank)
                break
        else:
            merged.append(_Window(span.book_id, span.chapter_index, span.section_index,
                                  start, end, rank))
    return merged


def _word_edges(text: str, start: int, end: int, quote: str = "") -> tuple[int, int]:
    """Widen a span to whole words, and over as many marks (quotes, a full stop) at each end
    as the quotation has there."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    quote = quote.strip()
    lead = len(quote) - len(quote.lstrip(_MARKS))
    trail = len(quote) - len(quote.rstrip(_MARKS))
    while lead and start > 0 and text[start - 1] in _MARKS:
        start, lead = start - 1, lead - 1
    while trail and end < len(text) and text[end] in _MARKS:
        end, trail = end + 1, trail - 1
    return start, end


def _best(conn: Store, windows: list[_Window], pieces: list[str]) -> _Best | None:
    best: _Best | None = None
    folded = [fold(p) for p in pieces]
    for window in windows:
        text = text_spans.section_slice(conn, window.book_id, window.chapter_index,
                                      window.section_index, window.start, window.end)
        sk = skeleton(text)
        found = align(folded, sk.text)
        if found is None or (best is not None
                             and found.similarity <= best.alignment.similarity):
            continue
        spans = [_word_edges(text, *sk.original_span(s, e), piece)
                 for (s, e), piece in zip(found.spans, pieces, strict=True)]
        # Letters the widening to whole words added ("a" inside "Generalized") are letters
        # the quotation does not have: they count against it like any other difference.
        widened = sum(len(fold(text[s:e])) for s, e in spans)
        if widened > sum(e - s for s, e in found.spans):
            found = replace(found, similarity=2 * found.agree / (
                sum(map(len, folded)) + widened))
            if best is not None and found.similarity <= best.alignment.similarity:
                continue
        best = _Best(window, found, text, spans)
        if found.similarity >= 1.0:
            break
    return best


def _narrow(spans: list[ChunkSpan], pos: int, lo_attr: str, hi_attr: str
            ) -> tuple[int | None, int | None]:
    """The page (or line) range the character at ``pos`` can be on, from the chunks over it."""
    covering = [s for s in spans if s.char_start <= pos < s.char_end
                and getattr(s, lo_attr) is not None]
    if not covering:
        near = [s for s in spans if getattr(s, lo_attr) is not None]
        if not near:
            return None, None
        covering = [min(near, key=lambda s: abs(s.char_start - pos))]
    lo = max(getattr(s, lo_attr) for s in covering)
    hi = min(getattr(s, hi_attr) for s in covering)
    if lo > hi:
        lo, hi = min(getattr(s, lo_attr) for s in covering), max(
            getattr(s, hi_attr) for s in covering)
    return lo, hi


def _lines_in_file(path: Path, first: int, last: int, text: str) -> tuple[int, int] | None:
    """The lines (first, last) of a text file among ``first..last`` holding ``text``."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[first - 1:last]
    except OSError:
        return None
    bounds, parts = [], []
    for line in lines:
        parts.append(fold(line))
        bounds.append(sum(map(len, parts)))
    found = align([fold(text)], "".join(parts))
    if found is None or found.similarity < 0.8:
        return None
    from bisect import bisect_right

    return first + bisect_right(bounds, found.start), first + bisect_right(bounds, found.end - 1)


def _widened(best: _Best, length: int) -> tuple[int, int]:
    """The aligned span padded to at least ``length`` characters (for a closest passage)."""
    start, end = best.spans[0][0], best.spans[-1][1]
    pad = max(0, length - (end - start)) // 2
    return _word_edges(best.text, max(0, start - pad), min(len(best.text), end + pad))


def _locate(conn: Store, book: BookRow, best: _Best, span: tuple[int, int]
            ) -> Passage:
    """The passage at ``span`` of the best window: section, pages or lines, offsets, text."""
    from grimoire_beholder.checks.pages import pages_of_text, path_if_unchanged

    w = best.window
    head = text_spans.section_head(conn, w.book_id, w.chapter_index, w.section_index)
    assert head is not None
    start, end = w.start + span[0], w.start + span[1]
    text = best.text[span[0]:span[1]]
    spans = text_spans.section_spans(conn, w.book_id, w.chapter_index, w.section_index)
    page_lo, _ = _narrow(spans, start, "page_start", "page_end")
    _, page_hi = _narrow(spans, end - 1, "page_start", "page_end")
    line_lo, _ = _narrow(spans, start, "line_start", "line_end")
    _, line_hi = _narrow(spans, end - 1, "line_start", "line_end")
    path = path_if_unchanged(book)  # only a file that still holds what was ingested
    if path is not None and book.source_type == "pdf" and page_lo != page_hi:
        exact = pages_of_text(path, page_lo or 1, page_hi or page_lo or 1, text)
        page_lo, page_hi = exact if exact else (page_lo, page_hi)
    if path is not None and book.source_type in ("markdown", "text") and line_lo != line_hi:
        exact = _lines_in_file(path, line_lo or 1, line_hi or line_lo or 1, text)
        line_lo, line_hi = exact if exact else (line_lo, line_hi)
    from grimoire_beholder.views import book_source

    citation = book_source(book).cite(head.breadcrumb, page_lo, page_hi, line_lo, line_hi)
    return Passage(
        book_id=book.id, slug=book.slug, book=book.name, author=book.author,
        source_type=book.source_type, source_path=book.source_path,
        chapter_index=w.chapter_index, chapter=head.chapter,
        section_index=w.section_index, section=head.breadcrumb, page_start=page_lo,
        page_end=page_hi, line_start=line_lo, line_end=line_hi, char_start=start,
        char_end=end, text=text, citation=citation)


def _differences(best: _Best, pieces: list[str]) -> list[str]:
    """What separates each piece of the quotation from the book's text it aligned with."""
    from grimoire_beholder.checks.textmatch import Differences

    diffs = Differences()
    for (start, end), piece in zip(best.spans, pieces, strict=True):
        word_differences(best.text[start:end], piece, into=diffs)
    return diffs.describe()


_LINE_HYPHEN = re.compile(r"(\w)[-\u00ad\u2010\u2011]\s+(\w)")


def _search_text(quote: str) -> str:
    """The quotation as typed plus its NFKC form and its words joined across line-end
    hyphens ("war-" at a line end and "fare" also as "warfare"), for the keyword query
    (OR-ed words; the longest are kept, so the joined ones win over their halves)."""
    folded = unicodedata.normalize("NFKC", quote)
    joined = _LINE_HYPHEN.sub(r"\1\2", folded)
    return " ".join(dict.fromkeys((quote, folded, joined)))


def check(conn: Store, quote: str, book_ids: Collection[int] | None = None
          ) -> QuoteCheck:
    """Check ``quote`` against the books ``book_ids`` (None: all). See the module doc."""
    quote = quote.strip() if isinstance(quote, str) else ""
    if not fold(quote):
        raise GrimoireError("empty quotation: give the words to check")
    if len(quote) > MAX_QUOTE_CHARS:
        raise GrimoireError(f"the quotation is {len(quote):,} characters; check at most "
                            f"{MAX_QUOTE_CHARS:,} at a time")
    pieces = quote_pieces(quote)
    candidates = [c for c, _ in keyword.search(conn, _search_text(quote), CANDIDATE_CHUNKS,
                                               book_ids)]
    best = _best(conn, _windows(conn, candidates, len(quote)), pieces)
    if best is None:
        return QuoteCheck(quote=quote, found=False, verdict="not_found", similarity=0.0,
                          note="no passage in the library shares enough of its words")
    book = book_rows.find_book(conn, best.window.book_id)
    assert book is not None
    similarity = best.alignment.similarity
    found = similarity >= FOUND_AT
    verdict: Verdict = "exact" if similarity >= 1.0 else "close" if found else "not_found"
    span = ((best.spans[0][0], best.spans[-1][1]) if found else _widened(best, len(quote)))
    return QuoteCheck(quote=quote, found=found, verdict=verdict, similarity=similarity,
                      passage=_locate(conn, book, best, span),
                      differences=[] if verdict == "exact" else _differences(best, pieces))


def check_in(conn: Store, quote: str, book: BookRow | None) -> QuoteCheck:
    """:func:`check` against ``book`` (None: every book); a quotation not in ``book`` but in
    another says where in its note."""
    if book is None:
        return check(conn, quote)
    result = check(conn, quote, [book.id])
    if not result.found:
        elsewhere = check(conn, quote)
        if elsewhere.found and elsewhere.passage is not None:
            where = elsewhere.passage
            result.note = (f"not in '{book.slug}', but it is in '{where.slug}' "
                           f"({where.citation})")
    return result
