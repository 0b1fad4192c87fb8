"""What names a book, and the one place where a reference to a book is read.

A book has two names, and no name can mean two books:

* its **id**, a positive integer the library assigns and never gives to another book, not
  even after this one is deleted (``store.book_rows.insert_book`` keeps a high-water mark);
* its **slug**, a short ascii name (``art-of-war``) that is never all digits: a file
  ``12.md`` becomes ``book-12`` (``unambiguous_slug``), schema migration 3 renamed the
  all-digit slugs of older libraries, and a trigger refuses one in the database itself.

So a reference is read one way only (``parse_book_ref``): an int, or a string of ASCII
digits, is an id; any other string is a slug. The adapters hand what the user or the
model typed to the Library, which reads it here once and passes the resolved id on; an id
the MCP server hands out always means the same book when it comes back, or no book.

A reference that names no book is answered with the books it probably meant
(``near_names``): those whose slug or name holds each word typed (``sherlock`` finds
``the-adventures-of-sherlock-holmes``), else those spelled closely alike; a search filter
that matches no book, with the authors, groups or labels it probably meant (``near_labels``).

Core module: imports nothing but the errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from grimoire_beholder.errors import BookNotFoundError, NotFoundError

MAX_BOOK_ID = 2**63 - 1  # SQLite's largest integer
_DIGITS = re.compile(r"[0-9]+")
_SHOWN_CHARS = 60  # of a reference quoted back in an error message
_WORD = re.compile(r"[^\W_]+")
# How alike a misspelt slug must be to be suggested (difflib's ratio): 0.5 suggested
# "scope, npx, npm" for "nope".
_CLOSE_SPELLING = 0.75
_INSIDE_MIN = 3  # letters a typed word needs to be looked for inside other words
_NAME_CHARS, _NAME_WORDS = 200, 8  # of a filter's text compared with names (near_labels)


def shown(ref: object) -> str:
    """A reference as an error message quotes it: clipped, so a huge one stays one line."""
    text = str(ref)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 1] + "…"


def parse_book_ref(ref: object) -> int | str:
    """The id (an int) or the slug (a str) that ``ref`` names; BookNotFoundError when it
    cannot name a book at all (a bool, an empty string, an id outside 1…2⁶³−1)."""
    if isinstance(ref, bool) or not isinstance(ref, int | str):
        raise BookNotFoundError(f"a book is named by its id or its slug, not {shown(ref)!r}")
    text = str(ref).strip()
    if isinstance(ref, int) or _DIGITS.fullmatch(text):
        # Compare the digits before int(): Python refuses to parse over 4,300 of them.
        if len(text.lstrip("0")) > len(str(MAX_BOOK_ID)) or not 1 <= int(text) <= MAX_BOOK_ID:
            raise BookNotFoundError(
                f"no book has id {shown(text)}: book ids run from 1 to {MAX_BOOK_ID}")
        return int(text)
    if not text:
        raise BookNotFoundError("no book named: give a book's id or slug")
    return text


def unambiguous_slug(slug: str) -> str:
    """``slug``, or ``book-<slug>`` when it is all digits and would read as an id."""
    return f"book-{slug}" if _DIGITS.fullmatch(slug) else slug


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def near_names(ref: str, books: Iterable[tuple[str, str]], limit: int = 3) -> list[str]:
    """The slugs of ``books`` (``(slug, name)`` pairs) that ``ref`` probably meant, best
    first: every word of ``ref`` a word of the slug or name (or the start of one), else
    every word inside them, else a slug spelled closely alike; at most ``limit``."""
    typed = _words(ref)
    if not typed:
        return []
    candidates = [(slug, _words(f"{slug} {name}"), f"{slug} {name}".casefold())
                  for slug, name in books]
    by_word = [slug for slug, words, _ in candidates
               if all(any(w.startswith(t) for w in words) for t in typed)]
    inside = [slug for slug, _, text in candidates  # "sherlock" in "sherlockholmes"
              if slug not in by_word and all(len(t) >= _INSIDE_MIN and t in text
                                             for t in typed)]
    found = (by_word + inside)[:limit]
    if found:
        return found
    import difflib  # only for a name that matches no book

    return difflib.get_close_matches(ref.casefold(), [c[0] for c in candidates], n=limit,
                                     cutoff=_CLOSE_SPELLING)


def near_labels(typed: str, names: Iterable[str], limit: int = 3) -> list[str]:
    """The ``names`` (authors, folder groups, tags …) that ``typed`` probably meant, best
    first: every word typed the start of a word of the name, in any order ("tolkien j"
    finds "J. R. R. Tolkien"), else every word typed spelled closely alike to one of the
    name's ("tolkein"), or the whole name so; at most ``limit``."""
    typed = typed.strip()[:_NAME_CHARS]  # no name is longer: a pasted page is no name
    typed_words = _words(typed)[:_NAME_WORDS]
    if not typed_words:
        return []
    import difflib  # only for a filter that matches nothing

    def alike(a: str, b: str) -> float:
        m = difflib.SequenceMatcher(None, a, b)  # the cheap upper bounds first
        if m.real_quick_ratio() < _CLOSE_SPELLING or m.quick_ratio() < _CLOSE_SPELLING:
            return 0.0
        return m.ratio()

    def closeness(name: str) -> float:
        words = _words(name)
        if words and all(any(w.startswith(t) for w in words) for t in typed_words):
            return 2.0
        by_word = min((max((alike(t, w) for w in words), default=0.0) for t in typed_words),
                      default=0.0)
        return max(by_word, alike(typed.casefold(), name.casefold()))

    scored = sorted(((closeness(n), n) for n in dict.fromkeys(names)),
                    key=lambda pair: -pair[0])
    return [name for score, name in scored if score >= _CLOSE_SPELLING][:limit]


def no_such_book(key: int | str, books: list[tuple[str, str]]) -> BookNotFoundError:
    """The error for a reference naming none of ``books`` ((slug, name) in slug order): the
    closest slugs, or the first five that exist, or that the library is empty."""
    known = [slug for slug, _ in books]
    what = f"no book has id {key}" if isinstance(key, int) else f"no book {shown(key)!r}"
    if not known:
        return BookNotFoundError(f"{what}: the library is empty")
    close = [] if isinstance(key, int) else near_names(key, books)
    listed = close or known[:5]
    more = "" if close or len(known) <= 5 else f" and {len(known) - 5} more"
    label = "did you mean" if close else "books"
    return BookNotFoundError(f"{what}; {label}: {', '.join(listed)}{more}")


def check_section_exists(slug: str, section_counts: list[int], chapter_index: int,
                         section_index: int) -> None:
    """Raise NotFoundError saying which indices exist unless ``section_index`` of
    ``chapter_index`` is a section of the book ``slug`` (``section_counts``: sections per
    chapter, in chapter order)."""
    if not 0 <= chapter_index < len(section_counts):
        raise NotFoundError(
            f"book '{slug}' has chapters 0–{len(section_counts) - 1}, not {chapter_index}")
    if not section_counts[chapter_index]:  # a heading straight before the next chapter's
        raise NotFoundError(f"chapter {chapter_index} of '{slug}' has no sections (it is a "
                            f"heading only), so no section {section_index}")
    if not 0 <= section_index < section_counts[chapter_index]:
        raise NotFoundError(
            f"chapter {chapter_index} of '{slug}' has sections "
            f"0–{section_counts[chapter_index] - 1}, not {section_index}")
