"""EPUB parsing: structure from nav/NCX with anchors, reading order, pages, and bad input.

EPUBs are generated with ebooklib in ``tmp_path`` (broken ones by rewriting the zip with
zipfile). The real-book checks run against the shared bench books when they are present and
are skipped cleanly otherwise.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import time
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from ebooklib import epub

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.document import Block, ParsedBook, ParsedSection
from grimoire_beholder.parse.epub import parse_epub
from helpers import make_epub, rewrite

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"

LOREM = (
    "Wizards keep their grimoires in cold towers where candles never quite reach the "
    "corners and the ink slowly forgets which spells it once described."
)


def all_blocks(book: ParsedBook) -> list[Block]:
    return [b for ch in book.chapters for s in ch.sections for b in s.blocks]


def where(book: ParsedBook, phrase: str) -> tuple[str, ParsedSection]:
    """(chapter title, section) of the one section whose text contains ``phrase``."""
    hits = [(ch.title, s) for ch in book.chapters for s in ch.sections if phrase in s.text]
    assert len(hits) == 1, f"{phrase!r} found in {len(hits)} sections"
    return hits[0]


def simple_book(tmp_path: Path) -> Path:
    return make_epub(
        tmp_path / "simple.epub",
        {
            "c1.xhtml": f"<h1>Summoning</h1><p>Circles of salt. {LOREM}</p>",
            "c2.xhtml": f"<h1>Banishing</h1><p>Bells and books. {LOREM}</p>",
        },
        [("Summoning", "c1.xhtml"), ("Banishing", "c2.xhtml")],
    )


# --- structure -------------------------------------------------------------------------


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


# --- real-world mess and bad input -----------------------------------------------------


def test_missing_spine_item_is_skipped_with_warning(tmp_path: Path) -> None:
    src = simple_book(tmp_path)
    path = rewrite(src, tmp_path / "gap.epub", lambda n, d: None if n.endswith("c2.xhtml") else d)
    book = parse_epub(path)
    assert "Circles of salt" in book.chapters[0].sections[0].text
    assert "Bells" not in "".join(b.text for b in all_blocks(book))
    assert any("c2.xhtml" in w and "missing" in w for w in book.warnings)


def test_manifest_href_with_fragment_and_url_encoding(tmp_path: Path) -> None:
    src = make_epub(
        tmp_path / "enc.epub",
        {"my chapter.xhtml": "<h1>Spaced</h1><p>Found despite the space.</p>"},
        [("Spaced", "my chapter.xhtml")],
    )

    def mangle(name: str, data: bytes) -> bytes:
        if name.endswith(".opf"):
            return data.replace(b'href="my chapter.xhtml"', b'href="my%20chapter.xhtml#start"')
        if name.endswith(".ncx") or name.endswith("nav.xhtml"):
            return data.replace(b'"my chapter.xhtml"', b'"../EPUB/my%20chapter.xhtml"')
        return data

    book = parse_epub(rewrite(src, tmp_path / "enc2.epub", mangle))
    assert where(book, "Found despite the space")[0] == "Spaced"


def test_path_traversal_names_never_touch_the_filesystem(tmp_path: Path) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    src = simple_book(work)

    def evil_spine(name: str, data: bytes) -> bytes:
        if name.endswith(".opf"):
            data = data.replace(
                b"</manifest>",
                b'<item id="evil" href="../../../evil.xhtml" media-type="application/xhtml+xml"/>'
                b"</manifest>",
            )
            return data.replace(b"</spine>", b'<itemref idref="evil"/></spine>')
        return data

    evil = b"<html><body><p>pwned</p></body></html>"
    path = rewrite(src, work / "evil.epub", evil_spine, {"../../evil.xhtml": evil})
    with zipfile.ZipFile(path) as z:
        assert "../../evil.xhtml" in z.namelist()
    before = set(tmp_path.rglob("*"))
    book = parse_epub(path)
    assert set(tmp_path.rglob("*")) == before
    for base in (Path.cwd(), Path.cwd().parent, Path.cwd().parent.parent):
        assert not (base / "evil.xhtml").exists()
    assert "pwned" not in " ".join(b.text for b in all_blocks(book))
    assert [c.title for c in book.chapters] == ["Summoning", "Banishing"]
    assert any("evil" in w for w in book.warnings)


def test_drm_encrypted_content_is_refused(tmp_path: Path) -> None:
    enc = (
        b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        b'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        b"<enc:EncryptedData>"
        b'<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        b'<enc:CipherData><enc:CipherReference URI="EPUB/c1.xhtml"/></enc:CipherData>'
        b"</enc:EncryptedData></encryption>"
    )
    path = rewrite(
        simple_book(tmp_path), tmp_path / "drm.epub", add={"META-INF/encryption.xml": enc}
    )
    with pytest.raises(InputFileError, match="DRM-protected") as err:
        parse_epub(path)
    assert "drm.epub" in str(err.value) and "\n" not in str(err.value)

    # Font obfuscation alone is not DRM: the book still parses.
    fonts = enc.replace(b"EPUB/c1.xhtml", b"EPUB/fonts/f.otf")
    ok = rewrite(
        simple_book(tmp_path), tmp_path / "font.epub", add={"META-INF/encryption.xml": fonts}
    )
    assert [c.title for c in parse_epub(ok).chapters] == ["Summoning", "Banishing"]


def test_hostile_markup_is_contained(tmp_path: Path) -> None:
    # Billion-laughs entities are never expanded; absurd nesting and binary junk in a content
    # document cost that document, not the book.
    lol = b'<!DOCTYPE html [<!ENTITY a "lollollollol">' + b"".join(
        b'<!ENTITY %s "%s">' % (bytes([98 + i]), (b"&" + bytes([97 + i]) + b";") * 10)
        for i in range(8)
    )
    docs = {
        "lol.xhtml": lol + b"]><html><body><p>&i;</p><p>Laughs contained.</p></body></html>",
        "deep.xhtml": b"<html><body>"
        + b"<div>" * 20000
        + b"x"
        + b"</div>" * 20000
        + b"</body></html>",
        "junk.xhtml": bytes(range(256)) * 8,
    }
    src = make_epub(
        tmp_path / "h.epub",
        {n: "<p>placeholder</p>" for n in [*docs, "ok.xhtml"]},
        [("Lol", "lol.xhtml"), ("Deep", "deep.xhtml"), ("Junk", "junk.xhtml"), ("Ok", "ok.xhtml")],
    )
    path = rewrite(src, tmp_path / "h2.epub", lambda n, d: docs.get(n.split("/")[-1], d))
    t = time.process_time()  # CPU time: the work done, not the machine's load
    book = parse_epub(path)
    assert time.process_time() - t < 2
    text = " ".join(b.text for b in all_blocks(book))
    assert "lollol" not in text and "Laughs contained." in text
    assert where(book, "placeholder")[0] == "Ok"
    assert any("junk.xhtml" in w for w in book.warnings)


@pytest.mark.parametrize(("tag", "depth"), [("div", 300), ("span", 3000), ("section", 20000)])
def test_deep_nesting_keeps_every_word_and_anchor(tmp_path: Path, tag: str, depth: int) -> None:
    """Past libxml2's 256 levels the XML parser fails and the HTML one silently dropped
    everything from the nesting on; the document is flattened instead, text and TOC anchors
    kept in order."""
    deep = (f"<h1>Deep</h1><p>Words before the nesting.</p>{f'<{tag}>' * depth}"
            f"<p id=\"inner\">Words deep inside.</p>{f'</{tag}>' * depth}"
            "<p>Words after the nesting.</p>")
    src = make_epub(tmp_path / "deep.epub",
                    {"c1.xhtml": "<p id=\"inner\">placeholder</p>",
                     "c2.xhtml": f"<h1>Next</h1><p>{LOREM}</p>"},
                    [(("Deep", "c1.xhtml"), [("Inside", "c1.xhtml#inner")]),
                     ("Next", "c2.xhtml")])
    xhtml = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
             f"<head><title>Deep</title></head><body>{deep}</body></html>").encode()
    # written after ebooklib, whose own (depth-limited) parser would cut the document
    path = rewrite(src, tmp_path / "deep2.epub",
                   lambda n, d: xhtml if n.endswith("c1.xhtml") else d)
    book = parse_epub(path)
    assert where(book, "Words before the nesting.")[1].title != "Inside"
    chapter, section = where(book, "Words deep inside.")
    assert chapter == "Deep" and section.title == "Inside"
    assert "Words after the nesting." in section.text
    assert where(book, "candles never quite reach")[0] == "Next"


@pytest.mark.slow  # a 12 MB paragraph
def test_a_paragraph_over_libxml2s_text_limit_is_kept(tmp_path: Path) -> None:
    """A text node over 10 MB made both parsers drop the whole document silently."""
    rng = random.Random(3)
    big = " ".join(f"w{rng.randrange(10**6)}" for _ in range(1_600_000)) + " tidewater"
    src = make_epub(tmp_path / "big.epub", {"c1.xhtml": "<p>placeholder</p>"},
                    [("Big", "c1.xhtml")])
    xhtml = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
             f"<head><title>Big</title></head><body><p>{big}</p><p>{LOREM}</p></body></html>")
    path = rewrite(src, tmp_path / "big2.epub",
                   lambda n, d: xhtml.encode() if n.endswith("c1.xhtml") else d)
    book = parse_epub(path)
    text = " ".join(b.text for b in all_blocks(book))
    assert len(text) > 12_000_000  # 12 MB in one paragraph, all of it
    assert "tidewater" in text and "candles never quite reach" in text


def test_entity_bomb_in_the_package_document_is_named(tmp_path: Path) -> None:
    """A billion-laughs OPF hits libxml2's entity-expansion limit: say that, not "empty
    spine" (the forgiving parser used to stop there and find no spine)."""
    bomb = (b'<?xml version="1.0"?><!DOCTYPE package [<!ENTITY a "lollollollol">'
            + b"".join(b'<!ENTITY %s "%s">' % (bytes([98 + i]), (b"&" + bytes([97 + i])
                                                             + b";") * 10) for i in range(8))
            + b"]>")

    def explode(name: str, data: bytes) -> bytes:
        if not name.endswith(".opf"):
            return data
        body = data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data
        return bomb + body.replace(b"<dc:title", b"<dc:description>&i;</dc:description>"
                                                 b"<dc:title", 1)

    path = rewrite(simple_book(tmp_path), tmp_path / "laughs.epub", explode)
    with pytest.raises(InputFileError) as info:
        parse_epub(path)
    message = str(info.value)
    assert "entity" in message and "laughs.epub" in message and "spine" not in message


