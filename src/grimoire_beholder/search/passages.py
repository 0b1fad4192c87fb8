"""From a matching chunk to the passage returned: the chunk, widened to about
:data:`PASSAGE_CHARS` characters of its section.

Why: chunks are cut to what the embedding model reads (256 word pieces, ~850 characters),
but an answer often starts a sentence before the chunk or ends a sentence after it, and a
reader (or an assistant) needs a little surrounding text to trust it. The widening is
shared between both sides, ends on sentence (else word) boundaries, never leaves the
section, and the cited pages or lines grow to cover the text actually returned. The text
stays an exact slice of the section, so it can be quoted and located, and never holds more
than ``structure.chunks.MAX_CHUNK_CHARS`` characters: a chunk stored before chunks were
bounded by it returns its first part, up to a sentence (else word) end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from grimoire_beholder.store import text_spans
from grimoire_beholder.store.hit_queries import HitRow
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.store.text_spans import ChunkSpan
from grimoire_beholder.structure.chunks import MAX_CHUNK_CHARS

PASSAGE_CHARS = 1150  # 0: return the chunk as it is
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*\s")


def _extend_left(text: str, start: int, room: int) -> int:
    """A start at most ``room`` characters before ``start``: a sentence start if any."""
    if room <= 0 or start <= 0:
        return start
    floor = max(0, start - room)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, floor, start)]
    if ends:
        return ends[0]
    if floor == 0:
        return 0
    space = text.find(" ", floor, start)
    return space + 1 if space != -1 else start


def _extend_right(text: str, end: int, room: int) -> int:
    """An end at most ``room`` characters after ``end``: a sentence end if any."""
    if room <= 0 or end >= len(text):
        return end
    ceiling = min(len(text), end + room)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, end, ceiling)]
    if ends:
        return ends[-1]
    if ceiling == len(text):
        return ceiling
    space = text.rfind(" ", end, ceiling)
    return space if space != -1 else end


def window(text: str, start: int, end: int, target: int) -> tuple[int, int]:
    """``[start, end)`` widened towards ``target`` characters, shared between both sides;
    cut back to its first ``MAX_CHUNK_CHARS`` characters when it is longer than that."""
    if end - start > MAX_CHUNK_CHARS:
        half = MAX_CHUNK_CHARS // 2
        return start, _extend_right(text, start + half, MAX_CHUNK_CHARS - half)
    room = target - (end - start)
    if room <= 0:
        return start, end
    left_room = min(room // 2, start)
    right_room = min(room - left_room, len(text) - end)
    left_room = min(room - right_room, start)
    new_end = _extend_right(text, end, right_room)
    new_start = _extend_left(text, start, left_room)
    return new_start, new_end


@dataclass(frozen=True)
class Passage:
    """What a hit returns for one chunk: the widened text (None: the chunk's own) and the
    pages or lines it covers."""

    text: str | None
    page_start: int | None = None
    page_end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


def _passage(conn: Store, own: ChunkSpan, spans: list[ChunkSpan],
             target: int) -> tuple[Passage, int, int]:
    """The chunk's passage and its character span in the section.

    Only the part of the section the window can reach is read (a slice of ``target``
    characters on each side), never the whole section.
    """
    key = (own.book_id, own.chapter_index, own.section_index)
    low = max(0, own.char_start - target)
    text = text_spans.section_slice(conn, *key, low, own.char_end + target)
    start, end = window(text, own.char_start - low, own.char_end - low, target)
    start, end = start + low, end + low
    touched = [s for s in spans if s.char_start < end and s.char_end > start]
    pages = [p for s in touched for p in (s.page_start, s.page_end) if p is not None]
    lines = [n for s in touched for n in (s.line_start, s.line_end) if n is not None]
    return Passage(text[start - low:end - low].strip(), min(pages, default=None),
                   max(pages, default=None), min(lines, default=None),
                   max(lines, default=None)), start, end


def select(conn: Store, ranked: Sequence[int], limit: int,
           target: int | None = None) -> dict[int, Passage]:
    """The passages of the first ``limit`` chunks of ``ranked`` whose passage is not mostly
    text of a better one's, in rank order.

    That happens when chunks are much shorter than a passage (a small ``chunk_size``, or a
    section's short last chunk): the lower-ranked hit would mostly repeat what is returned.
    """
    size = PASSAGE_CHARS if target is None else target
    if size <= 0:
        return {chunk_id: Passage(None) for chunk_id in ranked[:limit]}
    spans: dict[int, ChunkSpan] = {}
    read = 0  # spans are read a batch at a time: most searches stop within the first
    sections: dict[tuple[int, int, int], list[ChunkSpan]] = {}
    chosen: dict[int, Passage] = {}
    taken: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for at, chunk_id in enumerate(ranked):
        if len(chosen) >= limit:
            break
        if at == read:
            read = min(len(ranked), read + 2 * limit)
            spans.update(text_spans.chunk_spans(conn, ranked[at:read]))
        own = spans.get(chunk_id)
        if own is None:
            continue  # deleted meanwhile
        key = (own.book_id, own.chapter_index, own.section_index)
        if key not in sections:
            sections[key] = text_spans.section_spans(conn, *key)
        passage, start, end = _passage(conn, own, sections[key], size)
        shared = sum(max(0, min(end, b) - max(start, a)) for a, b in taken.get(key, []))
        if shared * 2 > end - start:
            continue  # mostly text a better hit already returns
        taken.setdefault(key, []).append((start, end))
        chosen[chunk_id] = passage
    return chosen


def apply(rows: Mapping[int, HitRow], chosen: Mapping[int, Passage]) -> dict[int, HitRow]:
    """The hit rows of the chosen chunks, carrying their passages' text and location."""
    out = {}
    for chunk_id, passage in chosen.items():
        row = rows.get(chunk_id)
        if row is None:
            continue
        if passage.text is not None:
            row = replace(row, text=passage.text,
                          page_start=passage.page_start or row.page_start,
                          page_end=passage.page_end or row.page_end,
                          line_start=passage.line_start or row.line_start,
                          line_end=passage.line_end or row.line_end)
        out[chunk_id] = row
    return out
