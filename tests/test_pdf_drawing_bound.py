"""A PDF page of two million tiny compressed strokes (about 100 KB on disk): listing its
paths for ruled-table detection and for the drawn-text check built a dict per path, 3 GB
for one page (a ``SystemError`` under a 3 GiB cap). The work per page is now bounded: such
a page is read as prose and a warning says so. Parsed in a subprocess capped at 2 GiB."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

STROKES = 2_000_000
PARSE = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.parse.document import ParseOptions
from grimoire_beholder.parse.pdf import parse_pdf
try:
    book = parse_pdf(Path(sys.argv[1]), ParseOptions())
except GrimoireError as exc:
    print("refused:", exc)
else:
    print("warnings:", book.warnings)
"""


def _strokes_pdf(path: Path, *, text: bool) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    if text:
        page.insert_text((72, 72), "A page of words drawn over with strokes.", fontsize=12)
    else:
        page.draw_line((0, 0), (1, 1))
    xref = page.get_contents()[0]
    body = doc.xref_stream(xref) + b"\n0.1 w\n" + b"10 10 m 10.2 10.2 l S\n" * STROKES
    doc.update_stream(xref, body, compress=True)
    doc.save(path, deflate=True, garbage=3)
    return path


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS is POSIX")
@pytest.mark.parametrize("text", [True, False], ids=["with text", "textless"])
def test_a_page_of_millions_of_strokes_stays_under_two_gib(tmp_path: Path, text: bool) -> None:
    pdf = _strokes_pdf(tmp_path / "strokes.pdf", text=text)
    assert pdf.stat().st_size < 300_000
    done = subprocess.run([sys.executable, "-c", PARSE, str(pdf)], capture_output=True,
                          text=True, timeout=170)
    assert done.returncode == 0, done.stderr[-2000:]
    if text:
        assert "draw too much to look for ruled tables" in done.stdout, done.stdout
    else:
        assert done.stdout.startswith("refused:") and "Traceback" not in done.stderr
