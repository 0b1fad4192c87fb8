"""Decide the sections of a chapter: native headings when the source has them, otherwise
synthetic sections for long undivided chapters.

Sections are what ``read_section`` returns and what a search hit's breadcrumb names, so a
200-page chapter with no sub-headings (common in PDFs and plain text) is cut into parts of
about ``section_split_tokens`` at paragraph boundaries. Each part is titled by its number and
first words (``Section 3 — The storm broke over…``) so an assistant can tell them apart.
"""

from __future__ import annotations

from grimoire_beholder.parse.document import Block, ParsedChapter, ParsedSection
from grimoire_beholder.structure.chunks import chunk_section
from grimoire_beholder.structure.tokens import count_tokens

BREADCRUMB_SEPARATOR = " › "
_TITLE_WORDS = 6
_SPEECH_MARKS = "\"'“”‘’«»„‚—–"
# A last part smaller than this share of the target is folded into the part before it.
_TAIL_SHARE = 0.25


def breadcrumb(chapter_title: str, section: ParsedSection) -> str:
    """``Chapter › Heading › Sub-heading`` for display and for embedding context."""
    parts = [chapter_title, *section.path]
    return BREADCRUMB_SEPARATOR.join(part for part in parts if part)


def _is_native(section: ParsedSection) -> bool:
    return bool(section.title or section.path)


def _first_words(blocks: list[Block]) -> str:
    """The part's first words, without the quotation marks or dash a line of dialogue opens
    with (``Section 2 — Not so many as you…``, not ``— “ ‘Not so many as you…``)."""
    for block in blocks:
        words = block.text[:400].split()
        while words and not words[0].strip(_SPEECH_MARKS):
            words.pop(0)
        if words:
            words[0] = words[0].lstrip(_SPEECH_MARKS)
            head = " ".join(words[:_TITLE_WORDS])
            return head + "…" if len(words) > _TITLE_WORDS or len(block.text) > 400 else head
    return ""


def _split_blocks(blocks: list[Block], counts: list[int], target: int) -> list[list[Block]]:
    """Group consecutive blocks into runs of about ``target`` tokens, never splitting one."""
    groups: list[list[Block]] = []
    current: list[Block] = []
    size = 0
    for block, tokens in zip(blocks, counts, strict=True):
        if current and size + tokens > target:
            groups.append(current)
            current, size = [], 0
        current.append(block)
        size += tokens
    if current:
        if groups and size < target * _TAIL_SHARE:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


def _split_giant_block(block: Block, target: int) -> list[Block]:
    """Cut one paragraph longer than a section (a 50 MB one-line file, a transcript) at
    sentence or word boundaries, so no section — and no LLM context prompt — is unbounded."""
    pieces = chunk_section(ParsedSection(title="", blocks=[block]), target, 0, most_chars=None)
    return [Block(text=p.text, page=p.page_start, page_end=p.page_end,
                  line_start=p.line_start, line_end=p.line_end) for p in pieces] or [block]


def shape_chapter(chapter: ParsedChapter, section_split_tokens: int) -> list[ParsedSection]:
    """The sections to store for ``chapter``.

    - Native sections (any section with a heading) are kept as given, including empty ones,
      so the outline matches the source; only an empty untitled lead-in is dropped.
    - An undivided chapter longer than ``section_split_tokens`` is split on block boundaries.
    - Otherwise the chapter is one untitled section (none at all when it has no text).
    """
    sections = chapter.sections
    if any(_is_native(section) for section in sections):
        return [s for s in sections if _is_native(s) or any(b.text.strip() for b in s.blocks)]
    blocks = [block for section in sections for block in section.blocks if block.text.strip()]
    if not blocks:
        return []
    anchor = next((s.anchor_page for s in sections if s.anchor_page is not None), None)
    if anchor is None:
        anchor = blocks[0].page
    hints = chapter.hints.union(*(s.hints for s in sections))
    target = max(1, section_split_tokens)
    counts = [count_tokens(block.text) for block in blocks]
    if any(count > target for count in counts):
        blocks = [piece for block, count in zip(blocks, counts, strict=True)
                  for piece in (_split_giant_block(block, target) if count > target
                                else [block])]
        counts = [count_tokens(block.text) for block in blocks]
    groups = (
        _split_blocks(blocks, counts, target)
        if sum(counts) > section_split_tokens
        else [blocks]
    )
    if len(groups) == 1:  # short, or one giant paragraph: nothing to tell apart
        return [ParsedSection(title="", path=[], blocks=blocks, anchor_page=anchor, hints=hints)]
    shaped: list[ParsedSection] = []
    for number, group in enumerate(groups, 1):
        title = f"Section {number} — {_first_words(group)}".rstrip(" —")
        shaped.append(
            ParsedSection(title=title, path=[title], blocks=group, anchor_page=group[0].page,
                          hints=hints)
        )
    return shaped
