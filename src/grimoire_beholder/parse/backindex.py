"""Reading a printed back-of-book index: ``term, 12, 45–47``, sub-entries, "see also".

A book's index is its author's own map from terms to pages, so the library keeps it as data
(``Library.lookup``) and as a search signal, instead of indexing it as noisy text. Two
layouts cover what PDF text extraction gives for typeset indexes:

* **dot leaders** (Texinfo, many LaTeX and word-processor styles): ``odbcConnect. . . . 22``.
  Extraction often runs several entries (and both columns) into one line, so entries are
  found anywhere in the text, each ending at its page numbers;
* **comma lists** (makeindex, most trade books): one entry per line, ``Arrays, 20, 24–26``.

Sub-entries: a head line without page numbers (``Matrices``) followed by lines starting
in lower case (``multiplication, 24``) makes those its sub-entries; lines indented deeper
than the head are sub-entries too when the text kept the indentation. ``see``/``see also``
references are kept with their entry. Page numbers are the *printed* ones (arabic or roman);
mapping them to physical pages is the caller's job (it knows the page labels).

The same scanners measure the *shape* of a text — how much of it is entries ending in page
numbers, and whether those numbers rise like a table of contents — which is what
``structure.roles`` uses to tell an index or a contents page from body text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# Arabic, or a well-formed roman numeral up to cccxcix: "civil", "xml" and "mix" in
# "War, civil, 45" are words of the term, not front-matter pages.
_NUMBER = r"(?:\d{1,4}|(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
# "45ff", "45 f.", "12n", "9n3": and the following pages, or a footnote on that page.
_SUFFIX = r"(?:(?<=\d)\s?ff?\.?|(?<=\d)nn?\d{0,3})?"
_LOCATOR = rf"{_NUMBER}(?:\s*[–—-]\s*{_NUMBER})?{_SUFFIX}"
_LOCATORS = rf"{_LOCATOR}(?:\s*,\s*{_LOCATOR})*"
# ". . . . 12, 45": a dot leader and the page numbers after it; the term is the text
# before it, back to the previous entry or the line start (entries may share a line).
_LEADER = re.compile(rf"\s?(?:\.\s?){{3,}}\s*(?P<pages>{_LOCATORS})(?![\w.])")
# "term, 12, 45–47" (optionally followed by "; see also x") as a whole line.
_COMMA_ENTRY = re.compile(
    rf"^(?P<indent>[ \t]*)(?P<term>\S[^\n]*?),\s*(?P<pages>{_LOCATORS})\.?"
    r"(?:[.;,]?\s*\(?(?:[Ss]ee also|[Ss]ee)\s+(?P<see>[^)\n]+)\)?)?\s*$")
_SEE_ONLY = re.compile(
    r"^(?P<indent>[ \t]*)(?P<term>\S[^\n]*?)[.,]?\s+\(?(?:[Ss]ee also|[Ss]ee)\s+"
    r"(?P<see>[^)\n]+)\)?\s*$")
# The same entries run together, as PDF extraction joins the lines of an index column:
# "aberration, 2, 4 concave mirror, 4 converging lens, 2ff". Each ends at its pages.
_RUN_ENTRY = re.compile(rf",\s*(?P<pages>{_LOCATORS})(?=\s|;|$)")
_SEE_CLAUSE = re.compile(r"(?:^|[,;.(]\s*)[Ss]ee\s")
_HEAD = re.compile(r"^(?P<indent>[ \t]*)(?P<term>[^\d\s][^\n]{0,80}?)\s*$")
_RANGE = re.compile(rf"^(?P<a>{_NUMBER})(?:\s*[–—-]\s*(?P<b>{_NUMBER}))?{_SUFFIX}$")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_MIN_TERM_CHARS = 1
_MAX_TERM_CHARS = 120
# A comma-style term is an index heading, not a sentence that ends in a number
# ("The treaty was signed at Westphalia after long negotiations, 1648.").
_MAX_COMMA_TERM_CHARS = 60


@dataclass
class IndexEntry:
    """One entry: its term, its parent's term for a sub-entry, printed page spans, see-refs."""

    term: str
    pages: list[tuple[str, str]] = field(default_factory=list)  # (first, last) printed
    parent: str | None = None
    see: list[str] = field(default_factory=list)


