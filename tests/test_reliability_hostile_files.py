"""Hostile and broken input files, through the real CLI in a subprocess.

Every case is generated here (nothing binary is checked in): truncated, encrypted, image-only
and mislabelled PDFs, zero-byte, binary and odd-encoding text, EPUBs with missing spines, DRM,
zip bombs, path traversal and entity bombs, deeply nested Markdown, a 20 MB single line. Each
must keep the promise of ``hostile_cli.check_outcome``: a sensible book, or one ``error: …``
line naming the file and the library byte-for-byte unchanged. Decoded text must also be
right, and a long single line must be cut into bounded sections.
"""

from __future__ import annotations

import io
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from hostile_cli import check_outcome, run_cli

pytestmark = pytest.mark.slow  # each hostile file through a real CLI subprocess

pymupdf = pytest.importorskip("pymupdf")

HUGE_CASE = "txt-20mb-single-line"


# -- generators ---------------------------------------------------------------------------
def _text_pdf(pages: int = 3) -> bytes:
    doc = pymupdf.open()
    for p in range(pages):
        page = doc.new_page()
        for k in range(12):
            page.insert_text((72, 100 + 20 * k),
                             f"Tide table page {p} line {k}: moon, harbour and current.")
    doc.set_toc([[1, f"Chapter {p + 1}", p + 1] for p in range(pages)])
    data = doc.tobytes()
    doc.close()
    return bytes(data)


def _header_like_pdf() -> bytes:
    """One similar short line at the top of each page: all of it looks like running headers
    (this used to leave no lines at all and crash the heading guesser)."""
    doc = pymupdf.open()
    for p in range(3):
        doc.new_page().insert_text((72, 60), f"Page {p} text about tides and harbours.")
    data = doc.tobytes()
    doc.close()
    return bytes(data)


def _encrypted_pdf(user_pw: str) -> bytes:
    doc = pymupdf.open(stream=_text_pdf(), filetype="pdf")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner-secret",
                       user_pw=user_pw)
    doc.close()
    return bytes(data)


def _image_only_pdf() -> bytes:
    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(180)
    for _ in range(2):
        doc.new_page().insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=pix)
    data = doc.tobytes()
    doc.close()
    return bytes(data)


def _png() -> bytes:
    """A small real PNG image (what a misnamed download can hold)."""
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8))
    return bytes(pix.tobytes("png"))


def _raw_outline_pdf(ghost_dest: bytes) -> bytes:
    """A hand-written PDF whose outline has an entry pointing at ``ghost_dest``.

    pymupdf's own writer refuses bad destinations, so the objects are written by hand (the
    xref offsets are exact; MuPDF would repair them anyway).
    """
    content = [b"BT /F1 11 Tf 72 500 Td (Harbour tides on page %d, words enough to index.) Tj ET"
               % i for i in (1, 2)]
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 10 0 R >> >> >>")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R /Outlines 7 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        page % 5, page % 6,
        b"<< /Length %d >>\nstream\n" % len(content[0]) + content[0] + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(content[1]) + content[1] + b"\nendstream",
        b"<< /Type /Outlines /First 8 0 R /Last 9 0 R /Count 2 >>",
        b"<< /Title (Real chapter) /Parent 7 0 R /Next 9 0 R /Dest [3 0 R /XYZ 0 792 0] >>",
        b"<< /Title (Ghost chapter) /Parent 7 0 R /Prev 8 0 R /Dest " + ghost_dest
        + b" /First 11 0 R /Last 11 0 R /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (Ghost section) /Parent 9 0 R /Dest [10 0 R /Fit] >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1,
                                                                              xref)
    return bytes(out)


CONTAINER = (b'<?xml version="1.0"?><container version="1.0" '
             b'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
             b'<rootfile full-path="OEBPS/content.opf" '
             b'media-type="application/oebps-package+xml"/></rootfiles></container>')


def _opf(manifest: str, spine: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x'
        '</dc:identifier><dc:title>Hostile Epub</dc:title><dc:language>en</dc:language>'
        f'</metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>'
    ).encode()


def _xhtml(title: str, words: int = 120) -> bytes:
    body = " ".join(f"lantern{i % 17} keeper storm" for i in range(words))
    return (f'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p>"
            "</body></html>").encode()