def test_zip_bomb_is_refused_quickly(tmp_path: Path) -> None:
    path = rewrite(simple_book(tmp_path), tmp_path / "bomb.epub")
    chunk = b"\0" * (1 << 20)
    with (
        zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z,
        z.open("EPUB/bomb.xhtml", "w", force_zip64=True) as fh,
    ):
        for _ in range(300):  # 300 MB that compresses to ~300 KB
            fh.write(chunk)
    assert path.stat().st_size < 2_000_000
    t = time.process_time()  # CPU time: the work done, not the machine's load
    with pytest.raises(InputFileError, match="zip bomb"):
        parse_epub(path)
    assert time.process_time() - t < 2


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "empty"),
        # Seeded: every xdist worker must collect the same parameters.
        (random.Random(22).randbytes(4096), "not an EPUB"),
        (b"%PDF-1.7 definitely not a zip", "not an EPUB"),
    ],
    ids=["empty", "noise", "pdf-header"],
)
def test_junk_files_raise_one_line_errors(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "junk.epub"
    path.write_bytes(content)
    with pytest.raises(InputFileError, match=match) as err:
        parse_epub(path)
    assert "junk.epub" in str(err.value) and "\n" not in str(err.value)


def test_missing_file_and_zip_without_opf_and_no_text(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="not found"):
        parse_epub(tmp_path / "nope.epub")
    plain = tmp_path / "plain.epub"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(InputFileError, match="no OPF"):
        parse_epub(plain)
    images = make_epub(
        tmp_path / "img.epub",
        {"i.xhtml": '<div><img src="x.png" alt=""/></div>'},
        [("I", "i.xhtml")],
    )
    with pytest.raises(InputFileError, match="no text"):
        parse_epub(images)


def test_corrupt_member_raises_input_error(tmp_path: Path) -> None:
    src = simple_book(tmp_path)
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = z.getinfo("EPUB/c1.xhtml")
    # Flip bytes inside c1.xhtml's compressed data: the CRC check must fail cleanly.
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 2
    for i in range(start, start + 20):
        data[i] ^= 0xFF
    bad = tmp_path / "corrupt.epub"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputFileError, match=r"corrupt\.epub"):
        parse_epub(bad)


