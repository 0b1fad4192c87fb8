"""A health check per book: can retrieval find each section, and did the book parse well?

* **Reachability** — for each section (an even sample of :data:`MAX_PROBES` in long books)
  a probe is made from its own text, no model needed: its most distinctive sentence (the
  highest mean rarity of its words across the book's sections), at most
  :data:`PROBE_WORDS` words around its rarest word. The probe is searched in the book; the
  section is *reached* when it is among the top :data:`PROBE_TOP_K` hits. Reachability is
  the share reached; the sections nothing finds are listed with their probe.
* **Pages without text** (PDF) — read from the file when it still holds what was ingested:
  pages with no text layer are classed as scans (an image), text drawn as vector outlines
  (many paths, no text) or blank; pages whose text the index lacks are named too. Without
  the file, pages that no chunk covers are reported instead.
* **Suspected parse problems** — near-empty sections, a section holding most of the book,
  chapters that are only page ranges (no outline or headings were found), sections that
  look like a table of contents, garbled encoding (replacement characters, private-use
  glyphs, mojibake), chunks that never got embedded.

The search is passed in (``search(probe, book_id) -> [(chapter_index, section_index)]``), so
this module needs no engine and no models of its own.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from grimoire_beholder.store import text_spans
from grimoire_beholder.store.records import BookRow
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.store.text_spans import SectionHead
from grimoire_beholder.text import STOP_WORDS, WORD_TOKEN, page_ranges

MAX_PROBES = 300
PROBE_WORDS = 16
PROBE_TOP_K = 5
NEAR_EMPTY_WORDS = 5
GIANT_SHARE = 0.6
GIANT_MIN_TOKENS = 3_000
LISTED = 20  # entries per list in a report
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n{2,}")
_PAGE_RANGE_TITLE = re.compile(r"^Pages \d+–\d+$")
_TOC_LINE_END = re.compile(r"(?:\.{3,}|\s)\s*(?:\d{1,4}|[ivxlc]{1,6})\s*$", re.I)
_TOC_TITLE = re.compile(r"\b(contents|table of contents|inhalt|índice|sommaire|indice)\b", re.I)
_GARBLE = re.compile(r"[\ufffd\ue000-\uf8ff\x00-\x08\x0b\x0c\x0e-\x1f]|Ã.|â€")

Search = Callable[[str, int], list[tuple[int, int]]]


@dataclass
class BookHealth:
    """The health report of one book (lists capped at :data:`LISTED` entries)."""

    book_id: int
    slug: str
    name: str
    source_type: str
    sections: int
    probed: int = 0
    reached: int = 0
    unreached: list[dict[str, Any]] = field(default_factory=list)
    near_empty: list[dict[str, Any]] = field(default_factory=list)
    pages_without_text: list[int] = field(default_factory=list)
    page_kinds: dict[str, list[int]] = field(default_factory=dict)
    chunks_not_embedded: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def reachability(self) -> float | None:
        return self.reached / self.probed if self.probed else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reachability"] = (None if self.reachability is None
                               else round(self.reachability, 3))
        out["seconds"] = round(self.seconds, 2)
        return out

    def summary(self) -> dict[str, Any]:
        """What ``book_status`` shows of the last check."""
        return {"checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "reachability": self.to_dict()["reachability"], "probed": self.probed,
                "unreached": self.probed - self.reached,
                "pages_without_text": page_ranges(self.pages_without_text),
                "problems": self.problems[:5]}


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD_TOKEN.findall(text)]


def probe_for(text: str, rarity: dict[str, float]) -> str | None:
    """The section's most distinctive sentence, cut to PROBE_WORDS words around its rarest
    word; None for a section too short to probe."""
    best: tuple[float, list[str]] | None = None
    for sentence in _SENTENCE.split(text):
        words = sentence.split()
        content = {w for w in _words(sentence) if w not in STOP_WORDS}
        if len(words) < 6 or not content:
            continue
        # several rare words beat one: a probe should be specific, not just odd
        score = sum(sorted((rarity.get(w, 0.0) for w in content), reverse=True)[:5])
        if best is None or score > best[0]:
            best = (score, words)
    if best is None:
        return None
    words = best[1]
    rarest = max(range(len(words)), key=lambda i: max(
        (rarity.get(w, 0.0) for w in _words(words[i])), default=0.0))
    start = max(0, min(rarest - PROBE_WORDS // 2, len(words) - PROBE_WORDS))
    return " ".join(words[start:start + PROBE_WORDS])


def _rarity(texts: list[str]) -> dict[str, float]:
    """log(N / document frequency) of every word over the book's sections."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(_words(text)))
    n = max(len(texts), 1)
    return {w: math.log(n / c) + 1e-3 for w, c in df.items()}


def _reach(report: BookHealth, heads: list[SectionHead], texts: list[str],
           search: Search) -> None:
    rarity = _rarity(texts)
    step = max(1, math.ceil(len(heads) / MAX_PROBES))
    for head, text in list(zip(heads, texts, strict=True))[::step]:
        probe = probe_for(text, rarity)
        if probe is None:
            continue
        report.probed += 1
        if (head.chapter_index, head.section_index) in search(probe, report.book_id):
            report.reached += 1
        elif len(report.unreached) < LISTED:
            report.unreached.append({"chapter_index": head.chapter_index,
                                     "section_index": head.section_index,
                                     "section": head.breadcrumb, "probe": probe})


