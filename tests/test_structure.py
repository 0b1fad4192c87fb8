"""Sectioning and chunking: the sizes, titles, boundaries and locations a reader relies on."""

from __future__ import annotations

import itertools
import re

import pytest

from grimoire_beholder.parse.document import Block, ParsedChapter, ParsedSection
from grimoire_beholder.structure.chunks import ChunkDraft, chunk_section
from grimoire_beholder.structure.sections import breadcrumb, shape_chapter
from grimoire_beholder.structure.tokens import approx_tokens, count_tokens

WORDS = [
    "river", "stone", "lantern", "harbor", "meadow", "signal", "copper", "winter", "orchard",
    "ledger", "candle", "beacon", "thunder", "velvet", "marble", "compass", "falcon", "garden",
]


def _sentence(n: int, length: int = 12) -> str:
    words = [WORDS[(n * 7 + i) % len(WORDS)] for i in range(length)]
    return " ".join(words).capitalize() + "."


def _paragraph(start: int, sentences: int) -> str:
    return " ".join(_sentence(start + i, 8 + (start + i) % 9) for i in range(sentences))


def _section(paragraphs: int = 30, sentences: int = 6, *, pages: bool = True) -> ParsedSection:
    blocks = []
    for i in range(paragraphs):
        text = _paragraph(i * sentences, sentences)
        if pages:
            blocks.append(Block(text=text, page=10 + i // 3, page_end=11 + i // 3 if i % 3 == 2
                                else None))
        else:
            blocks.append(Block(text=text, line_start=1 + 2 * i, line_end=1 + 2 * i))
    return ParsedSection(title="", blocks=blocks)


def _check_invariants(section: ParsedSection, chunks: list[ChunkDraft], size: int) -> None:
    text = section.text
    covered = bytearray(len(text))
    for chunk in chunks:
        assert chunk.text == text[chunk.char_start : chunk.char_end]
        assert chunk.text == chunk.text.strip() and chunk.text
        assert chunk.approx_tokens == approx_tokens(chunk.text)
        covered[chunk.char_start : chunk.char_end] = b"\x01" * len(chunk.text)
    missing = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert missing == []
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    assert all(c.approx_tokens <= size * 1.25 for c in chunks)


# ------------------------------------------------------------------------------- chunks


def test_chunks_are_exact_slices_near_target_with_overlap_and_full_coverage() -> None:
    section = _section()
    chunks = chunk_section(section, 120, 20)
    _check_invariants(section, chunks, 120)
    assert len(chunks) > 5
    assert all(c.approx_tokens >= 120 * 0.4 for c in chunks[:-1])
    for before, after in itertools.pairwise(chunks):
        assert after.char_start < before.char_end  # overlap
        assert after.char_start > before.char_start
        shared = section.text[after.char_start : before.char_end]
        assert 0 < approx_tokens(shared) <= 40


def test_chunks_end_on_sentences_and_start_on_words() -> None:
    section = _section()
    text = section.text
    for chunk in chunk_section(section, 120, 20):
        assert chunk.text.endswith("."), chunk.text[-30:]
        assert chunk.char_start == 0 or text[chunk.char_start - 1].isspace()


def test_overlap_prefers_a_sentence_start_when_one_is_close() -> None:
    text = " ".join(_sentence(i, 6) for i in range(200))  # short sentences: always one near
    section = ParsedSection(title="", blocks=[Block(text=text)])
    chunks = chunk_section(section, 100, 30)
    assert len(chunks) > 3
    assert all(re.match(r"[A-Z]", c.text) for c in chunks)


def test_short_section_is_one_chunk_and_empty_section_none() -> None:
    short = ParsedSection(title="", blocks=[Block(text="  One short paragraph.  ", page=3)])
    [chunk] = chunk_section(short, 600, 80)
    assert chunk.text == "One short paragraph."
    assert (chunk.page_start, chunk.page_end) == (3, 3)
    assert chunk_section(ParsedSection(title="x"), 600, 80) == []
    assert chunk_section(ParsedSection(title="", blocks=[Block(text="   ")]), 600, 80) == []


def test_no_runt_tail_chunk() -> None:
    # About 2.1 chunks of text: the small remainder must be folded into the last chunk.
    text = " ".join(_sentence(i, 10) for i in range(22))
    section = ParsedSection(title="", blocks=[Block(text=text)])
    chunks = chunk_section(section, 120, 0)
    _check_invariants(section, chunks, 120)
    assert all(c.approx_tokens >= 120 / 4 for c in chunks)


def test_page_spans_come_from_the_blocks_a_chunk_touches() -> None:
    section = _section(pages=True)
    text = section.text
    offsets, cursor = [], 0
    for block in section.blocks:
        offsets.append((cursor, cursor + len(block.text), block))
        cursor += len(block.text) + 2
    for chunk in chunk_section(section, 120, 20):
        touched = [b for s, e, b in offsets if s < chunk.char_end and e > chunk.char_start]
        assert chunk.page_start == min(b.page for b in touched)
        assert chunk.page_end == max(b.last_page for b in touched)
        assert chunk.line_start is None
    assert text


