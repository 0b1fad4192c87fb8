"""OCR for PDF pages that have no text layer (scanned pages), through pymupdf and Tesseract.

Why pymupdf's OCR: MuPDF carries Tesseract's engine itself and only needs Tesseract's
language data (``eng.traineddata``…), so there is no subprocess per page and the OCR'd text
comes back in the same ``dict`` form as a normal page — the rest of the PDF parser treats it
like any other text. The language data ships with the system package (Debian
``tesseract-ocr``, Homebrew ``tesseract``), so "is Tesseract installed" means "can we find a
tessdata folder holding every requested language".

Only pages with no text at all *and* an image are OCR'd: a blank page is not scanned, and a
page that has a text layer is trusted as it is (its own text beats OCR). With ``ocr = "off"``
or without Tesseract, the scanned pages are listed in a warning saying how to enable OCR.
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

_DPI = 300  # Tesseract's accuracy drops sharply below ~300 dpi on book-sized type
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


def page_ranges(pages: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1–3, 7"``: a list of skipped pages short enough for one line."""
    spans: list[list[int]] = []
    for page in sorted(pages):
        if spans and page == spans[-1][1] + 1:
            spans[-1][1] = page
        else:
            spans.append([page, page])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _pages(pages: list[int]) -> str:
    return f"page{'s' if len(pages) > 1 else ''} {page_ranges(pages)}"


def scanned_pages(doc: Any, textless: list[int]) -> list[int]:
    """The textless pages (1-based) that show an image: blank pages are not scanned."""
    found = []
    for page in textless:
        try:
            if doc[page - 1].get_images(full=False):
                found.append(page)
        except Exception:
            continue
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


def ocr_pages(doc: Any, pages: list[int], *, mode: str, language: str, flags: int,
              name: str) -> OcrOutcome:
    """OCR the scanned ``pages`` (1-based) when ``mode`` is "auto" and Tesseract is there.

    ``name`` (the file's name) starts every warning, like the parser's other warnings.
    """
    outcome = OcrOutcome()
    if not pages:
        return outcome
    if mode == "off":
        outcome.not_run = (
            f'OCR is off; set ocr = "auto" in config.toml to OCR scanned pages (needs '
            f"Tesseract: {_INSTALL})"
        )
    else:
        tessdata = find_tessdata(language)
        if tessdata is None:
            outcome.not_run = (
                f"Tesseract (language '{language}') was not found; install it to OCR scanned "
                f"pages ({_INSTALL}), or set TESSDATA_PREFIX to its tessdata folder"
            )
        else:
            _run(doc, pages, language, tessdata, flags, outcome)
            read = sorted(outcome.blocks)
            failed = [p for p in pages if p not in outcome.blocks]
            if read:
                outcome.warnings.append(
                    f"{name}: {len(read)} scanned page(s) without a text layer were read by OCR "
                    f"({language}; expect recognition errors): {_pages(read)}"
                )
            if failed:
                outcome.warnings.append(
                    f"{name}: OCR found no text on {len(failed)} scanned page(s): "
                    f"{_pages(failed)}"
                )
            return outcome
    outcome.warnings.append(
        f"{name}: {len(pages)} scanned page(s) have no text layer and were skipped "
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