def _looks_like_contents(head: SectionHead, text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    words = text.split()
    if len(words) < 20:
        return False
    numbers = sum(1 for w in words if w.isdigit() or _TOC_LINE_END.fullmatch(" " + w))
    by_lines = len(lines) >= 5 and sum(bool(_TOC_LINE_END.search(ln)) for ln in lines) > len(
        lines) * 0.6
    return by_lines or (numbers / len(words) > 0.2 and (
        bool(_TOC_TITLE.search(head.breadcrumb)) or numbers / len(words) > 0.3))


def _structure(report: BookHealth, heads: list[SectionHead], texts: list[str],
               tokens: list[int], body: list[bool]) -> None:
    """Near-empty sections, a giant section, contents pages left as body text (a section
    whose role says contents or index is ranked as such already), garbled text, no outline."""
    contents, garbled = [], []
    for head, text, is_body in zip(heads, texts, body, strict=True):
        where = f"{head.chapter_index}.{head.section_index} {head.breadcrumb or head.chapter}"
        if len(text.split()) < NEAR_EMPTY_WORDS:
            if len(report.near_empty) < LISTED:
                report.near_empty.append({"chapter_index": head.chapter_index,
                                          "section_index": head.section_index,
                                          "section": head.breadcrumb, "chars": len(text)})
            continue
        if is_body and _looks_like_contents(head, text):
            contents.append(where)
        bad = len(_GARBLE.findall(text))
        if bad >= 5 and bad / max(len(text), 1) > 0.005:
            garbled.append(f"{where} ({bad} garbled characters)")
    total = sum(tokens)
    if total >= GIANT_MIN_TOKENS and tokens and max(tokens) > GIANT_SHARE * total:
        i = tokens.index(max(tokens))
        report.problems.append(
            f"one section holds {max(tokens) * 100 // total}% of the book "
            f"({heads[i].breadcrumb or heads[i].chapter}): its outline may not have mapped")
    chapters = {h.chapter for h in heads}
    if chapters and all(_PAGE_RANGE_TITLE.match(c) for c in chapters):
        report.problems.append("no outline or headings were found: chapters are page ranges")
    if contents:
        report.problems.append("looks like a table of contents or an index, indexed as body text: "
                               + "; ".join(contents[:5]))
    if garbled:
        report.problems.append("garbled text (encoding or font mapping): "
                               + "; ".join(garbled[:5]))
    empty = sum(1 for t in texts if len(t.split()) < NEAR_EMPTY_WORDS)
    if empty and empty >= max(3, len(texts) // 4):
        report.problems.insert(0, f"{empty} of {len(texts)} sections are empty or nearly so")


def _pages(report: BookHealth, book: BookRow, spans: list[tuple[int | None, int | None]]
           ) -> None:
    """Pages without text, classed from the PDF when its file is unchanged."""
    from grimoire_beholder.checks.pages import page_survey, path_if_unchanged

    covered = {p for lo, hi in spans if lo is not None for p in range(lo, (hi or lo) + 1)}
    path = path_if_unchanged(book)
    survey = page_survey(path) if path is not None else {}
    if not survey:
        report.pages_without_text = [p for p in range(1, (book.page_count or 0) + 1)
                                     if p not in covered]
        if report.pages_without_text:
            report.problems.append(f"no indexed text on pages "
                                   f"{page_ranges(report.pages_without_text)}")
        return
    kinds: dict[str, list[int]] = {}
    for page, (kind, words) in sorted(survey.items()):
        if kind != "text":
            kinds.setdefault(kind, []).append(page)
        elif words >= 20 and page not in covered:
            kinds.setdefault("text_not_indexed", []).append(page)
    report.page_kinds = kinds
    report.pages_without_text = sorted(p for k in ("image", "drawing") for p in kinds.get(k, []))
    # A chunk starts or ends only on a page with text, so a page without a text layer that
    # is one of these was read by OCR (a page of OCR'd text always holds a chunk's end).
    ends = {p for span in spans for p in span if p is not None}
    ocr = " (OCR was off or not installed)"
    said = {"image": "scanned pages with no text layer",
            "drawing": "pages whose text is drawn as vector outlines (no text layer)",
            "text_not_indexed": "pages whose text is not in the index"}
    for kind, what in said.items():
        read = [p for p in kinds.get(kind, []) if kind != "text_not_indexed" and p in ends]
        unread = [p for p in kinds.get(kind, []) if p not in read]
        if unread:
            report.problems.append(f"{what}{ocr if kind == 'image' else ''}: "
                                   f"{page_ranges(unread)}")
        if read:
            report.problems.append(f"{what}, read by OCR (check the recognition): "
                                   f"{page_ranges(read)}")


def check_book(conn: Store, book: BookRow, search: Search) -> BookHealth:
    """The full health report of one book (see the module doc)."""
    started = time.perf_counter()
    heads, texts, tokens, body = [], [], [], []
    for head, text, approx, role in text_spans.book_sections(conn, book.id):
        heads.append(head)
        texts.append(text)
        tokens.append(approx)
        body.append(role == "body")
    report = BookHealth(book_id=book.id, slug=book.slug, name=book.name,
                        source_type=book.source_type, sections=len(heads))
    spans = text_spans.book_spans(conn, book.id)
    report.chunks_not_embedded = sum(1 for _, status in spans if status != "embedded")
    if book.source_type == "pdf":
        _pages(report, book, [(s.page_start, s.page_end) for s, _ in spans])
    _structure(report, heads, texts, tokens, body)
    if report.chunks_not_embedded:
        report.problems.append(f"{report.chunks_not_embedded} chunks are not embedded yet: "
                               "run ingest again to finish")
    _reach(report, heads, texts, search)
    reach = report.reachability
    if reach is not None and reach < 0.8:
        report.problems.insert(0, f"retrieval finds only {reach:.0%} of the sections from "
                                  "their own text")
    report.seconds = time.perf_counter() - started
    return report
