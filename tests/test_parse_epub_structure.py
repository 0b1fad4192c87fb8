"""EPUB parsing, the structure: chapters and sections from the EPUB 3 nav or the EPUB 2 NCX
with their anchors, spine documents outside the TOC, blocks per paragraph element, synthetic
pages, and the title and author.

EPUBs are generated with ebooklib in ``tmp_path`` (some then edited by rewriting the zip).
"""

from __future__ import annotations

import itertools
import zipfile
from pathlib import Path

from grimoire_beholder.parse.epub import parse_epub
from helpers import make_epub, rewrite
from parse_helpers import LOREM, all_blocks, where


def test_epub3_nav_gives_chapters_sections_and_metadata(tmp_path: Path) -> None:
    body = (
        "<h1>Potions</h1><p>Before any recipe: wash the cauldron.</p>"
        '<h2 id="s-brew">Brewing</h2><p>Stir widdershins thrice.</p>'
        '<h3 id="s-cool">Cooling</h3><p>Let it rest under moonlight.</p>'
        '<h2 id="s-bottle">Bottling</h2><p>Cork with beeswax.</p>'
    )
    path = make_epub(
        tmp_path / "potions.epub",
        {"pot.xhtml": body, "herbs.xhtml": "<h1>Herbs</h1><p>Mandrake screams.</p>"},
        [
            (
                ("Potions", "pot.xhtml"),
                [
                    (("Brewing", "pot.xhtml#s-brew"), [("Cooling", "pot.xhtml#s-cool")]),
                    ("Bottling", "pot.xhtml#s-bottle"),
                ],
            ),
            ("Herbs", "herbs.xhtml"),
        ],
        ncx=False,
    )
    book = parse_epub(path)
    assert (book.title, book.author, book.source_type) == (
        "The Test Grimoire",
        "Ada Author",
        "epub",
    )
    assert [c.title for c in book.chapters] == ["Potions", "Herbs"]
    pot = book.chapters[0]
    assert [(s.title, s.path) for s in pot.sections] == [
        ("", []),
        ("Brewing", ["Brewing"]),
        ("Cooling", ["Brewing", "Cooling"]),
        ("Bottling", ["Bottling"]),
    ]
    # Text before the first sub-entry is the untitled lead-in; each anchor starts its section.
    assert where(book, "wash the cauldron")[1].title == ""
    assert where(book, "widdershins")[1].title == "Brewing"
    assert where(book, "moonlight")[1].title == "Cooling"
    assert where(book, "beeswax")[1].title == "Bottling"
    assert pot.sections[1].blocks[0].text == "Brewing"  # the heading opens its own section
    assert where(book, "Mandrake") == ("Herbs", book.chapters[1].sections[0])
    assert not book.warnings


def test_epub2_ncx_only(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "ncx.epub",
        {
            "a.xhtml": '<h1>Runes</h1><p>Carve deep.</p><h2 id="r2">Elder runes</h2><p>Old.</p>',
            "b.xhtml": "<h1>Wards</h1><p>Draw a circle.</p>",
        },
        [(("Runes", "a.xhtml"), [("Elder runes", "a.xhtml#r2")]), ("Wards", "b.xhtml")],
        nav=False,
    )
    with zipfile.ZipFile(path) as z:
        assert not any(n.endswith("nav.xhtml") for n in z.namelist())
    book = parse_epub(path)
    assert [c.title for c in book.chapters] == ["Runes", "Wards"]
    assert where(book, "Old.") == ("Runes", book.chapters[0].sections[1])
    assert book.chapters[0].sections[1].path == ["Elder runes"]
    assert where(book, "Carve deep")[1].title == ""


def test_anchor_mid_document_and_mid_paragraph_splits_exactly(tmp_path: Path) -> None:
    # The anchor sits on an inline element in the middle of a paragraph: the text before it
    # stays in the previous section, the text from it on belongs to the new one.
    body = (
        "<p>Intro words.</p>"
        '<p>Tail of the first part. <span id="mid">Start of the second part.</span> More.</p>'
        "<p>Second part continues.</p>"
    )
    path = make_epub(
        tmp_path / "mid.epub",
        {"m.xhtml": body},
        [(("Tome", "m.xhtml"), [("First", "m.xhtml#top"), ("Second", "m.xhtml#mid")])],
    )
    path = rewrite(
        path,
        tmp_path / "mid2.epub",
        lambda n, d: d.replace(b"<p>Intro", b'<p id="top">Intro') if n.endswith("m.xhtml") else d,
    )
    book = parse_epub(path)
    first, second = book.chapters[0].sections
    assert (first.title, second.title) == ("First", "Second")
    assert [b.text for b in first.blocks] == ["Intro words.", "Tail of the first part."]
    assert [b.text for b in second.blocks] == [
        "Start of the second part. More.",
        "Second part continues.",
    ]


