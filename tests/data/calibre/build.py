"""Rebuild the Calibre fixture libraries ``before/`` and ``after/`` with Calibre itself.

Run from the repository root, with Calibre's ``calibredb`` on PATH (Debian: ``apt-get
install calibre``): ``uv run python tests/data/calibre/build.py``. The tests only read the
result, so CI needs no Calibre. The books are generated here (tiny EPUBs by ebooklib, a
PDF by PyMuPDF, a file that only claims to be a MOBI) so the fixture stays small and free.

``before/``: four books — two in the series "Coastal Guides" tagged "sea", one with both an
EPUB and a PDF, one with only a MOBI. ``after/``: a copy of it after ``calibredb
set_metadata`` retitled book 1 and retagged it, and ``calibredb remove`` dropped book 2.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pymupdf
from ebooklib import epub

HERE = Path(__file__).resolve().parent
TIDES = {
    "Spring and neap tides": "A spring tide comes two days after the new and the full moon, "
    "when the sun and the moon pull together; the range between high and low water is then "
    "at its greatest. A neap tide follows the quarter moons and has the smallest range.",
    "Reading a tide table": "Each harbour prints the times and heights of high and low water. "
    "Add the harbour's constant to the times of the standard port, and never anchor on a "
    "falling tide without sounding the depth under the keel.",
}
ORCHARD = {
    "Winter pruning": "Prune apple and pear trees in winter, while they are dormant: cut "
    "crossing branches back to an outward-facing bud and open the centre to the light.",
    "Summer pruning": "Trained fruit such as cordons and espaliers is pruned in late summer, "
    "shortening the new side shoots to three leaves above the basal cluster.",
}
LAMPS = ("A red lamp shows the port side of a vessel and a green lamp its starboard side; a "
         "white masthead light above them means a power-driven vessel under way. Three red "
         "lamps in a vertical line mark a ship constrained by her draught.")


def _epub(path: Path, title: str, author: str, chapters: dict[str, str]) -> Path:
    book = epub.EpubBook()
    book.set_identifier(f"fixture-{path.stem}")
    book.set_title(title)
    book.set_language("en")
    book.add_author(author)
    items = []
    for n, (heading, text) in enumerate(chapters.items(), 1):
        item = epub.EpubHtml(title=heading, file_name=f"c{n}.xhtml", lang="en")
        item.content = f"<html><body><h1>{heading}</h1><p>{text}</p></body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.spine = ["nav", *items]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(path), book)
    return path


def _pdf(path: Path, title: str, pages: list[str]) -> Path:
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 770), text, fontsize=11)
    doc.set_metadata({"title": title})
    doc.save(str(path))
    return path


def _calibredb(library: Path, *args: str) -> str:
    done = subprocess.run(["calibredb", "--with-library", str(library), *args],
                          check=True, capture_output=True, text=True)
    return done.stdout


def _add(library: Path, file: Path, *options: str) -> int:
    out = _calibredb(library, "add", "--duplicates", *options, str(file))
    return int(out.rsplit(":", 1)[-1].strip().split(",")[0])


def build(work: Path) -> None:
    before, after = HERE / "before", HERE / "after"
    for old in (before, after):
        shutil.rmtree(old, ignore_errors=True)
    tides = _add(before, _epub(work / "tides.epub", "Tide Tables of the North", "Mara Quill",
                               TIDES), "--tags", "sea,navigation", "--series", "Coastal Guides",
                 "--series-index", "1", "--isbn", "9780000000019")
    _calibredb(before, "set_metadata", str(tides), "--field", "publisher:Harbour Press",
               "--field", "pubdate:2019-05-01", "--field", "languages:eng")
    _add(before, _pdf(work / "lamps.pdf", "Signal Lamps at Night", [LAMPS]), "--title",
         "Signal Lamps at Night", "--authors", "Mara Quill & Tom Wick", "--tags", "sea",
         "--series", "Coastal Guides", "--series-index", "2")
    orchard = _add(before, _epub(work / "orchard.epub", "Orchard Pruning", "Ivy Stone",
                                 ORCHARD), "--tags", "garden")
    _calibredb(before, "add_format", str(orchard),
               str(_pdf(work / "orchard.pdf", "Orchard Pruning", list(ORCHARD.values()))))
    mobi = work / "almanac.mobi"
    mobi.write_bytes(b"BOOKMOBI" + b"\0" * 600)
    _add(before, mobi, "--title", "The Old Almanac", "--authors", "Anonymous")
    shutil.copytree(before, after)
    _calibredb(after, "set_metadata", str(tides), "--field",
               "title:Tide Tables of the Far North", "--field", "tags:sea,tides")
    _calibredb(after, "remove", "--permanent", "2")
    print(_calibredb(before, "list", "--fields", "title,authors,tags,series,formats"))
    print(_calibredb(after, "list", "--fields", "title,authors,tags,series,formats"))


if __name__ == "__main__":
    if shutil.which("calibredb") is None:
        sys.exit("calibredb not found: install Calibre (Debian: apt-get install calibre)")
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
