"""PDF parsing of the real books of the shared bench: the structure follows each book's
outline and page labels, no text is lost or doubled, and the R-data questions' evidence sits
at its gold location.

Each test is skipped cleanly when its bench book is not present.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.parse.document import ParseOptions
from grimoire_beholder.parse.pdf import parse_pdf
from helpers import BENCH
from parse_helpers import all_blocks, all_text


def norm(text: str) -> str:
    """Same normalisation as the bench's textnorm.norm (NFKC, lowercase, non-word → space)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\W_]+", " ", text).strip()


REAL = ["books/R-intro.pdf", "books/live-manual.en.pdf", "books-dev/R-data.pdf"]
# The live manual's outline is the longest of the bench books (tens of seconds to parse).
REAL_TIMED = [pytest.param(rel, marks=pytest.mark.slow) if "live-manual" in rel else rel
              for rel in REAL]


def bench_file(rel: str) -> Path:
    path = BENCH / rel
    if not path.exists():
        pytest.skip(f"bench file {rel} not available")
    return path


@pytest.mark.parametrize("rel", REAL_TIMED)
def test_real_book_structure_follows_the_outline(rel: str) -> None:
    path = bench_file(rel)
    book = parse_pdf(path)
    doc = pymupdf.open(path)
    toc = doc.get_toc()
    chapters = [c for c in book.chapters if c.title != "Front matter"]
    assert [(c.title, c.anchor_page) for c in chapters] == [
        (t.strip(), p) for lvl, t, p in toc if lvl == 1
    ]
    titled = [(s.title, s.anchor_page) for c in chapters for s in c.sections if s.title]
    assert titled == [(t.strip(), p) for lvl, t, p in toc if lvl > 1]
    assert book.page_labels == {i + 1: doc[i].get_label() for i in range(doc.page_count)}
    assert book.page_labels[1] in ("i", "T-1")


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
def test_real_book_breadcrumbs_and_labels() -> None:
    book = parse_pdf(bench_file("books/R-intro.pdf"))
    assert book.page_labels[11] == "5"
    book = parse_pdf(bench_file("books-dev/R-data.pdf"))
    chapter = next(c for c in book.chapters if c.title == "4 Relational databases")
    sql = next(s for s in chapter.sections if s.title == "SQL queries")
    assert sql.path == ["Overview of RDBMSs", "SQL queries"]


def margin_words(page: pymupdf.Page) -> Counter[str]:
    """Words of lines in the top/bottom tenth of a page: the only ones allowed to vanish."""
    words: Counter[str] = Counter()
    height = page.rect.height
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            middle = (line["bbox"][1] + line["bbox"][3]) / 2
            if middle < 0.1 * height or middle > 0.9 * height:
                words.update(norm("".join(s["text"] for s in line["spans"])).split())
    return words


@pytest.mark.slow  # big or real books
@pytest.mark.parametrize("rel", REAL)
def test_real_book_loses_and_doubles_no_text(rel: str) -> None:
    path = bench_file(rel)
    book = parse_pdf(path, ParseOptions(ocr="off"))  # the text layer alone, word for word
    doc = pymupdf.open(path)
    page_words: Counter[str] = Counter()
    margins: Counter[str] = Counter()
    for page in doc:
        # a word hyphenated at a line break counts as the whole word, as the parser joins it
        text = re.sub(r"([^\W\d_])-\n([a-z])", r"\1\2", page.get_text())
        page_words.update(norm(text).split())
        margins += margin_words(page)
    block_words = Counter(norm(all_text(book)).split())
    extra = block_words - page_words  # only words rejoined across a page break
    missing = page_words - block_words
    # a chapter lead-in that is only the chapter's heading is dropped; its title keeps it
    titles = Counter(w for lvl, t, _ in doc.get_toc() if lvl == 1 for w in norm(t).split())
    unexplained = missing - margins - titles  # lost body text beyond rejoined-word pieces
    total = sum(page_words.values())
    assert sum(extra.values()) <= 0.001 * total + 5, extra.most_common(10)
    assert sum(unexplained.values()) <= 2 * sum(extra.values()), unexplained.most_common(10)
    # the running headers and page numbers really are gone
    assert not [b.text for b in all_blocks(book) if re.fullmatch(r"\d+", b.text)]
    assert not [b.text for b in all_blocks(book) if re.match(r"Chapter \d+: ", b.text)]


def test_r_data_questions_find_evidence_at_the_gold_location() -> None:
    book = parse_pdf(bench_file("books-dev/R-data.pdf"))
    questions = [
        json.loads(line)
        for line in (BENCH / "books-dev" / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    wanted = [q for q in questions if q["id"].startswith("bk-dev-rdata") and q["answerable"]]
    assert len(wanted) == 23
    misses = []
    for q in wanted:
        evidence = norm(q["evidence"])
        # text before a chapter's first section is the untitled lead-in; gold names the chapter
        section = "" if q["gold_section"] == q["gold_chapter"] else q["gold_section"]
        places = [
            (ch.title, s.title, b.page, b.last_page)
            for ch in book.chapters
            for s in ch.sections
            for b in s.blocks
            if evidence in norm(b.text)
        ]
        ok = [
            p
            for p in places
            if p[:2] == (q["gold_chapter"], section)
            and p[2] is not None
            and p[3] is not None
            and p[2] <= q["gold_page"] <= p[3]
        ]
        if len(places) != 1 or not ok:
            misses.append((q["id"], places))
    assert misses == [], f"{23 - len(misses)}/23 at the gold location"
