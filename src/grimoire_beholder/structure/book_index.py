"""A book's printed index as data: its entries with printed pages resolved to physical ones.

The index prints page *labels* ("22", "xii"); citations and chunks use physical pages. With
the PDF's page labels the mapping is exact. Without labels (many PDFs have none) the offset
between printed and physical numbers is estimated from the book itself: for each candidate
offset, how many entries' terms actually occur on the page they point at; the offset is
used only when it clearly explains the entries, otherwise the pages stay unresolved (shown
printed only) rather than pointing somewhere wrong. EPUB and Markdown have no printed
pages: their entries keep the printed numbers only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from grimoire_beholder.parse.backindex import IndexEntry, parse_index
from grimoire_beholder.text import normalize_term

MAX_OFFSET = 60  # physical − printed, for books without page labels
_MIN_CONFIRMED = 5
_MIN_SHARE = 0.3
_CHECKED = 200  # entries tried when estimating an offset


@dataclass(frozen=True)
class ResolvedEntry:
    """One term and locator (or a see-only entry), ready to store."""

    term: str
    norm: str
    parent: str | None
    printed: str | None
    page_start: int | None
    page_end: int | None
    see: str
    spread: float = 0.0  # share of the book's pages whose text holds the term


class _Spread:
    """How widespread a term is in the book: the share of pages that mention it.

    A term on most pages ("data" in a statistics manual) says little about where a query
    should look; the index pointing at page 22 for it is no evidence. Pages per word are
    indexed once, so each term costs a set intersection and a few substring checks.
    """

    def __init__(self, page_texts: Mapping[int, str]) -> None:
        self._texts = page_texts
        self._pages: dict[str, set[int]] = {}
        for page, text in page_texts.items():
            for word in set(text.split()):
                self._pages.setdefault(word, set()).add(page)

    def __call__(self, norm: str) -> float:
        words = norm.split()
        if not words or not self._texts:
            return 0.0
        candidates = set.intersection(*(self._pages.get(w, set()) for w in words))
        hits = sum(1 for page in candidates if f" {norm} " in self._texts[page])
        return hits / len(self._texts)


def _label_map(labels: Mapping[int, str]) -> dict[str, list[int]]:
    by_label: dict[str, list[int]] = {}
    for physical in sorted(labels):
        by_label.setdefault(labels[physical].strip().lower(), []).append(physical)
    return by_label


def _mentions(page_texts: Mapping[int, str], page: int, norm: str) -> bool:
    text = page_texts.get(page)
    return bool(text) and bool(norm) and f" {norm} " in (text or "")


def _estimate_offset(entries: list[IndexEntry], page_texts: Mapping[int, str]) -> int | None:
    """physical − printed that makes the most terms occur on their pages, if convincing."""
    checks = [(normalize_term(e.term), int(first)) for e in entries[:_CHECKED]
              for first, _ in e.pages[:3] if first.isdigit() and len(e.term) >= 3]
    if len(checks) < _MIN_CONFIRMED:
        return None
    best, best_hits = None, 0
    for offset in range(-5, MAX_OFFSET + 1):
        hits = sum(1 for norm, page in checks if _mentions(page_texts, page + offset, norm))
        if hits > best_hits:
            best, best_hits = offset, hits
    if best_hits >= _MIN_CONFIRMED and best_hits >= _MIN_SHARE * len(checks):
        return best
    return None


Resolver = Callable[[str, str], "int | None"]


def _resolver(entries: list[IndexEntry], labels: Mapping[int, str],
              page_texts: Mapping[int, str], paged: bool) -> Resolver:
    """A function printed label → physical page (or None)."""
    if not paged:
        return lambda label, norm: None
    if labels:
        by_label = _label_map(labels)

        def from_labels(label: str, norm: str) -> int | None:
            pages = by_label.get(label.lower(), [])
            confirmed = [p for p in pages if _mentions(page_texts, p, norm)]
            best = confirmed or pages
            return best[0] if best else None

        return from_labels
    offset = _estimate_offset(entries, page_texts)
    if offset is None:
        return lambda label, norm: None
    last = max(page_texts, default=0)

    def shifted(label: str, norm: str) -> int | None:
        if not label.isdigit():
            return None
        page = int(label) + offset
        return page if 1 <= page <= last else None  # not past the book's end

    return shifted


def resolve_entries(index_texts: Iterable[str], labels: Mapping[int, str],
                    page_texts: Mapping[int, str], paged: bool,
                    back_pages: Collection[int] = ()) -> list[ResolvedEntry]:
    """Every entry of the index sections, one per locator, pages resolved where possible.

    ``page_texts`` maps a physical page to its normalised text (``normalize_term`` of it);
    ``paged`` is False for formats without printed pages (EPUB, Markdown, text);
    ``back_pages`` (contents, index … pages) do not count in a term's spread.
    """
    entries = [e for text in index_texts for e in parse_index(text)]
    resolve = _resolver(entries, labels, page_texts, paged)
    spread_of = _Spread({p: t for p, t in page_texts.items() if p not in set(back_pages)})
    out: list[ResolvedEntry] = []
    for entry in entries:
        norm = normalize_term(f"{entry.parent} {entry.term}" if entry.parent else entry.term)
        own = normalize_term(entry.term)
        see = "; ".join(entry.see)
        spread = round(spread_of(own), 4)
        if not entry.pages:
            out.append(ResolvedEntry(entry.term, norm, entry.parent, None, None, None, see,
                                     spread))
        for first, last in entry.pages:
            start = resolve(first, own)
            end = resolve(last, own) if last != first else start
            if start is not None and (end is None or end < start):
                end = start
            printed = first if first == last else f"{first}–{last}"
            out.append(ResolvedEntry(entry.term, norm, entry.parent, printed, start,
                                     end if start is not None else None, see, spread))
    return out


def page_texts(blocks: Iterable[tuple[int | None, str]]) -> dict[int, str]:
    """Physical page → its normalised text, from (page, text) pieces in reading order."""
    pieces: dict[int, list[str]] = {}
    for page, text in blocks:
        if page is not None:
            pieces.setdefault(page, []).append(text)
    return {page: " " + normalize_term(" ".join(parts)) + " " for page, parts in pieces.items()}


def pages_of(spans: Iterable[tuple[int | None, int | None]]) -> set[int]:
    """Every page of some (first, last) spans; spans with an unknown end are skipped."""
    return {page for first, last in spans if first is not None and last is not None
            for page in range(first, last + 1)}
