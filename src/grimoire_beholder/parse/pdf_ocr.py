"""OCR for PDF pages that have no text layer (scanned pages), through pymupdf and Tesseract.

Why pymupdf's OCR: MuPDF carries Tesseract's engine itself and only needs Tesseract's
language data (``eng.traineddata``…), so there is no subprocess per page and the OCR'd text
comes back in the same ``dict`` form as a normal page — the rest of the PDF parser treats it
like any other text. The language data ships with the system package (Debian
``tesseract-ocr``, Homebrew ``tesseract``), so "is Tesseract installed" means "can we find a
tessdata folder holding every requested language".

Only pages with no text at all are OCR'd — those that show an image (scans) and those that
draw visible shapes (books whose glyphs were converted to vector paths): a page that has a
text layer is trusted as it is (its own text beats OCR). A textless page is never dropped
without a word: pages OCR'd, pages where OCR found nothing, pages skipped (``ocr = "off"``
or no Tesseract, with how to enable it) and blank pages each get a warning line.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grimoire_beholder.parse.pdf_tables import too_many_drawings
from grimoire_beholder.text import page_ranges

_DPI = 300  # Tesseract's accuracy drops sharply below ~300 dpi on book-sized type
# A textless page "draws text" when its vector paths have at least _MIN_STROKES segments
# (a word outlined as glyphs has dozens; a header rule or a frame one to four) and a quick
# grey render shows them (white or clipped-away paths do not count).
_MIN_STROKES = 8
_INK_DPI, _INK_LEVEL, _INK_SHARE = 36, 230, 0.0001
_INK = bytes(range(_INK_LEVEL))
_INSTALL = "apt-get install tesseract-ocr, or brew install tesseract"
# where distributions put tessdata; TESSDATA_PREFIX and `tesseract --list-langs` come first
_TESSDATA_GLOBS = (
    "/usr/share/tesseract-ocr/*/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/usr/local/share/tesseract-ocr/*/tessdata",
    "/opt/homebrew/share/tessdata",
    "/opt/local/share/tessdata",
)


@dataclass
class OcrOutcome:
    """What OCR made of the scanned pages: text per page, warnings, and why it did not run."""

    blocks: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # page → dict blocks
    warnings: list[str] = field(default_factory=list)
    not_run: str | None = None  # why scanned pages were skipped (OCR off / no Tesseract)


def _pages(pages: list[int]) -> str:
    return f"page{'s' if len(pages) > 1 else ''} {page_ranges(pages)}"


@dataclass
class TextlessPages:
    """The pages (1-based) without a text layer, by what they show."""

    scanned: list[int] = field(default_factory=list)  # an image: a scan
    drawn: list[int] = field(default_factory=list)  # visible vector shapes: outlined glyphs
    blank: list[int] = field(default_factory=list)  # nothing visible

    @property
    def to_ocr(self) -> list[int]:
        return sorted(self.scanned + self.drawn)


def _draws_text(page: Any) -> bool:
    """Enough path segments to be outlined glyphs, and visible on a quick grey render."""
    if not too_many_drawings(page):  # else plenty of strokes: never list them all
        strokes = 0
        for path in page.get_cdrawings():
            strokes += len(path.get("items", ()))
            if strokes >= _MIN_STROKES:
                break
        else:
            return False
    samples = page.get_pixmap(dpi=_INK_DPI, colorspace="gray", alpha=False).samples
    return len(samples) - len(samples.translate(None, _INK)) >= _INK_SHARE * len(samples)


def classify_textless(doc: Any, textless: list[int]) -> TextlessPages:
    """Sort textless pages into scanned, drawn and blank (a page that cannot be looked at
    counts as blank)."""
    found = TextlessPages()
    for number in textless:
        try:
            page = doc[number - 1]
            if page.get_images(full=False):
                found.scanned.append(number)
            elif _draws_text(page):
                found.drawn.append(number)
            else:
                found.blank.append(number)
        except Exception:
            found.blank.append(number)
    return found


def _has_languages(folder: str, language: str) -> bool:
    return all(
        (Path(folder) / f"{lang}.traineddata").is_file() for lang in language.split("+") if lang
    )


def find_tessdata(language: str) -> str | None:
    """A tessdata folder holding every language of ``language`` ("eng+deu"), or None."""
    candidates: list[str] = []
    if os.environ.get("TESSDATA_PREFIX"):
        candidates.append(os.environ["TESSDATA_PREFIX"])
    for pattern in _TESSDATA_GLOBS:
        candidates.extend(sorted(glob.glob(pattern), reverse=True))  # newest version first
    for folder in candidates:
        if _has_languages(folder, language):
            return folder
    binary = shutil.which("tesseract")
    if binary is None:
        return None
    try:
        listed = subprocess.run(
            [binary, "--list-langs"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'available languages in "(.+?)"', listed.stdout + listed.stderr)
    if match and _has_languages(match.group(1), language):
        return match.group(1)
    return None


def _describe(kinds: TextlessPages, pages: list[int]) -> str:
    """"3 scanned page(s)", "40 page(s) drawn as vector shapes", or both."""
    scanned = len(set(pages) & set(kinds.scanned))
    drawn = len(pages) - scanned
    parts = ([f"{scanned} scanned page(s)"] if scanned else []) + (
        [f"{drawn} page(s) drawn as vector shapes"] if drawn else [])
    return " and ".join(parts)


def ocr_pages(doc: Any, kinds: TextlessPages, *, mode: str, language: str,
              flags: int) -> OcrOutcome:
    """OCR the scanned and drawn pages when ``mode`` is "auto" and Tesseract is there, and
    say in warnings what became of every textless page.

    Like every parser warning, these do not name the file: ingest prefixes its name.
    """
    outcome = OcrOutcome()
    pages = kinds.to_ocr
    if kinds.blank:
        outcome.warnings.append(
            f"{len(kinds.blank)} blank page(s) gave no text: {_pages(kinds.blank)}")
    if not pages:
        return outcome
    if mode == "off":
        outcome.not_run = (
            f'OCR is off; set ocr = "auto" in config.toml to OCR pages without a text layer '
            f"(needs Tesseract: {_INSTALL})"
        )
    else:
        tessdata = find_tessdata(language)
        if tessdata is None:
            outcome.not_run = (
                f"Tesseract (language '{language}') was not found; install it to OCR pages "
                f"without a text layer ({_INSTALL}), or set TESSDATA_PREFIX to its tessdata "
                "folder"
            )
        else:
            _run(doc, pages, language, tessdata, flags, outcome)
            read = sorted(outcome.blocks)
            failed = [p for p in pages if p not in outcome.blocks]
            if read:
                outcome.warnings.append(
                    f"{_describe(kinds, read)} without a text layer were read by OCR "
                    f"({language}; expect recognition errors): {_pages(read)}"
                )
            if failed:
                outcome.warnings.append(
                    f"OCR found no text on {_describe(kinds, failed)}: "
                    f"{_pages(failed)}"
                )
            return outcome
    outcome.warnings.append(
        f"{_describe(kinds, pages)} have no text layer and were skipped "
        f"({_pages(pages)}): {outcome.not_run}"
    )
    return outcome


def _run(doc: Any, pages: list[int], language: str, tessdata: str, flags: int,
         outcome: OcrOutcome) -> None:
    """OCR each page; a page that fails or yields nothing is simply left out."""
    for page_no in pages:
        try:
            page = doc[page_no - 1]
            textpage = page.get_textpage_ocr(
                flags=flags, language=language, dpi=_DPI, full=True, tessdata=tessdata
            )
            blocks = page.get_text("dict", textpage=textpage, flags=flags, sort=True)["blocks"]
        except Exception:
            continue
        if any(span.get("text", "").strip() for block in blocks
               for line in block.get("lines", ()) for span in line.get("spans", ())):
            outcome.blocks[page_no] = blocks