def _spans(pages: str) -> list[tuple[str, str]]:
    out = []
    for part in pages.split(","):
        match = _RANGE.match(part.strip())
        if match:
            first = match.group("a")
            last = match.group("b") or first
            # "45–7" style abbreviations: complete the last number from the first.
            if first.isdigit() and last.isdigit() and len(last) < len(first):
                last = first[: len(first) - len(last)] + last
            out.append((first, last))
    return list(dict.fromkeys(out))  # "3, 3n": one place


def _clean_term(term: str) -> str:
    return re.sub(r"\s+", " ", term).strip().rstrip(" .,;:")


def _leader_matches(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, term, pages) of each dot-leader entry, in one linear pass."""
    found = []
    previous = 0
    for match in _LEADER.finditer(text):
        start = max(previous, text.rfind("\n", 0, match.start()) + 1)
        term = text[start:match.start()]
        previous = match.end()
        if term.strip():
            found.append((start, match.end(), term, match.group("pages")))
    return found


def _run_matches(line: str) -> list[tuple[int, int, str, str]]:
    """(start, end, term, pages) of each comma-style entry on one line, several when the
    lines of a column were run together; a term that is a sentence or holds the rest of a
    "see" clause (its end is not known) is skipped."""
    found = []
    previous = 0
    for match in _RUN_ENTRY.finditer(line):
        term = line[previous:match.start()]
        start, previous = previous, match.end()
        if (term.strip() and len(term.strip()) <= _MAX_COMMA_TERM_CHARS
                and not _SEE_CLAUSE.search(term)):
            found.append((start, match.end(), term, match.group("pages")))
    return found


def _line_matches(line: str) -> list[tuple[int, int, str, str]]:
    """The comma-style entries of one line: several run together, or the line as one."""
    run = _run_matches(line)
    if len(run) > 1:
        return run
    match = _COMMA_ENTRY.match(line)
    if match is None or len(match.group("term").strip()) > _MAX_COMMA_TERM_CHARS:
        return []
    return [(0, len(line), match.group("term"), match.group("pages"))]


def _leader_entries(text: str) -> list[IndexEntry]:
    entries = []
    for _, _, raw, pages in _leader_matches(text):
        term = _clean_term(raw)
        if _MIN_TERM_CHARS <= len(term) <= _MAX_TERM_CHARS:
            entries.append(IndexEntry(term, _spans(pages)))
    return entries


def _comma_entries(text: str) -> list[IndexEntry]:
    entries: list[IndexEntry] = []
    top: tuple[str, int] | None = None  # the latest top-level term and its indentation
    bare_head = False  # whether ``top`` is a line without pages (a head of sub-entries)
    # Where the text kept indentation it alone says what is a sub-entry; otherwise a
    # lower-case line under a head without pages is one.
    indented = any(_COMMA_ENTRY.match(line) and line[:1] in " \t"
                   for line in text.splitlines())
    for number, line in enumerate(_unwrapped(text)):
        run = _run_matches(line)
        if len(run) > 1:  # a column run together: flat entries, no head to carry on
            entries += [IndexEntry(_clean_term(term), _spans(pages)) for _, _, term, pages in run]
            top, bare_head = None, False
            continue
        match = _COMMA_ENTRY.match(line) or _SEE_ONLY.match(line)
        if match is None:
            head = _HEAD.match(line)
            # A letter heading ("A", "B"), a stray line or the section's own title (its
            # first line: "Index") is not a head of sub-entries.
            top = ((_clean_term(head.group("term")), len(head.group("indent")))
                   if head and len(head.group("term").strip()) > 1 and number else None)
            bare_head = top is not None
            continue
        term = _clean_term(match.group("term"))
        if not _MIN_TERM_CHARS <= len(term) <= _MAX_TERM_CHARS:
            continue
        indent = len(match.group("indent"))
        see = match.groupdict().get("see")
        entry = IndexEntry(term, _spans(match.groupdict().get("pages") or ""),
                           see=[_clean_term(s) for s in see.split(";")] if see else [])
        lowered = not indented and bare_head and term[:1].islower()
        if top is not None and (indent > top[1] or lowered):
            entry.parent = top[0]
        else:
            top, bare_head = (term, indent), False
        entries.append(entry)
    return entries


_CONTINUED = re.compile(r"(?:,|\b[Ss]ee(?: also)?)\s*$")


def _unwrapped(text: str) -> list[str]:
    """The non-blank lines, an entry wrapped over two lines joined again: a line ending in
    a comma or "see also" goes on (a lone number after a whole entry is a page marker)."""
    lines: list[str] = []
    for line in (line for line in text.splitlines() if line.strip()):
        if lines and _CONTINUED.search(lines[-1]):
            lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
        else:
            lines.append(line)
    return lines


def parse_index(text: str) -> list[IndexEntry]:
    """The entries of an index section's text, whichever layout it uses (possibly both)."""
    leader = _leader_entries(text)
    comma = _comma_entries(_LEADER.sub("\n", text)) if leader else _comma_entries(text)
    return leader + comma