def test_spine_doc_outside_toc_attaches_to_preceding_chapter(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "extra.epub",
        {
            "front.xhtml": "<h1>A Word Before</h1><p>Read by candlelight.</p>",
            "c1.xhtml": "<h1>Hexes</h1><p>Hex text.</p>",
            "c1b.xhtml": "<p>Continuation of hexes, split into its own file.</p>",
            "c2.xhtml": "<h1>Charms</h1><p>Charm text.</p>",
        },
        [("Hexes", "c1.xhtml"), ("Charms", "c2.xhtml")],
    )
    book = parse_epub(path)
    assert [c.title for c in book.chapters] == ["A Word Before", "Hexes", "Charms"]
    assert where(book, "Continuation of hexes")[0] == "Hexes"
    assert where(book, "candlelight")[0] == "A Word Before"


def test_no_toc_gives_one_chapter_per_document_titled_from_heading(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "notoc.epub",
        {
            "x.xhtml": "<h2>Moon Lore</h2><p>Phases.</p>",
            "y.xhtml": "<p>No heading here.</p>",
        },
        None,
        nav=False,
        ncx=False,
    )
    book = parse_epub(path)
    assert [c.title for c in book.chapters] == ["Moon Lore", "y.xhtml"]  # <title> fallback


def test_blocks_per_paragraph_element(tmp_path: Path) -> None:
    body = (
        "<h1>Ledger</h1>"
        "<script>var secret = 'do not index';</script><style>p { color: red }</style>"
        "<div>Loose div text<p>Para   with\n  spaces</p>trailing words</div>"
        "<ul><li>first item<ul><li>nested item</li></ul></li></ul>"
        "<table><tr><th>Herb</th><th>Use</th></tr><tr><td>Sage</td><td>Cleansing</td></tr></table>"
        "<dl><dt>Term</dt><dd>Definition</dd></dl>"
        "<blockquote>Quoted wisdom</blockquote>"
        "<pre>line one\n    indented two</pre>"
    )
    book = parse_epub(make_epub(tmp_path / "b.epub", {"l.xhtml": body}, [("Ledger", "l.xhtml")]))
    assert [b.text for b in all_blocks(book)] == [
        "Ledger",
        "Loose div text",
        "Para with spaces",
        "trailing words",
        "first item",
        "nested item",
        "Herb | Use",
        "Sage | Cleansing",
        "Term",
        "Definition",
        "Quoted wisdom",
        "line one\n    indented two",
    ]


def test_synthetic_pages_increase_through_the_book(tmp_path: Path) -> None:
    docs = {
        f"c{i}.xhtml": f"<h1>Chapter {i}</h1>"
        + "".join(f"<p>{i}.{j} {LOREM}</p>" for j in range(30))
        for i in range(3)
    }
    toc = [(f"Chapter {i}", f"c{i}.xhtml") for i in range(3)]
    book = parse_epub(make_epub(tmp_path / "long.epub", docs, toc))
    blocks = all_blocks(book)
    total = sum(len(b.text) for b in blocks)
    assert book.page_count == (total - 1) // 1024 + 1 > 10
    assert all(b.page is not None for b in blocks)
    pages = [b.page or 0 for b in blocks]
    assert pages[0] == 1
    assert all(a <= b for a, b in itertools.pairwise(pages))
    assert sorted(set(pages)) == list(range(1, book.page_count + 1))
    assert any(b.page_end == (b.page or 0) + 1 for b in blocks)  # a block across a page break
    assert blocks[-1].last_page == book.page_count
    starts = [c.anchor_page or 0 for c in book.chapters]
    assert starts == sorted(starts) and starts[0] == 1 and starts[1] > 1


def test_title_and_author_fall_back_to_filename(tmp_path: Path) -> None:
    src = make_epub(
        tmp_path / "x.epub", {"a.xhtml": "<p>Text.</p>"}, [("A", "a.xhtml")], author=None
    )

    def strip_title(name: str, data: bytes) -> bytes:
        if name.endswith(".opf"):
            return data.replace(b"<dc:title>The Test Grimoire</dc:title>", b"")
        return data

    book = parse_epub(rewrite(src, tmp_path / "Field Notes.epub", strip_title))
    assert (book.title, book.author) == ("Field Notes", None)