# --- the real bench books ---------------------------------------------------------------

REAL = {
    "books/arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub": {
        "skip": {"text/imprint.xhtml", "text/colophon.xhtml", "text/uncopyright.xhtml"},
        "chapters": 13,
    },
    "books/sun-tzu_the-art-of-war_lionel-giles.epub": {
        "skip": {"text/imprint.xhtml", "text/colophon.xhtml", "text/uncopyright.xhtml"},
        "chapters": 24,
    },
    "books/ubuntu-packaging-guide.epub": {"skip": set(), "chapters": 17},
    "books-dev/calibre-quick-start-guide.epub": {
        "skip": {"text/titlepage.xhtml", "text/toc.xhtml"},
        "chapters": 12,
    },
}
needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="shared/bench not present")


def _textnorm() -> Callable[[str], str]:
    spec = importlib.util.spec_from_file_location("bench_textnorm", BENCH / "textnorm.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.norm  # type: ignore[no-any-return]


def _squash(norm: Callable[[str], str], text: str) -> str:
    return "".join(norm(text).split())


@needs_bench
@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_books_keep_every_toc_entry_and_all_text(rel: str) -> None:
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    norm = _textnorm()
    path = BENCH / rel
    book = parse_epub(path)
    expect = REAL[rel]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = epub.read_epub(str(path))

    # Every TOC entry (except those of skipped boilerplate pages) is a chapter or section.
    skip_docs: set[str] = expect["skip"]  # type: ignore[assignment]
    toc: list[str] = []

    def flat(nodes: list[object]) -> None:
        for n in nodes:
            node, kids = n if isinstance(n, tuple) else (n, [])
            if node.href.split("#")[0] not in skip_docs and not node.href.endswith("toc.xhtml"):
                toc.append(" ".join(node.title.split()))
            flat(kids)

    flat(ref.toc)
    got = [c.title for c in book.chapters] + [
        s.title for c in book.chapters for s in c.sections if s.title
    ]
    assert Counter(got) == Counter(toc)
    assert len(book.chapters) == expect["chapters"]

    # No text lost or doubled: the linear spine documents' body text, in order, equals the
    # blocks' text (compared on word characters only), minus navigation chrome.
    parts = []
    for idref, linear in ref.spine:
        item = ref.get_item_with_id(idref)
        if linear == "no" or item.get_name() in skip_docs:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            soup = BeautifulSoup(item.get_content(), "lxml")
        body = soup.body
        assert body is not None
        for el in body.find_all(["script", "style", "svg", "noscript"]):
            el.decompose()
        for el in body.find_all(attrs={"role": ["navigation", "contentinfo"]}):
            el.decompose()
        parts.append(body.get_text(" "))
    assert _squash(norm, " ".join(parts)) == _squash(
        norm, " ".join(b.text for b in all_blocks(book))
    )
    pages = [b.page or 0 for b in all_blocks(book)]
    assert pages == sorted(pages) and pages[0] == 1


@needs_bench
def test_calibre_questions_land_in_their_gold_chapter_and_section() -> None:
    norm = _textnorm()
    book = parse_epub(BENCH / "books-dev" / "calibre-quick-start-guide.epub")
    located = [
        (ch.title, s.title, norm(b.text))
        for ch in book.chapters
        for s in ch.sections
        for b in s.blocks
    ]
    rows = [
        json.loads(x) for x in (BENCH / "books-dev" / "questions.jsonl").read_text().splitlines()
    ]
    qs = [q for q in rows if q["id"].startswith("bk-dev-calibre") and q["answerable"]]
    assert len(qs) == 23
    misses = []
    for q in qs:
        hits = [(c, s) for c, s, t in located if norm(q["evidence"]) in t]
        want_section = q["gold_section"]
        ok = len(hits) == 1 and hits[0][0] == q["gold_chapter"]
        ok = ok and (want_section is None or hits[0][1] == want_section)
        if not ok:
            misses.append((q["id"], hits, q["gold_chapter"], want_section))
    print(f"calibre gold locations matched: {len(qs) - len(misses)}/{len(qs)}")
    assert not misses
