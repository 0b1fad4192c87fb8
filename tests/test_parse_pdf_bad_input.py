"""PDF parsing of bad input: missing, empty, junk, truncated, password-protected and
image-only files each give one one-line error naming the file (or, repaired, the text).

The PDFs are generated with pymupdf in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.pdf import parse_pdf
from parse_helpers import all_text, save, write


def one_line_error(path: Path) -> str:
    with pytest.raises(InputFileError) as info:
        parse_pdf(path)
    message = str(info.value)
    assert "\n" not in message and path.name in message
    return message


def test_missing_and_empty_files_are_reported(tmp_path: Path) -> None:
    assert "not found" in one_line_error(tmp_path / "absent.pdf")
    (tmp_path / "empty.pdf").write_bytes(b"")
    assert "empty" in one_line_error(tmp_path / "empty.pdf")


def test_junk_and_truncated_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "junk.pdf").write_bytes(b"this is not a pdf at all\x00\xff" * 50)
    assert "PDF" in one_line_error(tmp_path / "junk.pdf")
    doc = pymupdf.open()
    for i in range(20):
        write(doc.new_page(), 100, f"Paragraph {i} " * 20)
    data = doc.tobytes(garbage=3, deflate=True, use_objstms=1)
    (tmp_path / "cut.pdf").write_bytes(data[: len(data) // 3])
    one_line_error(tmp_path / "cut.pdf")
    (tmp_path / "head.pdf").write_bytes(data[:300])
    one_line_error(tmp_path / "head.pdf")


def test_truncated_but_repairable_file_parses_or_fails_cleanly(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for i in range(5):
        write(doc.new_page(), 100, f"Repairable text {i}.")
    data = doc.tobytes()  # uncompressed, no object streams: repairable
    for keep in (0.5, 0.8, 0.95):
        path = tmp_path / f"cut{keep}.pdf"
        path.write_bytes(data[: int(len(data) * keep)])
        try:
            book = parse_pdf(path)
        except InputFileError as exc:
            assert path.name in str(exc)
        else:
            assert "Repairable text" in all_text(book)


def test_encrypted_pdf_is_reported_as_password_protected(tmp_path: Path) -> None:
    doc = pymupdf.open()
    write(doc.new_page(), 100, "Secret text.")
    path = tmp_path / "locked.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="s3cret", owner_pw="own")
    assert "password" in one_line_error(path)
    # an owner password alone (empty user password) does not stop reading
    doc.save(tmp_path / "owner.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="own")
    assert "Secret text." in all_text(parse_pdf(tmp_path / "owner.pdf"))


def test_image_only_pdf_is_reported_as_scanned(tmp_path: Path) -> None:
    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
    pix.clear_with(200)
    doc.new_page().insert_image(pymupdf.Rect(72, 72, 300, 400), pixmap=pix)
    assert "scanned" in one_line_error(save(doc, tmp_path / "scan.pdf"))
