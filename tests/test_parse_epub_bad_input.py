"""EPUB parsing of real-world mess and bad input: missing or oddly named spine items, path
traversal, DRM, hostile markup (entity bombs, absurd nesting, huge paragraphs), zip bombs,
junk and corrupt files — each parses what can be parsed or raises one one-line error.

EPUBs are generated with ebooklib in ``tmp_path``, broken ones by rewriting the zip with
zipfile.
"""

from __future__ import annotations

import random
import time
import zipfile
from pathlib import Path

import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.epub import parse_epub
from helpers import make_epub, rewrite
from parse_helpers import LOREM, all_blocks, where


def simple_book(tmp_path: Path) -> Path:
    return make_epub(
        tmp_path / "simple.epub",
        {
            "c1.xhtml": f"<h1>Summoning</h1><p>Circles of salt. {LOREM}</p>",
            "c2.xhtml": f"<h1>Banishing</h1><p>Bells and books. {LOREM}</p>",
        },
        [("Summoning", "c1.xhtml"), ("Banishing", "c2.xhtml")],
    )


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
