"""chunk_mode: heading-structured files chunk per section, headerless prose in windows."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from grimoire_beholder.config import Config, config_from_mapping
from grimoire_beholder.errors import ConfigError
from grimoire_beholder.ingest.build import build_book, file_info
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.document import Block, ParsedSection
from grimoire_beholder.store.records import NewBook
from grimoire_beholder.structure.chunks import chunk_section
from grimoire_beholder.structure.modes import chunk_mode_for, is_headerless
from helpers import fake_config

SENTENCES = [f"Sentence {i} tells of the {w} by the river." for i, w in
             enumerate(["mill", "ferry", "bridge", "weir", "lock", "quay"] * 40)]


def _prose(lines_per_paragraph: int = 3) -> str:
    """A transcript-like text: many short paragraphs of one sentence per line."""
    paragraphs = ["\n".join(SENTENCES[i:i + lines_per_paragraph])
                  for i in range(0, len(SENTENCES), lines_per_paragraph)]
    return "\n\n".join(paragraphs) + "\n"


def _build(path: Path, config: Config) -> NewBook:
    return build_book(parse_file(path), slug="x", name="x", info=file_info(path), config=config)


def _chunks(book: NewBook) -> list[str]:
    return [c.text for ch in book.chapters for s in ch.sections for c in s.chunks]


def test_auto_picks_windows_only_for_headerless_prose(tmp_path: Path) -> None:
    text = tmp_path / "transcript.txt"
    text.write_text(_prose())
    bare = tmp_path / "manuscript.md"
    bare.write_text(_prose())
    titled = tmp_path / "titled.md"
    titled.write_text("# My novel\n\n" + _prose())
    headed = tmp_path / "guide.md"
    headed.write_text("# Guide\n\n## Part one\n\n" + _prose() + "\n## Part two\n\nMore.\n")
    for path, expected in ((text, "window"), (bare, "window"), (titled, "window"),
                           (headed, "header")):
        parsed = parse_file(path)
        assert chunk_mode_for(parsed, "auto") == expected, path.name
        assert is_headerless(parsed) == (expected == "window")
        assert chunk_mode_for(parsed, "header") == "header"
        assert chunk_mode_for(parsed, "window") == "window"


def test_window_mode_cuts_even_overlapping_windows_at_sentences(tmp_path: Path) -> None:
    path = tmp_path / "transcript.txt"
    path.write_text(_prose())
    config = fake_config(tmp_path, chunk_size=600, chunk_overlap=80, window_size=60,
                         window_overlap=12, section_split_tokens=100_000)
    windows = _chunks(_build(path, config))
    assert len(windows) > 10
    for text in windows:
        assert text.endswith(".")  # cut at a sentence end, not mid-sentence
        assert len(text.split()) <= 60 * 0.75 + 1
    for first, second in itertools.pairwise(windows):
        assert second.split(".")[0] in first  # neighbours overlap
    headers = _chunks(_build(path, config.with_overrides(chunk_mode="header")))
    assert len(headers) < len(windows)  # header mode used chunk_size=600


def test_header_mode_prefers_paragraph_breaks_window_mode_does_not() -> None:
    paragraphs = [" ".join(SENTENCES[i:i + 2]) for i in range(0, 60, 2)]
    blocks = [Block(text=p, line_start=i * 2 + 1, line_end=i * 2 + 1)
              for i, p in enumerate(paragraphs)]
    section = ParsedSection(title="", blocks=blocks)
    header = chunk_section(section, 50, 8)
    window = chunk_section(section, 50, 8, paragraphs=False)
    text = section.text
    assert all(text[d.char_end:d.char_end + 2] in ("\n\n", "") for d in header)
    assert any(text[d.char_end:d.char_end + 2] == " S" for d in window)
    for d in header + window:  # every chunk is an exact slice with its line span
        assert text[d.char_start:d.char_end] == d.text and d.line_start is not None


def test_heading_structured_file_is_unchanged_by_auto(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\n## Part one\n\n" + _prose() + "\n## Part two\n\nMore.\n")
    config = fake_config(tmp_path)
    assert _chunks(_build(path, config)) == _chunks(
        _build(path, config.with_overrides(chunk_mode="header")))


def test_window_mode_forced_on_a_headed_file_keeps_sections(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\n## Part one\n\n" + _prose() + "\n## Part two\n\nMore.\n")
    config = fake_config(tmp_path, chunk_mode="window", window_size=40, window_overlap=5)
    book = _build(path, config)
    crumbs = [s.breadcrumb for ch in book.chapters for s in ch.sections]
    assert crumbs == ["Guide › Part one", "Guide › Part two"]
    assert len(book.chapters[0].sections[0].chunks) > 5


def test_chunk_mode_config_is_validated() -> None:
    assert config_from_mapping({"chunk_mode": "window"}).chunk_mode == "window"
    with pytest.raises(ConfigError, match="chunk_mode"):
        config_from_mapping({"chunk_mode": "sentences"})
    with pytest.raises(ConfigError, match="window_overlap"):
        config_from_mapping({"window_size": 50, "window_overlap": 50})
    assert (Config().chunk_mode, Config().window_size, Config().window_overlap) == (
        "auto", 256, 40)
