"""Reading position: limit a search to the part of one book a reader has reached.

``until`` names the last chapter to include — its 0-based ``chapter_index`` (an int, or a
string of digits) as the outline and search hits give it, or its title: an exact title
(case-insensitive), else the one title that starts with it as a whole word ("Chapter 7"
finds "Chapter 7: The Tide" but not "Chapter 70"), else the one title containing it. The
result is the set of chunk ids in chapters 0..N of that book; the engine hands it to both
arms, which apply it before taking their top candidates, like the book filters.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from grimoire_beholder.errors import GrimoireError, NotFoundError
from grimoire_beholder.store import reading_positions

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store


def chapter_number(titles: list[str], until: int | str, slug: str) -> int:
    """The chapter index ``until`` names among ``titles`` (see the module doc)."""
    if isinstance(until, int) and not isinstance(until, bool):
        index = until
    elif isinstance(until, str) and until.strip().isascii() and until.strip().isdigit():
        digits = until.strip().lstrip("0") or "0"
        if len(digits) > 18:  # int() refuses over 4,300 digits
            raise NotFoundError(f"book '{slug}' has chapters 0–{len(titles) - 1}, not "
                                f"{digits[:20]}…")
        index = int(digits)
    elif isinstance(until, str) and until.strip():
        return _by_title(titles, until.strip(), slug)
    else:
        raise GrimoireError("until_chapter must be a chapter index or a chapter title")
    if not 0 <= index < len(titles):
        raise NotFoundError(f"book '{slug}' has chapters 0–{len(titles) - 1}, not {index}")
    return index


def _by_title(titles: list[str], wanted: str, slug: str) -> int:
    key = wanted.casefold()
    folded = [t.strip().casefold() for t in titles]
    head = re.compile(re.escape(key) + r"(?!\w)")
    for rule in (lambda t: t == key, lambda t: head.match(t) is not None, lambda t: key in t):
        hits = [i for i, t in enumerate(folded) if rule(t)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            shown = "; ".join(f"{i}: {titles[i]}" for i in hits[:5])
            raise GrimoireError(f"{wanted!r} matches several chapters of '{slug}' ({shown}); "
                                "give the chapter index")
    raise NotFoundError(f"no chapter of '{slug}' is titled {wanted!r}; see its outline for "
                        "chapter indices and titles")


def until_scope(conn: Store, book_ids: list[int] | None, slug: str | None,
                until: int | str) -> list[int]:
    """Chunk ids of the one allowed book up to and including chapter ``until``."""
    if book_ids is None or len(book_ids) != 1 or slug is None:
        raise GrimoireError("a reading position (--until, until_chapter) needs one book "
                            "(chapter numbers belong to a book): give the book too (--book, "
                            "book_id)")
    titles = reading_positions.chapter_titles(conn, book_ids[0])
    last = chapter_number(titles, until, slug)
    return reading_positions.chunk_ids_until(conn, book_ids, last)
