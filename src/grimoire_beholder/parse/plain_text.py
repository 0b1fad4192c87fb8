"""Plain-text parsing, and the text decoding shared with the Markdown parser.

A ``.txt`` file has no structure we can trust, so the whole file is one chapter with one
section; paragraphs (runs of lines separated by blank lines) are the blocks, each with its
1-based line range so a search hit can point back into the file.

Decoding has to cope with what people actually have on disk: UTF-8 (with or without a BOM),
UTF-16 from Windows tools (with or without a BOM), and legacy Windows-1252 / Latin-1 text.
Binary files that merely carry a ``.txt``/``.md`` extension are refused with a clear message
instead of being indexed as garbage.
"""

from __future__ import annotations

import re
from pathlib import Path

from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.parse.document import Block, ParsedBook, ParsedChapter, ParsedSection
from grimoire_beholder.parse.source import read_source

# How much of the file the encoding and binary heuristics look at. Large enough to be
# representative, small enough that a 50 MB file is judged in milliseconds.
_SAMPLE_BYTES = 1 << 16
_SAMPLE_CHARS = 1 << 20
# Control characters that never appear in real text (tab, newline, CR and form feed do).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_MAX_CONTROL_SHARE = 0.10
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _not_text(path: Path) -> InputFileError:
    return InputFileError(f"{path}: does not look like text (binary data or control characters)")


def _utf16_without_bom(data: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' when NULs sit in alternating positions, else None.

    BOM-less UTF-16 of mostly Latin text has a NUL in every other byte: odd positions for
    little-endian, even positions for big-endian. Binary junk has NULs scattered everywhere.
    """
    sample = data[:_SAMPLE_BYTES]
    half = len(sample) // 2
    if half == 0:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    if odd >= 0.3 * half and even <= 0.02 * half:
        return "utf-16-le"
    if even >= 0.3 * half and odd <= 0.02 * half:
        return "utf-16-be"
    return None


def _decode(data: bytes, path: Path) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif b"\x00" in data:
        guessed = _utf16_without_bom(data)
        if guessed is None:
            raise _not_text(path)
        encoding = guessed
    else:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            # Not UTF-8: legacy single-byte text. cp1252 is a superset of Latin-1's printable
            # range; the five bytes it leaves undefined fall back to Latin-1.
            try:
                return data.decode("cp1252")
            except UnicodeDecodeError:
                return data.decode("latin-1")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _not_text(path) from exc


def read_text_file(path: Path) -> str:
    """The file's text, decoded, with line endings normalised to ``\\n``.

    Normalising CR/CRLF here keeps line numbers identical for every consumer (our own
    paragraph splitter and markdown-it, which counts lines the same way).
    Raises InputFileError for unreadable, empty, or binary files.
    """
    head = read_source(path, limit=_SAMPLE_BYTES)
    if len(head) == _SAMPLE_BYTES and not head.startswith(_BOMS) and b"\x00" in head \
            and _utf16_without_bom(head) is None:
        raise _not_text(path)  # judged by its head: a sparse gigabyte is not read whole
    del head
    data = read_source(path)
    text = _decode(data, path)
    del data
    sample = text[:_SAMPLE_CHARS]
    if sample and len(_CONTROL.findall(sample)) > _MAX_CONTROL_SHARE * len(sample):
        raise _not_text(path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def line_count(text: str) -> int:
    """Number of lines as an editor shows them (a final newline does not start a new line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def paragraph_blocks(lines: list[str], first_line: int = 1) -> list[Block]:
    """Split lines into paragraph blocks at blank lines, recording 1-based line ranges.

    Lines inside a paragraph keep their line breaks (poetry, addresses and code read wrong
    when joined); only trailing whitespace is dropped.
    """
    blocks: list[Block] = []
    start: int | None = None
    for index, line in enumerate(lines):
        if line.strip():
            if start is None:
                start = index
        elif start is not None:
            blocks.append(_block(lines, start, index, first_line))
            start = None
    if start is not None:
        blocks.append(_block(lines, start, len(lines), first_line))
    return blocks


def _block(lines: list[str], start: int, stop: int, first_line: int) -> Block:
    body = lines[start] if stop - start == 1 else "\n".join(lines[start:stop])
    return Block(
        text=body.strip(),
        line_start=first_line + start,
        line_end=first_line + stop - 1,
    )


def parse_text(path: Path) -> ParsedBook:
    """Parse a plain-text file into one chapter with one section of paragraph blocks."""
    path = Path(path)
    text = read_text_file(path)
    blocks = paragraph_blocks(text.split("\n"))
    if not blocks:
        raise NoTextError(f"{path}: contains no text (only whitespace)")
    title = path.stem
    chapter = ParsedChapter(title=title, sections=[ParsedSection(title="", blocks=blocks)])
    return ParsedBook(
        title=title,
        author=None,
        source_type="text",
        source_path=str(path),
        chapters=[chapter],
        line_count=line_count(text),
    )