def roman_value(label: str) -> int | None:
    """``xiv`` → 14; None when ``label`` is not a roman numeral."""
    label = label.lower()
    if not label or any(ch not in _ROMAN for ch in label):
        return None
    total = 0
    for here, after in zip(label, label[1:] + " ", strict=True):
        value = _ROMAN[here]
        total += -value if after != " " and _ROMAN[after] > value else value
    return total


@dataclass(frozen=True)
class Shape:
    """How much of a text reads like index or contents entries."""

    entries: int  # entries ending in page numbers
    covered: float  # share of the text's characters inside those entries
    rising: float  # share of consecutive entries whose first page does not go down
    numbered: float  # share of entries whose term starts with a number ("2.1 Imports")
    ordered: float = 0.0  # share of consecutive terms in alphabetical order (an index's)


def shape(text: str) -> Shape:
    """Entry statistics of ``text`` (see :class:`Shape`); cheap, linear in the text."""
    sample = text[:200_000]
    spans = [m for m in _leader_matches(sample) if len(m[2].strip()) <= _MAX_TERM_CHARS]
    if not spans:
        offset = 0
        for line in sample.splitlines(keepends=True):
            spans += [(offset + a, offset + b, term, pages)
                      for a, b, term, pages in _line_matches(line.rstrip("\n"))]
            offset += len(line)
    letters = _visible(sample) or 1
    covered = sum(_visible(sample[a:b]) for a, b, _, _ in spans)
    firsts = [_first_page(p) for _, _, _, p in spans]
    pairs = [(a, b) for a, b in itertools.pairwise(firsts)
             if a is not None and b is not None]
    rising = _share(b >= a for a, b in pairs)
    numbered = _share(bool(re.match(r"\s*(?:\d|[A-Z](?:\.|\s+\d))", t)) for _, _, t, _ in spans)
    keys = [k for k in (re.sub(r"[\W_]+", "", t).casefold() for _, _, t, _ in spans) if k]
    ordered = _share(a <= b for a, b in itertools.pairwise(keys))
    return Shape(len(spans), min(1.0, covered / letters), rising, numbered, ordered)


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def _visible(text: str) -> int:
    """Characters that are not whitespace."""
    return len("".join(text.split()))


def _first_page(pages: str) -> int | None:
    spans = _spans(pages)
    if not spans:
        return None
    first = spans[0][0]
    return int(first) if first.isdigit() else None
