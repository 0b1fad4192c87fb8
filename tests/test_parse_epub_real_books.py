"""EPUB parsing of the real books of the shared bench: every TOC entry and all the text kept,
and the calibre questions' evidence in its gold chapter and section.

Run when the shared bench books are present and skipped cleanly otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from collections import Counter
from collections.abc import Callable

import pytest
from ebooklib import epub

from grimoire_beholder.parse.epub import parse_epub
from helpers import BENCH
from parse_helpers import all_blocks

REAL = {
    "books/arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub": {
        "skip": {"text/imprint.xhtml", "text/colophon.xhtml", "text/uncopyright.xhtml"},
        "chapters": 13,
    },
    "books/sun-tzu_the-art-of-war_lionel-giles.epub": {
        "skip": {"text/imprint.xhtml", "text/colophon.xhtml", "text/uncopyright.xhtml"},
        "chapters": 24,
    },
    "books/ubuntu-packaging-guide.epub": {"skip": set(), "chapters": 17},
    "books-dev/calibre-quick-start-guide.epub": {
        "skip": {"text/titlepage.xhtml", "text/toc.xhtml"},
        "chapters": 12,
    },
}
needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="shared/bench not present")


def _textnorm() -> Callable[[str], str]:
    spec = importlib.util.spec_from_file_location("bench_textnorm", BENCH / "textnorm.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.norm  # type: ignore[no-any-return]


def _squash(norm: Callable[[str], str], text: str) -> str:
    return "".join(norm(text).split())


@needs_bench
@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_books_keep_every_toc_entry_and_all_text(rel: str) -> None:
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    norm = _textnorm()
    path = BENCH / rel
    book = parse_epub(path)
    expect = REAL[rel]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = epub.read_epub(str(path))

    # Every TOC entry (except those of skipped boilerplate pages) is a chapter or section.
    skip_docs: set[str] = expect["skip"]  # type: ignore[assignment]
    toc: list[str] = []

    def flat(nodes: list[object]) -> None:
        for n in nodes:
            node, kids = n if isinstance(n, tuple) else (n, [])
            if node.href.split("#")[0] not in skip_docs and not node.href.endswith("toc.xhtml"):
                toc.append(" ".join(node.title.split()))
            flat(kids)

    flat(ref.toc)
    got = [c.title for c in book.chapters] + [
        s.title for c in book.chapters for s in c.sections if s.title
    ]
    assert Counter(got) == Counter(toc)
    assert len(book.chapters) == expect["chapters"]

    # No text lost or doubled: the linear spine documents' body text, in order, equals the
    # blocks' text (compared on word characters only), minus navigation chrome and note
    # reference markers.
    parts = []
    for idref, linear in ref.spine:
        item = ref.get_item_with_id(idref)
        if linear == "no" or item.get_name() in skip_docs:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            soup = BeautifulSoup(item.get_content(), "lxml")
        body = soup.body
        assert body is not None
        for el in body.find_all(["script", "style", "svg", "noscript"]):
            el.decompose()
        for el in body.find_all(attrs={"role": ["navigation", "contentinfo"]}):
            el.decompose()
        # A note reference's marker ("409") is left out of the text; its note is kept.
        for el in [*body.find_all(attrs={"epub:type": "noteref"}),
                   *body.find_all(attrs={"role": "doc-noteref"})]:
            el.decompose()
        parts.append(body.get_text(" "))
    assert _squash(norm, " ".join(parts)) == _squash(
        norm, " ".join(b.text for b in all_blocks(book))
    )
    pages = [b.page or 0 for b in all_blocks(book)]
    assert pages == sorted(pages) and pages[0] == 1


@needs_bench
def test_calibre_questions_land_in_their_gold_chapter_and_section() -> None:
    norm = _textnorm()
    book = parse_epub(BENCH / "books-dev" / "calibre-quick-start-guide.epub")
    located = [
        (ch.title, s.title, norm(b.text))
        for ch in book.chapters
        for s in ch.sections
        for b in s.blocks
    ]
    rows = [
        json.loads(x) for x in (BENCH / "books-dev" / "questions.jsonl").read_text().splitlines()
    ]
    qs = [q for q in rows if q["id"].startswith("bk-dev-calibre") and q["answerable"]]
    assert len(qs) == 23
    misses = []
    for q in qs:
        hits = [(c, s) for c, s, t in located if norm(q["evidence"]) in t]
        want_section = q["gold_section"]
        ok = len(hits) == 1 and hits[0][0] == q["gold_chapter"]
        ok = ok and (want_section is None or hits[0][1] == want_section)
        if not ok:
            misses.append((q["id"], hits, q["gold_chapter"], want_section))
    print(f"calibre gold locations matched: {len(qs) - len(misses)}/{len(qs)}")
    assert not misses
