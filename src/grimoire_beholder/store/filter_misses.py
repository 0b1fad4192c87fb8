"""The error for a search filter that matches no book at all, naming what it probably meant
or what there is — as an unknown ``--book`` does (``naming.no_such_book``).

A filter that matches some books but none of those the other filters keep is no mistake:
the search answers "no book matches the filters". One that matches no book of the library
is a typo or a wrong guess, and searching on would only say nothing was found; these
messages say what to type instead. Built from the rows ``hit_queries.resolve_books``
already read (``id, slug, author, source_type, source_path, source_root, source_group``);
no query of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.naming import near_labels

SHOWN = 5  # names listed when none is close
_AUTHORS_SPLIT = re.compile(r"\s+&\s+|\s*;\s*")  # "Ann Sea & Bob Lee" (Calibre, Zotero)


def _listed(what: str, names: Sequence[str], typed: str, shown: int = SHOWN) -> str:
    """``did you mean: …`` when some are close to ``typed``, else the first ``shown``."""
    close = near_labels(typed, names)
    if close:
        return "did you mean: " + ", ".join(close)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{what}: " + ", ".join(names[:shown]) + more


def no_author(typed: str, rows: Sequence[Any]) -> GrimoireError:
    """``--author`` (a case-insensitive part of the author) that no book's author holds."""
    names = sorted({name.strip() for r in rows if r[2] for name in _AUTHORS_SPLIT.split(r[2])
                    if name.strip()}, key=str.casefold)
    what = f"no book's author contains {typed.strip()!r}"
    if not names:
        return GrimoireError(f"{what}: no book in this library names its author")
    return GrimoireError(f"{what}; {_listed('authors', names, typed)}")


def no_source_type(kind: str, rows: Sequence[Any]) -> GrimoireError:
    """A known source type no book has."""
    kinds = sorted({str(r[3]) for r in rows if r[3]})
    return GrimoireError(f"no book is of type {kind!r}; types in this library: "
                         + ", ".join(kinds))


def no_group(group: str, rows: Sequence[Any]) -> GrimoireError:
    """``--group`` naming no top-level folder of an ingested folder."""
    groups = sorted({r[6] or "" for r in rows if r[5]}, key=str.casefold)
    what = f"no book is in the group {group!r}"
    if not groups:
        return GrimoireError(f"{what}: groups are the top-level folders of an ingested "
                             "folder, and this library has none")
    shown = [g or "'' (files directly in an ingested folder)" for g in groups]
    close = near_labels(group, [g for g in groups if g])
    return GrimoireError(f"{what}; " + ("did you mean: " + ", ".join(close) if close else
                                        "groups: " + ", ".join(shown)))


def no_path(prefix: str, rows: Sequence[Any]) -> GrimoireError:
    """``--path-prefix`` that starts no book's path, absolute or under its folder."""
    roots = sorted({str(r[5]) for r in rows if r[5]})
    what = f"no book's path starts with {prefix!r}"
    if not roots:
        return GrimoireError(f"{what} (give the start of a book file's absolute path)")
    groups = sorted({str(r[6]) for r in rows if r[5] and r[6]}, key=str.casefold)
    close = near_labels(prefix.strip().strip("/"), groups)
    folders = (f"; did you mean: {', '.join(g + '/' for g in close)}" if close else
               f"; their top folders: {', '.join(g + '/' for g in groups[:SHOWN])}"
               if groups else "")
    shown = ", ".join(roots[:SHOWN]) + (f" and {len(roots) - SHOWN} more"
                                        if len(roots) > SHOWN else "")
    return GrimoireError(f"{what} (the start of a book file's absolute path, or of its path "
                         f"under its ingested folder); ingested folders: {shown}{folders}")
