"""Plain-text parsing and decoding, plus the file-type dispatcher's error messages."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse import SUPPORTED_EXTENSIONS, parse_file
from grimoire_beholder.parse.plain_text import parse_text, read_text_file
from grimoire_beholder.structure.chunks import chunk_section
from grimoire_beholder.structure.sections import shape_chapter

SAMPLE = "Caf\u00e9 na\u00efve \u201cquoted\u201d\n\nSecond paragraph.\n"


def _write(tmp_path: Path, data: bytes, name: str = "book.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "data",
    [
        SAMPLE.encode("utf-8"),
        b"\xef\xbb\xbf" + SAMPLE.encode("utf-8"),
        SAMPLE.encode("utf-16"),  # with BOM
        SAMPLE.encode("utf-16-le"),  # no BOM
        SAMPLE.encode("utf-16-be"),  # no BOM
        SAMPLE.encode("cp1252"),
    ],
    ids=["utf8", "utf8-bom", "utf16-bom", "utf16le", "utf16be", "cp1252"],
)
def test_encodings_decode_to_the_same_text(tmp_path: Path, data: bytes) -> None:
    assert read_text_file(_write(tmp_path, data)) == SAMPLE


def test_latin1_bytes_undefined_in_cp1252_still_decode(tmp_path: Path) -> None:
    assert read_text_file(_write(tmp_path, b"caf\xe9 \x81 ok\n")) == "caf\u00e9 \x81 ok\n"


def test_paragraphs_become_blocks_with_line_ranges(tmp_path: Path) -> None:
    path = _write(tmp_path, b"First line\r\nsecond line\r\n\r\n\r\nThird para\r\n", "My Notes.txt")
    book = parse_text(path)
    assert book.title == "My Notes" and book.source_type == "text"
    assert book.line_count == 5
    [chapter] = book.chapters
    assert chapter.title == "My Notes"
    [section] = chapter.sections
    assert section.title == "" and section.path == []
    assert [(b.text, b.line_start, b.line_end) for b in section.blocks] == [
        ("First line\nsecond line", 1, 2),
        ("Third para", 5, 5),
    ]


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 20, b"\x01\x02\x03\x04abc\x05\x06" * 200, b"PK\x03\x04" + b"\x00" * 99],
    ids=["all-bytes", "control-chars", "zip-header"],
)
def test_binary_junk_is_rejected(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(InputFileError, match="does not look like text") as info:
        parse_text(_write(tmp_path, data))
    assert "book.txt" in str(info.value) and "\n" not in str(info.value)


def test_junk_with_markdown_extension_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="does not look like text"):
        parse_file(_write(tmp_path, bytes(range(256)) * 4, "fake.md"))


def test_empty_and_blank_files_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="empty"):
        parse_text(_write(tmp_path, b""))
    with pytest.raises(InputFileError, match="empty"):
        parse_file(_write(tmp_path, b"", "e.md"))
    with pytest.raises(InputFileError, match="no text"):
        parse_text(_write(tmp_path, b"  \n\n \t\n"))


def test_dispatcher_errors_name_the_file_and_reason(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="not found"):
        parse_file(tmp_path / "missing.txt")
    with pytest.raises(InputFileError, match="directory"):
        parse_file(tmp_path)
    with pytest.raises(InputFileError) as info:
        parse_file(_write(tmp_path, b"hello", "notes.odt"))
    message = str(info.value)
    assert "notes.odt" in message and "'.odt'" in message
    for ext in (".pdf", ".epub", ".md", ".markdown", ".mdx", ".txt", ".html", ".docx"):
        assert ext in message and ext in SUPPORTED_EXTENSIONS


def test_dispatcher_accepts_uppercase_extension(tmp_path: Path) -> None:
    book = parse_file(_write(tmp_path, b"hello there\n", "README.TXT"))
    assert book.source_type == "text"
    assert book.chapters[0].sections[0].blocks[0].text == "hello there"


@pytest.mark.slow  # a 50 MB file
@pytest.mark.timeout(60)
def test_single_50mb_line_parses_and_chunks_in_bounded_time(tmp_path: Path) -> None:
    sentence = b"The quick brown fox jumps over the lazy dog near the river bank. "
    data = sentence * (50_000_000 // len(sentence))
    path = _write(tmp_path, data)
    del data
    start = time.process_time()  # CPU time: the work done, not the machine's load
    book = parse_text(path)
    [chapter] = book.chapters
    sections = shape_chapter(chapter, 3000)
    chunks = [c for s in sections for c in chunk_section(s, 600, 80)]
    elapsed = time.process_time() - start
    assert elapsed < 20, f"took {elapsed:.1f} CPU-seconds"
    assert book.line_count == 1
    assert len(sections) > 1000  # bounded sections, so no model prompt holds the whole file
    assert len(chunks) > 10_000
    assert max(c.approx_tokens for c in chunks) <= 600
    assert all(c.line_start == 1 and c.line_end == 1 for c in chunks[:100])
    last = sections[-1].text
    assert chunks[-1].char_end == len(last.rstrip())
    assert all(c.text.endswith(".") for c in chunks[:-1])  # cut at sentence ends