def _epub(members: dict[str, bytes], *, big: tuple[str, int] | None = None) -> bytes:
    """An EPUB zip with ``members``; ``big`` = (name, size) adds a member of zeros, deflated
    as a zip bomb is: the file stays small on disk, its member huge once read."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip")
        zf.writestr("META-INF/container.xml", CONTAINER, zipfile.ZIP_DEFLATED)
        for name, data in members.items():
            zf.writestr(name, data, zipfile.ZIP_DEFLATED)
        if big is not None:
            name, size = big
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as fh:
                block = b"\0" * (1 << 20)
                for _ in range(size >> 20):
                    fh.write(block)
    return buf.getvalue()


def _item(i: str, href: str) -> str:
    return f'<item id="{i}" href="{href}" media-type="application/xhtml+xml"/>'


def _epub_missing_spine() -> bytes:
    opf = _opf(_item("a", "a.xhtml") + _item("b", "gone.xhtml"),
               '<itemref idref="a"/><itemref idref="b"/><itemref idref="nope"/>')
    return _epub({"OEBPS/content.opf": opf, "OEBPS/a.xhtml": _xhtml("Present")})


def _epub_fragment_hrefs() -> bytes:
    opf = _opf(_item("a", "a.xhtml#start") + _item("b", "b.xhtml#middle"),
               '<itemref idref="a"/><itemref idref="b"/>')
    return _epub({"OEBPS/content.opf": opf, "OEBPS/a.xhtml": _xhtml("Alpha"),
                  "OEBPS/b.xhtml": _xhtml("Beta")})


def _epub_drm() -> bytes:
    opf = _opf(_item("a", "a.xhtml"), '<itemref idref="a"/>')
    enc = (b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
           b'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
           b'<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
           b'<enc:CipherData><enc:CipherReference URI="OEBPS/a.xhtml"/></enc:CipherData>'
           b"</enc:EncryptedData></encryption>")
    return _epub({"OEBPS/content.opf": opf, "OEBPS/a.xhtml": os.urandom(4000),
                  "META-INF/encryption.xml": enc})


def _epub_bomb() -> bytes:
    opf = _opf(_item("a", "a.xhtml"), '<itemref idref="a"/>')
    return _epub({"OEBPS/content.opf": opf}, big=("OEBPS/a.xhtml", 200 << 20))


def _epub_traversal() -> bytes:
    opf = _opf(_item("a", "../../../evil.xhtml") + _item("b", "ok.xhtml"),
               '<itemref idref="a"/><itemref idref="b"/>')
    return _epub({"OEBPS/content.opf": opf, "../../../evil.xhtml": _xhtml("Evil"),
                  "/etc/evil-absolute.xhtml": _xhtml("Absolute"),
                  "OEBPS/ok.xhtml": _xhtml("Honest")})


def _epub_billion_laughs() -> bytes:
    lol = ('<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "lollollollollollollol">'
           + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'
                     for i in range(8))
           + ']><html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Laughs</h1>'
           "<p>&i; plain words about lanterns and keepers</p></body></html>")
    opf = _opf(_item("a", "a.xhtml"), '<itemref idref="a"/>')
    return _epub({"OEBPS/content.opf": opf, "OEBPS/a.xhtml": lol.encode()})


def _nested_markdown() -> bytes:
    lines = ["# Root", "", "Opening words about the lighthouse.", ""]
    for i in range(3000):
        level = 1 + (i * 7) % 6
        lines += ["#" * level + f" Heading {i}", "", f"Body {i} about lamps and fog.", ""]
    lines += ["#" * 400 + " far too deep", "", "still text", ""]
    return "\n".join(lines).encode()


def _huge_line() -> bytes:
    # 20 MB in one line, not a single newline (and no paragraph or sentence break). Long
    # "words" keep the fake embedder cheap, so the test measures our code, not hashing.
    unit = b"tidewater" * 22 + b" "
    return unit * ((20 << 20) // len(unit))


# name → (file name, bytes factory, "ok" | "error" | "either")
Case = tuple[str, Callable[[], bytes], str]


CASES: dict[str, Case] = {
    "pdf-truncated": ("cut.pdf", lambda: _text_pdf(6)[: len(_text_pdf(6)) // 3], "either"),
    "pdf-header-only": ("head.pdf", lambda: b"%PDF-1.7\n" + b"\x00" * 50, "error"),
    "pdf-corrupt-middle": ("corrupt.pdf", lambda: (lambda d: d[:400] + os.urandom(3000)
                                                  + d[3400:])(_text_pdf(6)), "either"),
    "pdf-junk": ("junk.pdf", lambda: os.urandom(20000), "error"),
    "pdf-encrypted-user-password": ("locked.pdf", lambda: _encrypted_pdf("user-secret"),
                                    "error"),
    "pdf-encrypted-empty-password": ("owneronly.pdf", lambda: _encrypted_pdf(""), "ok"),
    "pdf-image-only": ("scan.pdf", _image_only_pdf, "error"),
    "pdf-outline-dangling-ref": ("ghost1.pdf", lambda: _raw_outline_pdf(b"[99 0 R /XYZ 0 0 0]"),
                                 "ok"),
    "pdf-outline-page-out-of-range": ("ghost2.pdf",
                                      lambda: _raw_outline_pdf(b"[57 /Fit]"), "ok"),
    "pdf-header-like-lines-only": ("headers.pdf", _header_like_pdf, "ok"),
    "pdf-zero-bytes": ("empty.pdf", lambda: b"", "error"),
    # MuPDF sniffs the bytes and would open these as a text or image document
    "pdf-that-is-markdown": ("notes.pdf", lambda: b"# Tides\n\nThe tide turns at dusk.\n",
                             "error"),
    "pdf-that-is-png": ("picture.pdf", lambda: _png(), "error"),
    "html-that-is-pdf": ("page.html", lambda: _text_pdf(6), "error"),
    "md-zero-bytes": ("empty.md", lambda: b"", "error"),
    "txt-zero-bytes": ("empty.txt", lambda: b"", "error"),
    "epub-zero-bytes": ("empty.epub", lambda: b"", "error"),
    "txt-binary-junk": ("junk.txt", lambda: os.urandom(50000), "either"),
    "md-binary-junk": ("junk.md", lambda: os.urandom(50000), "either"),
    "epub-binary-junk": ("junk.epub", lambda: os.urandom(50000), "error"),
    "txt-nul-bytes": ("nul.txt", lambda: b"tide\x00table\x00" * 3000, "either"),
    "md-front-matter-only": ("fm.md", lambda: b"---\ntitle: Nothing\n---\n\n", "error"),
    "txt-whitespace-only": ("blank.txt", lambda: b" \n\t\n" * 1000, "error"),
    "txt-utf16": ("utf16.txt", lambda: ("Café au lait by the harbour. " * 400)
                  .encode("utf-16"), "ok"),
    "txt-utf16-no-bom": ("utf16le.txt", lambda: ("Tide tables of the old port. " * 400)
                         .encode("utf-16-le"), "ok"),
    "txt-latin1": ("latin1.txt", lambda: ("Crème brûlée near the jetée. " * 400)
                   .encode("latin-1"), "ok"),
    HUGE_CASE: ("huge.txt", _huge_line, "either"),
    "epub-missing-spine-items": ("spine.epub", _epub_missing_spine, "ok"),
    "epub-fragment-hrefs": ("frag.epub", _epub_fragment_hrefs, "ok"),
    "epub-drm": ("drm.epub", _epub_drm, "error"),
    "epub-zip-bomb": ("bomb.epub", _epub_bomb, "error"),
    "epub-path-traversal": ("traversal.epub", _epub_traversal, "either"),
    "epub-billion-laughs": ("laughs.epub", _epub_billion_laughs, "either"),
    "epub-no-container": ("nocontainer.epub", lambda: (lambda b: (
        zipfile.ZipFile(b, "w").close(), b.getvalue())[1])(io.BytesIO()), "error"),
    "md-deeply-nested-headings": ("nested.md", _nested_markdown, "ok"),
    "unsupported-extension": ("book.odt", lambda: b"PK\x03\x04 not really", "error"),
    "docx-not-a-zip": ("book.docx", lambda: b"PK\x03\x04 not really", "error"),
}


@pytest.mark.parametrize("case", [
    pytest.param(name, marks=pytest.mark.timeout(600)) if name == HUGE_CASE else name
    for name in sorted(CASES)])
def test_hostile_file(case: str, seeded: Path, tmp_path: Path) -> None:
    filename, make, expect = CASES[case]
    path = tmp_path / filename
    path.write_bytes(make())
    # The huge file's ~26,000 chunks (deleted after, but the database keeps their pages and
    # its search index) would make every later case in the shared library ~6x slower.
    lib = shutil.copytree(seeded, tmp_path / "lib") if case == HUGE_CASE else seeded
    check_outcome(lib, path, expect)
    if case == "epub-path-traversal":  # nothing was written outside the sandbox
        assert not (tmp_path.parent / "evil.xhtml").exists()
        assert not Path("/etc/evil-absolute.xhtml").exists()


def test_decoded_text_is_right_for_utf16_and_latin1(seeded: Path, tmp_path: Path) -> None:
    """Success is not enough: the accented words must be findable, not mojibake."""
    for name, text, enc, word in (("u16.txt", "Café au lait by the harbour. ", "utf-16", "Café"),
                                  ("l1.txt", "Crème brûlée near the jetée. ", "latin-1",
                                   "brûlée")):
        path = tmp_path / name
        path.write_bytes((text * 300).encode(enc))
        proc = run_cli(seeded, "ingest", str(path), "-q", "--json")
        assert proc.returncode == 0, proc.stderr
        import json

        slug = json.loads(proc.stdout)["slug"]
        hits = run_cli(seeded, "query", word, "--book", slug, "--json", "--mode", "keyword")
        assert hits.returncode == 0 and word in json.loads(hits.stdout)["results"][0]["text"]
        assert run_cli(seeded, "delete", slug, "--yes").returncode == 0


def test_a_long_single_line_is_split_into_bounded_sections(tmp_path: Path) -> None:
    from grimoire_beholder.ingest.build import build_book, file_info
    from grimoire_beholder.parse import parse_file
    from helpers import fake_config

    path = tmp_path / "line.txt"
    path.write_bytes(b"The tide rolls in over the flats. " * 60_000)  # 2 MB, no newline
    config = fake_config(tmp_path)
    book = build_book(parse_file(path), slug="line", name="line", info=file_info(path),
                      config=config)
    longest = max(s.approx_tokens for c in book.chapters for s in c.sections)
    assert longest <= 2 * config.section_split_tokens
