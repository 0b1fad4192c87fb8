"""The EPUB 3 nav's landmarks: which document is the body, the endnotes, the index …

A landmark (``<nav epub:type="landmarks">``, each link carrying an ``epub:type`` such as
``bodymatter``, ``endnotes`` or ``index``) is the publisher's own statement of what a
document is. It is passed on to ``structure.roles`` as a hint, together with the
``epub:type`` of each document itself; neither decides anything in the parser.

A landmark says what the document is only when it points at where the document opens: in
a book of one or a few large documents, ``text.xhtml#index`` marks the index at the end of
a file that also holds chapters, and must not make those chapters an index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from grimoire_beholder.parse.epub_html import attr_type, load_markup, localname
from grimoire_beholder.parse.epub_package import Archive, resolve_href

MAX_LANDMARKS = 1_000


def read_landmarks(arc: Archive, nav_paths: Iterable[str],
                   opens: Callable[[str, str], bool]) -> dict[str, set[str]]:
    """Document path → the landmark types that point at it (empty when there is no nav);
    ``opens(path, fragment)`` says whether a link's fragment is where the document opens."""
    out: dict[str, set[str]] = {}
    for nav in sorted(nav_paths):
        if not arc.find(nav):
            continue
        root = load_markup(arc.read(nav))
        if root is None:
            continue
        base = nav.rsplit("/", 1)[0] if "/" in nav else ""
        for block in (el for el in root.iter() if localname(el) == "nav"):
            if "landmarks" not in attr_type(block):
                continue
            links = [el for el in block.iter() if localname(el) == "a"][:MAX_LANDMARKS]
            for link in links:
                path, fragment = resolve_href(base, link.get("href") or "")
                found = arc.find(path) if path else None
                if found and (not fragment or opens(found, fragment)):
                    out.setdefault(found, set()).update(attr_type(link))
    return out
