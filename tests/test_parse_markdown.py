"""Markdown parsing: what a user sees in the outline, titles and line references."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.markdown import parse_markdown, split_front_matter

FIXTURE = """\
---
title: Field Guide
author: "Ada Lovelace"
---
Intro para before any heading.

# Getting Started

Lead-in text line one.
continues here.

## Setup

- item one
- item two
  - nested

### Windows

```python
# not a heading
print("hi")
```

| a | b |
|---|---|
| 1 | 2 |

## Empty heading

# Reference

> quoted
> text
"""


def _write(tmp_path: Path, text: str, name: str = "guide.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def guide(tmp_path: Path):
    return parse_markdown(_write(tmp_path, FIXTURE))


def test_front_matter_gives_title_and_author_and_is_not_text(guide) -> None:
    assert guide.title == "Field Guide"
    assert guide.author == "Ada Lovelace"
    assert guide.source_type == "markdown"
    all_text = " ".join(b.text for c in guide.chapters for s in c.sections for b in s.blocks)
    assert "title:" not in all_text
    assert guide.line_count == 34


def test_chapters_and_flattened_sections_with_breadcrumbs(guide) -> None:
    assert [c.title for c in guide.chapters] == ["Field Guide", "Getting Started", "Reference"]
    started = guide.chapters[1]
    assert [(s.title, s.path) for s in started.sections] == [
        ("", []),
        ("Setup", ["Setup"]),
        ("Windows", ["Setup", "Windows"]),
        ("Empty heading", ["Empty heading"]),
    ]
    assert started.sections[-1].blocks == []  # kept so the outline is complete


def test_heading_inside_code_fence_is_code(guide) -> None:
    windows = guide.chapters[1].sections[2]
    assert windows.blocks[0].text == '# not a heading\nprint("hi")'
    assert all(s.title != "not a heading" for c in guide.chapters for s in c.sections)


def test_block_line_ranges_are_exact_source_lines(guide) -> None:
    ranges = {
        b.text: (b.line_start, b.line_end)
        for c in guide.chapters
        for s in c.sections
        for b in s.blocks
    }
    assert ranges == {
        "Intro para before any heading.": (5, 5),
        "Lead-in text line one.\ncontinues here.": (9, 10),
        "- item one": (14, 14),
        "- item two\n  - nested": (15, 16),
        '# not a heading\nprint("hi")': (21, 22),  # the code's own lines, not its fences
        "a | b\n1 | 2": (25, 27),
        "quoted\ntext": (33, 34),
    }
    lines = FIXTURE.split("\n")
    assert lines[19] == "```python" and lines[26] == "| 1 | 2 |"


def test_inline_markup_is_reduced_to_readable_text(tmp_path: Path) -> None:
    book = parse_markdown(
        _write(tmp_path, "# T\n\nSee **bold** and [the docs](https://x.y) and `code`.\n")
    )
    assert book.chapters[0].sections[0].blocks[0].text == "See bold and the docs and code."


def test_title_is_single_h1_when_no_front_matter(tmp_path: Path) -> None:
    book = parse_markdown(_write(tmp_path, "Badges here.\n\n# My Project\n\nBody.\n", "readme.md"))
    assert book.title == "My Project"
    assert book.author is None
    # Text above the heading is kept, in a chapter not named like the real one.
    assert [c.title for c in book.chapters] == ["readme", "My Project"]


def test_title_is_file_stem_with_several_h1(tmp_path: Path) -> None:
    book = parse_markdown(_write(tmp_path, "# One\n\na\n\n# Two\n\nb\n", "notes.md"))
    assert book.title == "notes"
    assert [c.title for c in book.chapters] == ["One", "Two"]


def test_no_h1_makes_one_chapter_of_h2_sections(tmp_path: Path) -> None:
    book = parse_markdown(_write(tmp_path, "## A\n\nx\n\n## B\n\n### C\n\ny\n", "plain.md"))
    assert book.title == "plain"
    assert len(book.chapters) == 1
    chapter = book.chapters[0]
    assert chapter.title == "plain"
    assert [s.path for s in chapter.sections] == [["A"], ["B"], ["B", "C"]]


def test_skipped_heading_levels_and_setext(tmp_path: Path) -> None:
    text = "Top\n===\n\n#### Deep\n\nx\n\n## Mid\n\n###### Deeper\n\ny\n"
    chapter = parse_markdown(_write(tmp_path, text)).chapters[0]
    assert chapter.title == "Top"
    assert [s.path for s in chapter.sections] == [["Deep"], ["Mid"], ["Mid", "Deeper"]]


def test_front_matter_list_author_and_unclosed_block(tmp_path: Path) -> None:
    meta, body, removed = split_front_matter("---\ntitle: 'X'\nauthors:\n  - A\n  - B\n---\nhi")
    assert meta["title"] == "X" and meta["authors"] == "A, B"
    assert body == "hi" and removed == 6
    meta, body, removed = split_front_matter("---\nnot closed\n")
    assert meta == {} and removed == 0


def test_pathological_nesting_neither_crashes_nor_hangs(tmp_path: Path) -> None:
    text = (
        ">" * 1000 + " deep quote\n\n"
        + "####### not a heading\n" * 1000 + "\n"
        + "".join("  " * i + "- x\n" for i in range(1000)) + "\n"
        + "[" * 5000 + "\n\n# Real\n\ntext\n"
    )
    start = time.process_time()  # CPU time: the work done, not the machine's load
    book = parse_markdown(_write(tmp_path, text))
    assert time.process_time() - start < 10
    assert [c.title for c in book.chapters][-1] == "Real"
    everything = "\n".join(s.text for c in book.chapters for s in c.sections)
    assert "text" in everything and everything.count("- x") > 900  # nothing silently lost
    assert all(s.title != "not a heading" for c in book.chapters for s in c.sections)


def test_empty_markdown_is_rejected(tmp_path: Path) -> None:
    from grimoire_beholder.errors import InputFileError

    with pytest.raises(InputFileError, match="no text"):
        parse_markdown(_write(tmp_path, "---\ntitle: x\n---\n\n   \n"))


def test_dispatcher_picks_markdown(tmp_path: Path) -> None:
    book = parse_file(_write(tmp_path, "# Hi\n\nthere\n", "x.markdown"))
    assert book.source_type == "markdown"


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "squad-dev" / "corpus"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared SQuAD corpus not present")
def test_squad_corpus_files_parse_to_titled_paragraph_sections() -> None:
    files = sorted(CORPUS.glob("*.md"))
    assert len(files) >= 40
    for path in files:
        book = parse_markdown(path)
        first_line = path.read_text(encoding="utf-8").split("\n", 1)[0]
        assert first_line.startswith("# ")
        assert book.title == first_line[2:].strip()
        assert len(book.chapters) == 1, path.name
        sections = book.chapters[0].sections
        assert sections, path.name
        for number, section in enumerate(sections, 1):
            assert section.title == f"Paragraph {number}", path.name
            assert section.path == [section.title]
            assert section.text.strip(), path.name
            assert all(b.line_start is not None and b.line_end is not None for b in section.blocks)


def test_front_matter_authors_as_a_yaml_list_or_quarto_entries(tmp_path: Path) -> None:
    """`author: [A, B]` (Pandoc, Jekyll) was the author "[A, B]", and Quarto's
    `- name: A` entries the author "name: A" with every later author lost."""
    flow = "---\ntitle: Tides\nauthor: [Alice Doe, \"Roe, R.\"]\n---\n# Tides\n\nText.\n"
    assert parse_markdown(_write(tmp_path, flow)).author == "Alice Doe, Roe, R."
    quarto = ("---\ntitle: Tides\nauthor:\n  - name: Alice Doe\n    affiliation: Harbour\n"
              "  - name: \"Bob Roe\"\n    orcid: 0000-0001\ndate: 2024-01-01\n---\n"
              "# Tides\n\nText.\n")
    book = parse_markdown(_write(tmp_path, quarto))
    assert book.author == "Alice Doe, Bob Roe" and book.title == "Tides"
    bracketed = "---\ntitle: '[draft] Tides'\n---\nText.\n"
    assert parse_markdown(_write(tmp_path, bracketed)).title == "[draft] Tides"


@pytest.mark.parametrize("value", [
    '["A \\"B\\" C", D]',  # was split at the escaped quote: 'A \\', 'B\\" C"', 'D'
    """["Roe, R. \\"Bob\\"", 'O''Brien, P.']""",
    '["back\\\\slash", "tab\\there", "caf\\u00e9", "\\x41da"]',
    '"Ada \\"The Countess\\" Lovelace"',
    "'Pat O''Neil'",
    '"M\\u00fcller \\U0001F4DA"',
])
def test_front_matter_quoted_names_read_as_yaml_reads_them(tmp_path: Path,
                                                          value: str) -> None:
    """Backslash escapes in a double-quoted name and a doubled quote in a single-quoted
    one: the author is what a YAML parser makes of the value (a list joined with ", ", on
    one line as every name)."""
    yaml = pytest.importorskip("yaml")
    expected = yaml.safe_load(f"author: {value}")["author"]
    expected = ", ".join(expected) if isinstance(expected, list) else expected
    page = f"---\ntitle: Tides\nauthor: {value}\n---\n# Tides\n\nText.\n"
    assert parse_file(_write(tmp_path, page)).author == " ".join(expected.split())


@pytest.mark.parametrize(("front", "title", "author"), [
    ("title: Tides # draft\nauthor: Jane Doe # primary\n", "Tides", "Jane Doe"),
    ("title: 'Tides' # draft\nauthor: [\"A #1\", B] # both\n", "Tides", "A #1, B"),
    ("title: C# in Depth\nauthor: \"O'Neil # Pat\"\n", "C# in Depth", "O'Neil # Pat"),
    ("title: >-\n  Tides of the\n  Northern Sea\nauthor: |\n  Jane Doe\n",
     "Tides of the Northern Sea", "Jane Doe"),
])
def test_front_matter_comments_and_block_scalars_read_as_yaml_reads_them(
        tmp_path: Path, front: str, title: str, author: str) -> None:
    """A comment after a value was kept in the book's name ('Tides # draft'), and a
    folded or literal block (``title: >-`` over indented lines, as Jekyll writes a long
    title) named the book '>-'; each is what yaml.safe_load makes of it, on one line."""
    yaml = pytest.importorskip("yaml")
    expected = yaml.safe_load(front)
    assert " ".join(str(expected["title"]).split()) == title
    page = f"---\n{front}---\n# Heading\n\nText.\n"
    book = parse_file(_write(tmp_path, page))
    assert (book.title, book.author) == (title, author)
