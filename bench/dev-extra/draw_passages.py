"""The seeded draws behind the ``-2.py`` and ``-3.py`` book specs (``R-intro``, ``art-of-war``,
``sherlock``).

Each book's text is cut into paragraphs (EPUB: ``<p>``, ``<li>`` and ``<td>`` elements of the
spine; PDF: PyMuPDF text blocks of pages 7-107, the manual without its contents pages and
indexes). Paragraphs shorter than 120 characters (60 in The Art of War's chapters and
endnotes, whose sentences are short), and any paragraph holding the evidence of an earlier
set's question (seed 20261203, the ``-2`` set: ``books-extra.jsonl``; seed 20261204, the
``-3`` set: that and ``books-extra-2.jsonl``), are left out. A pool is cut into equal shares
by characters and one paragraph is drawn from each share, weighted by length, plus two
alternates for a pick with nothing to ask (a code listing, a passage the book repeats word for
word). Pools: R-intro and Sherlock Holmes
one each, 20 shares; The Art of War three - Giles's introduction 6, the thirteen chapters 7,
the endnotes (where Giles quotes the commentators) 7.

Run: ``uv run python bench/dev-extra/draw_passages.py rintro|artofwar|sherlock [SEED]`` (SEED
20261203, the default, or 20261204; needs the dev dependencies pymupdf, ebooklib,
beautifulsoup4); it prints the draws, it writes nothing.
"""

from __future__ import annotations

import json
import random
import re
import sys
import warnings
from pathlib import Path

import pymupdf
from bs4 import BeautifulSoup
from ebooklib import epub

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[2] / "shared" / "bench"
sys.path.insert(0, str(BENCH))
from textnorm import norm  # noqa: E402

# seed -> the question files whose evidence paragraphs that draw leaves out
SEEDS = {20261203: ["books-extra.jsonl"],
         20261204: ["books-extra.jsonl", "books-extra-2.jsonl"]}
BOOKS = {"rintro": "R-intro.pdf", "artofwar": "sun-tzu_the-art-of-war_lionel-giles.epub",
         "sherlock": "arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub"}
FRONT = {"Preface by Lionel Giles", "Sun Wu and His Book", "The Text of Sun Tzǔ",
         "The Commentators", "Appreciations of Sun Tzǔ", "Apologies for War", "Bibliography"}
NOT_STORIES = {"Titlepage", "Imprint", "Colophon", "Uncopyright"}


def epub_paragraphs(path: Path) -> list[tuple[str, str]]:
    """(chapter title, text) of every leaf paragraph, in spine order."""
    warnings.filterwarnings("ignore")
    book = epub.read_epub(str(path))
    titles: dict[str, str] = {}

    def walk(toc: list) -> None:
        for entry in toc:
            link = entry[0] if isinstance(entry, tuple) else entry
            titles.setdefault(link.href.split("#")[0], link.title)
            if isinstance(entry, tuple):
                walk(entry[1])

    walk(book.toc)
    out = []
    for item_id, _ in book.spine:
        item = book.get_item_with_id(item_id)
        soup = BeautifulSoup(item.get_content(), "lxml")
        for el in soup.find_all(["p", "li", "td"]):
            if el.find(["p", "li"]):
                continue
            text = " ".join(el.get_text(" ").split())
            if text:
                out.append((titles.get(item.get_name(), item.get_name()), text))
    return out


def pdf_paragraphs(path: Path) -> list[tuple[int, str]]:
    """(1-based page, text) of every text block."""
    doc = pymupdf.open(str(path))
    return [(i + 1, " ".join(block[4].split())) for i in range(doc.page_count)
            for block in doc[i].get_text("blocks") if block[4].split()]


def pools(book: str) -> list[tuple[str, list, int, int]]:
    """(name, paragraphs, shares, minimum length) per pool of a book."""
    path = BENCH / "books" / BOOKS[book]
    if book == "rintro":
        return [("all", [p for p in pdf_paragraphs(path) if 7 <= p[0] <= 107], 20, 120)]
    paras = epub_paragraphs(path)
    if book == "sherlock":
        return [("all", [p for p in paras if p[0] not in NOT_STORIES], 20, 120)]
    return [("front", [p for p in paras if p[0] in FRONT], 6, 120),
            ("chapters", [p for p in paras if re.match(r"^[IVX]+: ", p[0])], 7, 60),
            ("endnotes", [p for p in paras if p[0] == "Endnotes"], 7, 60)]


def main(book: str, seed: int) -> None:
    extra = [line for name in SEEDS[seed]
             for line in (HERE / name).read_text(encoding="utf-8").splitlines()]
    taken = [norm(q["evidence"]) for q in map(json.loads, extra) if q["evidence"]]
    rng = random.Random(f"{seed}-{book}")
    for name, paras, shares, minimum in pools(book):
        eligible = [(where, text) for where, text in paras if len(text) >= minimum
                    and not any(t in norm(text) for t in taken)]
        total = sum(len(text) for _, text in eligible)
        strata: list[list[tuple]] = [[] for _ in range(shares)]
        pos = 0
        for where, text in eligible:
            strata[min(shares - 1, pos * shares // total)].append((where, text))
            pos += len(text)
        for i, stratum in enumerate(strata):
            picks = rng.choices(range(len(stratum)), weights=[len(t) for _, t in stratum], k=3)
            print(f"=== {book} {name} stratum {i + 1}/{shares}")
            for j, k in enumerate(picks):
                where, text = stratum[k]
                print(f"  [{'pick' if j == 0 else f'alt{j}'}] ({where}) {text[:1200]}")


if __name__ == "__main__":
    seeds = "|".join(map(str, SEEDS))
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in BOOKS or (
            len(sys.argv) == 3 and sys.argv[2] not in seeds.split("|")):
        raise SystemExit(f"usage: draw_passages.py {'|'.join(BOOKS)} [{seeds}]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 20261203)
