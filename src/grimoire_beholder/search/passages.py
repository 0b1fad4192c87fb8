"""From a matching chunk to the passage returned: the chunk, widened to about
:data:`PASSAGE_CHARS` characters of its section.

Why: chunks are cut to what the embedding model reads (256 word pieces, ~850 characters),
but an answer often starts a sentence before the chunk or ends a sentence after it, and a
reader (or an assistant) needs a little surrounding text to trust it. The widening is
shared between both sides, ends on sentence (else word) boundaries, never leaves the
section, and the cited pages or lines grow to cover the text actually returned. The text
stays an exact slice of the section, so it can be quoted and located, and never holds more
than ``structure.MAX_CHUNK_CHARS`` characters: a chunk stored before chunks were
bounded by it returns its first part, up to a sentence (else word) end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from grimoire_beholder.store import text_spans
from grimoire_beholder.store.hit_queries import ChunkHead, HitRow
from grimoire_beholder.store.records import ChunkSpan, filled
from grimoire_beholder.structure import MAX_CHUNK_CHARS

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store

PASSAGE_CHARS = 1150  # 0: return the chunk as it is
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*\s")


def _extend_left(text: str, start: int, room: int) -> int:
    """A start at most ``room`` characters before ``start``: the section's start if it is in
    reach (a section's opening sentence often says what it is about), else the earliest
    sentence start in reach, else a word start."""
    if room <= 0 or start <= 0:
        return start
    floor = max(0, start - room)
    if floor == 0:
        return 0
    first = _SENTENCE_END.search(text, floor, start)
    if first is not None:
        return first.end()
    space = text.find(" ", floor, start)
    return space + 1 if space != -1 else start


def _extend_right(text: str, end: int, room: int) -> int:
    """An end at most ``room`` characters after ``end``: the section's end if it is in
    reach, else the last sentence end in reach, else a word end."""
    if room <= 0 or end >= len(text):
        return end
    ceiling = min(len(text), end + room)
    if ceiling == len(text):
        return ceiling
    ends = [m.end() for m in _SENTENCE_END.finditer(text, end, ceiling)]
    if ends:
        return ends[-1]
    space = text.rfind(" ", end, ceiling)
    return space if space != -1 else end


def window(text: str, start: int, end: int, target: int) -> tuple[int, int]:
    """``[start, end)`` widened towards ``target`` characters, shared between both sides —
    except that when the section from its first character to the chunk's end fits in
    ``target``, the passage starts at the section's start (its opening sentence says what
    it is about: "reduction … should only be done up to `unknown`. The reasoning is …") and
    the room left goes after the chunk. Cut back to its first ``MAX_CHUNK_CHARS`` characters when
    it is longer than that. ``text`` begins at the section's start, or further than
    ``target`` characters before ``start``."""
    if end - start > MAX_CHUNK_CHARS:
        half = MAX_CHUNK_CHARS // 2
        return start, _extend_right(text, start + half, MAX_CHUNK_CHARS - half)
    room = target - (end - start)
    if room <= 0:
        return start, end
    left_room = min(room // 2, start)
    right_room = min(room - left_room, len(text) - end)
    left_room = min(room - right_room, start)
    if left_room < start <= room:  # the section's opening fits: it, and the rest after
        left_room, right_room = start, min(room - start, len(text) - end)
    new_end = _extend_right(text, end, right_room)
    new_start = _extend_left(text, start, left_room)
    return new_start, new_end


class Passage(NamedTuple):
    """What a hit returns for one chunk: the widened text (None: the chunk's own) and the
    pages or lines it covers."""

    text: str | None
    page_start: int | None = None
    page_end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


def _free(start: int, end: int, taken: Sequence[tuple[int, int]], low: int, high: int
          ) -> tuple[int, int] | None:
    """The stretch of ``[low, high)`` that no span of ``taken`` covers and that holds most
    of ``[start, end)`` (None: all of it is covered)."""
    best, best_overlap, at = None, 0, low
    for a, b in sorted([*taken, (high, high)]):
        if a > at:
            piece = (at, min(a, high))
            overlap = min(end, piece[1]) - max(start, piece[0])
            if overlap > best_overlap:
                best, best_overlap = piece, overlap
        at = max(at, b)
        if at >= high:
            break
    return best


def _passage(own: ChunkSpan, spans: list[ChunkSpan], target: int, low: int, text: str,
             taken: Sequence[tuple[int, int]] = ()) -> tuple[Passage, int, int] | None:
    """The chunk's passage and its character span in the section, from ``text``: the
    section's characters from ``low`` (what the window can reach, never the whole
    section: ``target`` characters on each side); ``spans`` hold at least the section's
    chunk spans within that text.

    ``taken`` are the spans better hits of the section return: None when the window would
    mostly repeat them, else a window kept off them (it widens into the text no better hit
    returns instead), so a result list never shows the same text twice."""
    start, end = window(text, own.char_start - low, own.char_end - low, target)
    start, end = start + low, end + low
    shared = sum(max(0, min(end, b) - max(start, a)) for a, b in taken)
    if shared * 2 > end - start:
        return None  # mostly text a better hit already returns
    if shared:
        free = _free(own.char_start, own.char_end, taken, low, low + len(text))
        if free is None:
            return None
        lo, hi = free
        start, end = window(text[lo - low:hi - low], max(own.char_start, lo) - lo,
                            min(own.char_end, hi) - lo, target)
        start, end = start + lo, end + lo
    if not text[start - low:end - low].strip():
        return None
    touched = [s for s in spans if s.char_start < end and s.char_end > start]
    pages = [p for s in touched for p in (s.page_start, s.page_end) if p is not None]
    lines = [n for s in touched for n in (s.line_start, s.line_end) if n is not None]
    return Passage(text[start - low:end - low].strip(), min(pages, default=None),
                   max(pages, default=None), min(lines, default=None),
                   max(lines, default=None)), start, end


def _section(span: ChunkSpan) -> text_spans.Section:
    return span.book_id, span.chapter_index, span.section_index


def select(conn: Store, ranked: Sequence[int], limit: int, target: int | None = None,
           spans: Mapping[int, ChunkSpan] | None = None,
           heads: dict[int, ChunkHead] | None = None) -> dict[int, Passage]:
    """The passages of the first ``limit`` chunks of ``ranked`` whose passage is not mostly
    text of a better one's, in rank order; none repeats a character a better one returns.

    A window mostly over better ones' text happens when chunks are much shorter than a
    passage (a small ``chunk_size``, or a section's short last chunk): that hit is dropped.
    A window partly over one (a neighbour of a better hit) is kept off it and widens into
    the text no better hit returns instead.
    ``spans`` are the chunks' spans when the caller has them (a chunk missing there was
    deleted meanwhile), else they are read. Reads go a batch at a time — as many chunks as
    passages are still wanted: the slices of text their windows can reach and the chunk
    spans within them, one read each — so most searches read once. ``heads``, when given,
    gets the chapter title, breadcrumb and context of each chosen chunk that read gave
    (``hit_queries.hit_rows`` then reads none).
    """
    size = PASSAGE_CHARS if target is None else target
    if size <= 0:
        return {chunk_id: Passage(None) for chunk_id in ranked[:limit]}
    known: Mapping[int, ChunkSpan] = {} if spans is None else spans
    chosen: dict[int, Passage] = {}
    taken: dict[text_spans.Section, list[tuple[int, int]]] = {}
    at = 0
    while at < len(ranked) and len(chosen) < limit:
        batch = ranked[at:at + limit - len(chosen)]
        at += len(batch)
        if spans is None:
            known = text_spans.chunk_spans(conn, batch)
        owns = [known[c] for c in batch if c in known]  # a missing chunk: deleted meanwhile
        if not owns:
            continue
        # what each window can reach: ``size`` characters on each side of its chunk
        reach = [(_section(own), max(0, own.char_start - size), own.char_end + size,
                  own.chunk_id) for own in owns]
        for own, (key, low, _, _), (text, spans_near, head) in zip(
                owns, reach, text_spans.passage_reads(conn, reach), strict=True):
            made = _passage(own, spans_near, size, low, text, taken.get(key, []))
            if made is None:
                continue  # mostly text a better hit already returns
            passage, start, end = made
            taken.setdefault(key, []).append((start, end))
            chosen[own.chunk_id] = passage
            if heads is not None and head is not None:
                heads[own.chunk_id] = head
    return chosen


def apply(rows: Mapping[int, HitRow], chosen: Mapping[int, Passage]) -> dict[int, HitRow]:
    """The hit rows of the chosen chunks, carrying their passages' text and location."""
    out = {}
    for chunk_id, passage in chosen.items():
        row = rows.get(chunk_id)
        if row is None:
            continue
        if passage.text is not None:
            row = filled(HitRow, {**vars(row), "text": passage.text,
                                  "page_start": passage.page_start or row.page_start,
                                  "page_end": passage.page_end or row.page_end,
                                  "line_start": passage.line_start or row.line_start,
                                  "line_end": passage.line_end or row.line_end})
        out[chunk_id] = row
    return out
