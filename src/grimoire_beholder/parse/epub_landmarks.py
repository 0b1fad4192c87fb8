"""The EPUB 3 nav's landmarks: which document is the body, the endnotes, the index …

A landmark (``<nav epub:type="landmarks">``, each link carrying an ``epub:type`` such as
``bodymatter``, ``endnotes`` or ``index``) is the publisher's own statement of what a
document is. It is passed on to ``structure.roles`` as a hint, together with the
``epub:type`` of each document itself; neither decides anything in the parser.
"""

from __future__ import annotations

from collections.abc import Iterable

from grimoire_beholder.parse.epub_html import attr_type, load_markup, localname
from grimoire_beholder.parse.epub_package import Archive, resolve_href

MAX_LANDMARKS = 1_000


def read_landmarks(arc: Archive, nav_paths: Iterable[str]) -> dict[str, set[str]]:
    """Document path → the landmark types that point at it (empty when there is no nav)."""
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
                path, _ = resolve_href(base, link.get("href") or "")
                found = arc.find(path) if path else None
                if found:
                    out.setdefault(found, set()).update(attr_type(link))
    return out