def test_line_spans_for_text_sources() -> None:
    section = _section(pages=False)
    chunks = chunk_section(section, 120, 20)
    assert chunks[0].line_start == 1 and chunks[0].page_start is None
    assert chunks[-1].line_end == section.blocks[-1].line_end
    for chunk in chunks:
        assert chunk.line_start is not None and chunk.line_end is not None
        assert chunk.line_start <= chunk.line_end


def test_text_without_spaces_is_hard_cut_but_covered() -> None:
    section = ParsedSection(title="", blocks=[Block(text="x" * 50_000)])
    chunks = chunk_section(section, 100, 10)
    assert len(chunks) > 1
    assert max(len(c.text) for c in chunks) <= 100 * 10
    _check_invariants(section, chunks, 100)


def test_cjk_text_respects_token_budget() -> None:
    text = "这是一个测试句子。" * 400
    section = ParsedSection(title="", blocks=[Block(text=text)])
    chunks = chunk_section(section, 100, 10)
    _check_invariants(section, chunks, 100)
    assert all(c.text.endswith("。") for c in chunks)


def test_count_tokens_matches_approx_tokens_for_large_text() -> None:
    text = ("alpha beta gamma " * 100_000) + "caf\u00e9 " * 1000
    assert count_tokens(text) == approx_tokens(text)


# ------------------------------------------------------------------------------ sections


def test_native_sections_are_kept_including_empty_ones() -> None:
    lead_in = ParsedSection(title="", blocks=[])
    a = ParsedSection(title="Setup", path=["Setup"], blocks=[Block(text="x")])
    b = ParsedSection(title="Windows", path=["Setup", "Windows"], blocks=[])
    chapter = ParsedChapter(title="Guide", sections=[lead_in, a, b])
    assert shape_chapter(chapter, 3000) == [a, b]
    assert breadcrumb("Guide", b) == "Guide › Setup › Windows"
    assert breadcrumb("Guide", ParsedSection(title="")) == "Guide"


def test_short_undivided_chapter_is_one_untitled_section() -> None:
    chapter = ParsedChapter(title="C", sections=[ParsedSection(title="", blocks=[
        Block(text="Hello world.", page=4), Block(text="Bye.", page=5)])])
    [section] = shape_chapter(chapter, 3000)
    assert (section.title, section.path, section.anchor_page) == ("", [], 4)
    assert section.text == "Hello world.\n\nBye."
    assert shape_chapter(ParsedChapter(title="Empty"), 3000) == []


@pytest.mark.parametrize("split", [300, 1000])
def test_long_chapter_is_split_on_paragraphs_with_numbered_titles(split: int) -> None:
    source = _section(paragraphs=60, sentences=6)
    total = sum(approx_tokens(b.text) for b in source.blocks)
    chapter = ParsedChapter(title="Long", sections=[source])
    sections = shape_chapter(chapter, split)
    assert len(sections) >= total // split
    assert [b for s in sections for b in s.blocks] == source.blocks  # nothing lost or moved
    for number, section in enumerate(sections, 1):
        first_words = " ".join(section.blocks[0].text.split()[:6])
        assert section.title == f"Section {number} — {first_words}…"
        assert section.path == [section.title]
        assert section.anchor_page == section.blocks[0].page
        size = sum(approx_tokens(b.text) for b in section.blocks)
        assert size <= split * 1.25 + max(approx_tokens(b.text) for b in source.blocks)
    sizes = [sum(approx_tokens(b.text) for b in s.blocks) for s in sections]
    assert all(size >= split * 0.25 for size in sizes)


def test_one_giant_paragraph_is_split_into_bounded_sections() -> None:
    text = " ".join(f"Sentence number {i} ends here." for i in range(4_000))
    chapter = ParsedChapter(title="Blob", sections=[
        ParsedSection(title="", blocks=[Block(text=text, line_start=1, line_end=1)])])
    sections = shape_chapter(chapter, 3000)
    assert len(sections) > 3
    assert all(count_tokens(s.text) <= 3000 * 1.3 for s in sections)
    assert sections[0].title.startswith("Section 1 — Sentence number 0")
    assert " ".join(s.text for s in sections).split() == text.split()  # nothing lost
    assert all(b.line_start == 1 for s in sections for b in s.blocks)



@pytest.mark.parametrize("sample", [
    "ภาษาไทยเขียนติดกันไม่เว้นวรรค",  # Thai: one "word" to a whitespace split
    "𠀋𠂤𠃵𠄌𠆢𠈓𠌫𠍱",  # CJK extension B, outside the Basic Multilingual Plane
    "吾輩は猫である",
], ids=["thai", "cjk-extension-b", "japanese"])
def test_scripts_without_spaces_are_one_token_per_character_everywhere(sample: str) -> None:
    """Chunk sizing, Ollama's window split and the keyword arm agree on these scripts."""
    from grimoire_beholder.models.ollama_inputs import split_windows
    from grimoire_beholder.search.keyword import build_query

    assert approx_tokens(sample) == count_tokens(sample) == len(sample)
    windows = split_windows(sample * 10, 12)
    assert len(windows) > 1 and "".join(windows) == sample * 10
    assert build_query(sample).trigram is not None and build_query(sample).word is None
