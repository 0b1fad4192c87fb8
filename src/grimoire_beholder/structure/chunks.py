"""Split a section's text into overlapping, retrieval-sized chunks.

Every chunk is an exact slice ``section.text[char_start:char_end]`` so a hit can always be
located and highlighted in the stored section text. Chunks aim at ``chunk_size`` approximate
tokens and start about ``chunk_overlap`` tokens before the previous chunk ended, so a fact
that straddles a boundary is whole in at least one chunk.

Boundaries are chosen in order of preference: a paragraph break, a sentence end, a line
break, a word break, and (only for text without any whitespace, e.g. a base64 blob) a hard
cut. The work per chunk is bounded by the chunk's own size (bounded ``str.split``, ``rfind``), so a
50 MB single-paragraph text chunks in linear time and without per-word Python lists.

With a :class:`PieceLimit` (the embedding model's own count of word pieces and the most a
chunk may hold, see ``ingest.build.piece_limit``) no chunk holds more pieces than that: its
window is cut back word by word before a boundary is chosen, and the chosen chunk is
counted again, so the bound holds for any text, code and CJK included. Without one (a model
whose tokenizer is unknown, e.g. through Ollama) chunks are sized in approximate tokens only.

Whatever the sizes, no chunk holds more than :data:`MAX_CHUNK_CHARS` characters: a chunk is
what a search hit returns (``search.passages`` widens a shorter one, never past that), so a
chunk cut longer — long words or URLs, tables, code, no piece limit, a large ``chunk_size``
— is cut again inside that many characters; every other chunk is cut as it would be anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from grimoire_beholder.parse.document import ParsedSection
from grimoire_beholder.structure import MAX_CHUNK_CHARS as MAX_CHUNK_CHARS  # re-exported
from grimoire_beholder.structure.chunk_breaks import (
    MAX_CHARS_PER_TOKEN,
    best_break,
    overlap_start,
    skip_space,
    trim,
    window_end,
)
from grimoire_beholder.structure.piece_limit import (
    PieceLimit,
    fit_end,
    overlap_within_share,
    within,
)
from grimoire_beholder.structure.source_spans import LineMaps, span_of
from grimoire_beholder.structure.tokens import approx_tokens, count_tokens

_RUNT_SHARE = 0.25
_MERGE_LIMIT = 1.25


@dataclass
class ChunkDraft:
    """A chunk before it is stored: its text, where it sits in the section, and its source span."""

    text: str
    char_start: int
    char_end: int
    approx_tokens: int
    page_start: int | None = None
    page_end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


def _chunk_end(text: str, pos: int, chunk_size: int, paragraphs: bool,
               limit: PieceLimit | None, most_chars: int) -> int:
    """Where the chunk starting at ``pos`` ends: its window (``most_chars`` at most), cut
    back to the piece limit, then to the preferred boundary (``chunk_breaks.best_break``)."""
    end = window_end(text, pos, chunk_size, most_chars)
    if limit is not None:
        end = fit_end(text, pos, end, limit)
    at_tail = skip_space(text, end) >= len(text)
    end = len(text) if at_tail else best_break(text, pos, end, paragraphs)
    if limit is not None:
        end = within(text, pos, end, limit)
    return end


def _spans(text: str, chunk_size: int, chunk_overlap: int, paragraphs: bool,
           limit: PieceLimit | None, most_chars: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = skip_space(text, 0)
    while pos < len(text):
        end = _chunk_end(text, pos, chunk_size, paragraphs, limit,
                         chunk_size * MAX_CHARS_PER_TOKEN)
        first, last = trim(text, pos, end)
        if last - first > most_chars:  # cut again inside the bound (module docstring)
            end = _chunk_end(text, pos, chunk_size, paragraphs, limit, most_chars)
        spans.append(trim(text, pos, end))
        if end >= len(text):
            break
        following = skip_space(text, end)
        if following >= len(text):
            break
        nxt = overlap_start(text, pos, end, chunk_overlap)
        if limit is not None:
            nxt = overlap_within_share(text, pos, end, nxt, chunk_size, chunk_overlap)
        pos = nxt if pos < nxt < end else following
    return spans


def _merge_runt(text: str, spans: list[tuple[int, int]], chunk_size: int,
                limit: PieceLimit | None, most_chars: int) -> None:
    """Fold a tiny last chunk into its predecessor when the result stays near target size
    (and within the piece limit)."""
    if len(spans) < 2:
        return
    last_start, last_end = spans[-1]
    if count_tokens(text[last_start:last_end]) >= chunk_size * _RUNT_SHARE:
        return
    prev_start = spans[-2][0]
    if last_end - prev_start > min(chunk_size * MAX_CHARS_PER_TOKEN, most_chars):
        return  # hard-cut text (no spaces), or over the bound: keep the character cap
    if count_tokens(text[prev_start:last_end]) > chunk_size * _MERGE_LIMIT:
        return
    if limit is None or limit.count(text[prev_start:last_end]) <= limit.most:
        spans[-2:] = [(prev_start, last_end)]


def chunk_section(section: ParsedSection, chunk_size: int, chunk_overlap: int, *,
                  paragraphs: bool = True, limit: PieceLimit | None = None,
                  most_chars: int | None = MAX_CHUNK_CHARS) -> list[ChunkDraft]:
    """Chunks of ``section.text`` covering every non-space character, in order.

    ``paragraphs=False`` is window mode (see ``structure.modes``): the same overlapping
    windows, but cut at sentence ends rather than at paragraph or line breaks. ``limit``
    bounds every chunk in the embedding model's pieces as well, ``most_chars`` in characters
    (module docstring; None: only ``chunk_size`` bounds them, for pieces that are not
    chunks, such as the synthetic sections of ``structure.sections``).
    """
    text = section.text
    if not text.strip():
        return []
    chunk_size = max(1, chunk_size)
    chunk_overlap = max(0, min(chunk_overlap, chunk_size - 1))
    if limit is not None:
        limit = PieceLimit(limit.count, max(1, limit.most))
    chars = chunk_size * MAX_CHARS_PER_TOKEN
    chars = chars if most_chars is None else max(1, min(chars, most_chars))
    if (len(text) <= chunk_size * MAX_CHARS_PER_TOKEN and approx_tokens(text) <= chunk_size
            and len(text.strip()) <= chars
            and (limit is None or limit.count(text.strip()) <= limit.most)):
        spans = [trim(text, 0, len(text))]
    else:
        spans = _spans(text, chunk_size, chunk_overlap, paragraphs, limit, chars)
        _merge_runt(text, spans, chunk_size, limit, chars)
    offsets: list[int] = []
    cursor = 0
    for block in section.blocks:
        offsets.append(cursor)
        cursor += len(block.text) + 2
    drafts: list[ChunkDraft] = []
    lines = LineMaps(section.blocks)
    for start, end in spans:
        if start >= end:
            continue
        piece = text[start:end]
        page_start, page_end, line_start, line_end = span_of(
            section.blocks, offsets, start, end, lines
        )
        drafts.append(
            ChunkDraft(piece, start, end, count_tokens(piece),
                       page_start, page_end, line_start, line_end)
        )
    return drafts
