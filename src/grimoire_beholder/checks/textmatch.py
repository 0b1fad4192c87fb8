"""Finding re-typed text in a book's own text: a comparison skeleton that maps back to the
original, fuzzy alignment on it, and a word-level account of what differs.

Why a skeleton: a quotation copied into an essay differs from the book in ways that carry no
meaning — line breaks and spacing, words hyphenated at a line end, curly or straight quotes,
en/em dashes or hyphens, ligatures (``ﬁ``), accents dropped, case. Folding every character
(NFKD, combining marks dropped, casefold) and keeping only letters and digits makes all of
those equal, so they never count as differences. Each skeleton character remembers the index
of the original character it came from, so a match maps back to exact offsets in the book.

What is left to fuzzy alignment is what changes the words: omissions (marked with an
ellipsis or not), a changed or added word. An ellipsis splits the quotation into pieces that
must appear in order with at most :data:`MAX_GAP` skeleton characters left out between them;
the left-out text is not counted against the similarity. Alignment uses rapidfuzz (C++,
bit-parallel): a rough window from ``partial_ratio_alignment`` (of the middle :data:`PROBE`
characters of a longer piece, so the cost stays linear in the window), then the LCS
alignment inside it gives the exact span. Scattered one- or two-character agreements are ignored.

Leaf module: imports nothing of the package (rapidfuzz lazily).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field

MAX_GAP = 2_000  # skeleton characters an ellipsis may stand for
MIN_BLOCK = 3  # shorter runs of agreement are coincidence, not alignment
MIN_EDGE_BLOCK = 6  # ...and at the ends of a span, shorter runs are trimmed off
MIN_FUZZY = 12  # pieces shorter than this must match exactly
PROBE = 400  # skeleton characters of a longer piece that find its rough window
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_ELLIPSIS = re.compile(r"\[\s*(?:…|\.\s*\.\s*\.)\s*\]|…|\.\s*\.\s*\.")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Skeleton:
    """Folded letters and digits of a text, with each one's index in the original."""

    text: str
    offsets: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that skeleton ``[start, end)`` came from."""
        return self.offsets[start], self.offsets[end - 1] + 1


def fold(text: str) -> str:
    """Just the skeleton string of ``text`` (see :func:`skeleton`)."""
    return skeleton(text).text


def skeleton(text: str) -> Skeleton:
    """Letters and digits of ``text``, folded so typography and case never differ."""
    if text.isascii():
        offsets = tuple(m.start() for m in _ASCII_ALNUM.finditer(text))
        return Skeleton("".join(text[i] for i in offsets).lower(), offsets)
    chars: list[str] = []
    where: list[int] = []
    for index, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                chars.append(ch.lower())
                where.append(index)
            continue
        for part in unicodedata.normalize("NFKD", ch):
            if unicodedata.combining(part):
                continue
            for folded in part.casefold():
                if folded.isalnum():
                    chars.append(folded)
                    where.append(index)
    return Skeleton("".join(chars), tuple(where))


def quote_pieces(quote: str) -> list[str]:
    """The parts of a quotation between its ellipses (``...``, ``…``, ``[…]``), non-empty."""
    return [p for p in _ELLIPSIS.split(quote) if fold(p)]


@dataclass(frozen=True)
class Alignment:
    """Where the pieces of a quotation sit in a skeleton, and how well they agree.

    ``spans`` holds one ``(start, end)`` per piece, in the haystack skeleton. ``similarity``
    is 2·agreeing characters / (piece characters + span characters), over the pieces only:
    text an ellipsis stands for does not count.
    """

    spans: tuple[tuple[int, int], ...]
    similarity: float
    agree: int  # skeleton characters that agree

    @property
    def start(self) -> int:
        return self.spans[0][0]

    @property
    def end(self) -> int:
        return self.spans[-1][1]


def _locate(piece: str, hay: str, *, last: bool = False) -> tuple[int, int, int] | None:
    """(start, end, agreeing chars) of the best place for ``piece`` in ``hay``, or None.

    An exact occurrence wins (the first, or with ``last`` the last one).
    """
    if not piece or not hay:
        return None
    exact = hay.rfind(piece) if last else hay.find(piece)
    if exact >= 0:
        return exact, exact + len(piece), len(piece)
    if len(piece) < MIN_FUZZY:
        return None
    from rapidfuzz import fuzz
    from rapidfuzz.distance import LCSseq

    lo, hi = 0, len(hay)
    if len(piece) < len(hay):
        # partial_ratio costs len(hay)·len(piece)²/64, so a long piece is placed by its
        # middle PROBE characters, and the window reaches as far as the rest of it can.
        before = max(0, (len(piece) - PROBE) // 2)
        probe = piece[before:before + PROBE]
        rough = fuzz.partial_ratio_alignment(probe, hay)
        if rough is None:
            return None
        after = len(piece) - before - len(probe)
        slack = len(piece) // 4 + 8
        lo = max(0, rough.dest_start - before - slack)
        hi = min(len(hay), rough.dest_end + after + slack)
    window = hay[lo:hi]
    blocks = [op for op in LCSseq.opcodes(piece, window)
              if op.tag == "equal" and op.dest_end - op.dest_start >= MIN_BLOCK]
    while len(blocks) > 1 and blocks[0].dest_end - blocks[0].dest_start < MIN_EDGE_BLOCK:
        blocks.pop(0)  # a stray agreement before the passage proper
    while len(blocks) > 1 and blocks[-1].dest_end - blocks[-1].dest_start < MIN_EDGE_BLOCK:
        blocks.pop()
    if not blocks:
        return None
    agree = sum(op.dest_end - op.dest_start for op in blocks)
    # LCS spreads a piece's first and last letters over the slack around the passage, so
    # the ends are walked outwards from the solid blocks instead.
    head, tail = blocks[0], blocks[-1]
    _, back, back_agree = _walk(piece[:head.src_start][::-1], window[:head.dest_start][::-1])
    _, on, on_agree = _walk(piece[tail.src_end:], window[tail.dest_end:])
    return lo + head.dest_start - back, lo + tail.dest_end + on, agree + back_agree + on_agree


def _walk(piece: str, hay: str) -> tuple[int, int, int]:
    """How far ``piece`` and ``hay`` agree from their starts: (piece chars, hay chars,
    agreeing chars). One slipped character (changed, extra or missing) is stepped over when
    the next :data:`MIN_BLOCK` agree again."""
    i = j = agree = 0
    while i < len(piece) and j < len(hay):
        if piece[i] == hay[j]:
            i, j, agree = i + 1, j + 1, agree + 1
            continue
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            rest = piece[i + di:i + di + MIN_BLOCK]
            if rest == hay[j + dj:j + dj + len(rest)] and (rest or di):
                i, j = i + di, j + dj
                break
        else:
            break
    return i, j, agree


def align(pieces: list[str], hay: str) -> Alignment | None:
    """Align the skeletons of a quotation's pieces, in order, within ``hay`` (a skeleton).

    The longest piece is placed first, anywhere; the others follow it (or precede it) within
    :data:`MAX_GAP` characters each, nearest first.
    """
    pieces = [p for p in pieces if p]
    if not pieces:
        return None
    anchor = max(range(len(pieces)), key=lambda i: len(pieces[i]))
    found = _locate(pieces[anchor], hay)
    if found is None:
        return None
    placed: dict[int, tuple[int, int, int]] = {anchor: found}
    for i in range(anchor + 1, len(pieces)):
        prev_end = placed[i - 1][1]
        stop = min(len(hay), prev_end + len(pieces[i]) + MAX_GAP)
        hit = _locate(pieces[i], hay[prev_end:stop])
        if hit is None:
            return None
        placed[i] = (prev_end + hit[0], prev_end + hit[1], hit[2])
    for i in range(anchor - 1, -1, -1):
        next_start = placed[i + 1][0]
        begin = max(0, next_start - len(pieces[i]) - MAX_GAP)
        hit = _locate(pieces[i], hay[begin:next_start], last=True)
        if hit is None:
            return None
        placed[i] = (begin + hit[0], begin + hit[1], hit[2])
    spans = tuple((placed[i][0], placed[i][1]) for i in range(len(pieces)))
    agree = sum(placed[i][2] for i in range(len(pieces)))
    total = sum(len(p) for p in pieces) + sum(end - start for start, end in spans)
    return Alignment(spans, 2 * agree / total if total else 0.0, agree)


@dataclass
class Differences:
    """What separates a quotation from the book's text, word by word (typography aside)."""

    left_out: list[str] = field(default_factory=list)  # in the book, not in the quotation
    added: list[str] = field(default_factory=list)  # in the quotation, not in the book
    changed: list[tuple[str, str]] = field(default_factory=list)  # (book, quotation)

    def describe(self, limit: int = 8) -> list[str]:
        """One readable line per difference, at most ``limit`` (plus a count of the rest)."""
        lines = [f"the book has “{book}” where the quotation has “{quote}”"
                 for book, quote in self.changed]
        lines += [f"the quotation leaves out “{words}”" for words in self.left_out]
        lines += [f"the quotation adds “{words}”" for words in self.added]
        more = len(lines) - limit
        return lines[:limit] + ([f"… and {more} more difference(s)"] if more > 0 else [])

    def __bool__(self) -> bool:
        return bool(self.left_out or self.added or self.changed)


def word_differences(book: str, quote: str, into: Differences | None = None) -> Differences:
    """Word-level differences between the book's text and the quotation.

    Words are compared by their skeletons, and a run whose skeletons join to the same
    letters on both sides ("hyphen-ation" / "hyphenation") is typography, not a difference.
    """
    out = into if into is not None else Differences()
    book_words = _WORD.findall(book)
    quote_words = _WORD.findall(quote)
    book_keys = [fold(w) for w in book_words]
    quote_keys = [fold(w) for w in quote_words]
    matcher = difflib.SequenceMatcher(None, book_keys, quote_keys, autojunk=False)
    for tag, b0, b1, q0, q1 in matcher.get_opcodes():
        if tag == "equal" or "".join(book_keys[b0:b1]) == "".join(quote_keys[q0:q1]):
            continue
        in_book, in_quote = " ".join(book_words[b0:b1]), " ".join(quote_words[q0:q1])
        if tag == "delete":
            out.left_out.append(in_book)
        elif tag == "insert":
            out.added.append(in_quote)
        else:
            out.changed.append((in_book, in_quote))
    return out
