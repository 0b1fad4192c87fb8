"""A Calibre library made by ``calibredb`` from the bench's books: ingest, then sync after
a metadata edit and a removal. Also how long the hostile inputs of the HTML and Word
parsers take (100k nested tags, a zip-bomb ``.docx``).

Needs Calibre's ``calibredb`` (Debian: ``apt-get install calibre``) and ``../shared/bench``.
Runs on the configured default models (embedded MiniLM, no LLM); model calls are counted
by wrapping the embedder. Prints a markdown table.

    uv run python bench/sources_bench.py [--embedding embedded|fake]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sync_bench import open_library

BOOKS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "books"
ADDED = [("sun-tzu_the-art-of-war_lionel-giles.epub", "strategy,classics"),
         ("arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub", "fiction,classics"),
         ("live-manual.en.pdf", "linux")]


def calibredb(library: Path, *args: str) -> None:
    subprocess.run(["calibredb", "--with-library", str(library), *args], check=True,
                   capture_output=True)


def hostile(tmp: Path) -> list[tuple[str, float]]:
    """Seconds to parse 100k nested tags, and to refuse a 64 MB zip bomb named .docx."""
    from grimoire_beholder.errors import InputFileError
    from grimoire_beholder.parse import parse_file

    deep = tmp / "deep.html"
    deep.write_text("<html><body>" + "<div>" * 100_000 + "<p>buried</p>" + "</div>" * 100_000
                    + "</body></html>")
    started = time.perf_counter()
    parse_file(deep)
    rows = [("parse an HTML page of 100k nested tags", time.perf_counter() - started)]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("[Content_Types].xml", "<Types/>")
        bomb.writestr("word/document.xml", b"\0" * (64 * 1024 * 1024))
    (tmp / "bomb.docx").write_bytes(out.getvalue())
    started = time.perf_counter()
    with contextlib.suppress(InputFileError):
        parse_file(tmp / "bomb.docx")
    rows.append(("refuse a 64 MB zip bomb named .docx", time.perf_counter() - started))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedding", default="embedded", choices=("embedded", "fake"))
    args = parser.parse_args()
    if shutil.which("calibredb") is None or not BOOKS.is_dir():
        sys.exit("needs calibredb and ../shared/bench/books")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder = tmp / "Calibre Library"
        for name, tags in ADDED:
            calibredb(folder, "add", "--tags", tags, str(BOOKS / name))
        lib, counter = open_library(tmp / "lib", args.embedding)
        rows: list[tuple[str, int, float]] = []
        with lib:
            started = time.perf_counter()
            lib.ingest_folder(folder)
            rows.append(("ingest the library (3 books)", counter.documents,
                         time.perf_counter() - started))
            calibredb(folder, "set_metadata", "1", "--field", "title:The Art of War (Giles)",
                      "--field", "tags:strategy")
            calibredb(folder, "remove", "--permanent", "3")
            before = counter.documents
            started = time.perf_counter()
            lib.sync()
            rows.append(("sync after a retitle and a removal", counter.documents - before,
                         time.perf_counter() - started))
        print("| run | chunks embedded | wall time |\n| --- | ---: | ---: |")
        for name, embedded, seconds in rows:
            print(f"| {name} | {embedded:,} | {seconds:.2f} s |")
        for name, seconds in hostile(tmp):
            print(f"| {name} | — | {seconds:.2f} s |")


if __name__ == "__main__":
    main()
