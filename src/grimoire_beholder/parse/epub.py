"""EPUB → ParsedBook: reading order from the spine, structure from the TOC.

Chapters and sections come from the EPUB 3 nav document (else the EPUB 2 NCX), because
the TOC titles are what a reader sees and what citations should use. Each TOC entry is
mapped to a spine document and, when its href has a fragment, to the element with that id,
so a sub-entry pointing into the middle of a document starts its section exactly there.

Which entries are chapters: top-level entries, except that a top-level entry acting as a
*part* (all of its children open documents of their own, like "Common Tasks" → "Task 1",
"Task 2" ... or "The Art of War" → "I: Laying Plans" ...) becomes a chapter holding only its
own page while its children become chapters. Everything below a chapter is a section,
flattened in order, with ``path`` = titles from just below the chapter down.

EPUBs have no pages, so blocks get a synthetic page: one per ~1,024 characters of text in
reading order. It is stable for a given file and increases through the book, which is all a
citation needs.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.document import (
    ParsedBook,
    ParsedChapter,
    ParsedSection,
    SyntheticPages,
)
from grimoire_beholder.parse.epub_html import DocInfo, WalkResult, localname, walk
from grimoire_beholder.parse.epub_landmarks import read_landmarks
from grimoire_beholder.parse.epub_package import (
    READ_ERRORS,
    Archive,
    Package,
    TocNode,
    check_drm,
    read_package,
)
from grimoire_beholder.parse.source import read_source

_ERRORS: tuple[type[BaseException], ...] = (*READ_ERRORS, RecursionError, KeyError)
# epub:type values of documents that are packaging, not the book's text.
BOILERPLATE_TYPES = frozenset(
    {"cover", "toc", "landmarks", "page-list", "loi", "lot", "copyright-page", "imprint"}
    | {"colophon"}
)


@dataclass
class _Doc:
    path: str
    info: DocInfo
    walked: WalkResult | None = None
    hints: frozenset[str] = frozenset()  # epub:type of the document and its landmarks


@dataclass
class _Entry:
    """A flattened TOC entry: chapter or section, and where in the text it starts."""

    title: str
    is_chapter: bool
    path: list[str]
    node: TocNode


def parse_epub(path: Path) -> ParsedBook:
    """Parse an EPUB file into chapters, sections and blocks; raise InputFileError on input
    that is missing, not an EPUB, DRM-protected, hostile or without any text."""
    path = Path(path)
    data = read_source(path)
    try:
        arc = Archive(path, data)
    except READ_ERRORS as exc:  # pragma: no cover - Archive maps its own errors
        raise InputFileError(f"{path}: not an EPUB ({type(exc).__name__})") from exc
    try:
        return _parse(arc, path)
    except InputFileError:
        raise
    except _ERRORS as exc:
        raise InputFileError(f"{path}: corrupt EPUB ({type(exc).__name__}: {exc})") from exc
    finally:
        arc.close()


def _parse(arc: Archive, path: Path) -> ParsedBook:
    pkg, content_paths = read_package(arc)
    check_drm(arc, content_paths)
    if not pkg.spine:
        raise InputFileError(f"{path}: EPUB has no readable reading order (empty spine)")
    warnings = list(pkg.warnings)
    book = ParsedBook(
        title=pkg.title or path.stem,
        author=pkg.author,
        source_type="epub",
        source_path=str(path),
        warnings=warnings,
    )
    toc_paths = _toc_paths(pkg.toc)
    docs: list[_Doc] = []
    nonlinear = 0
    for sd in pkg.spine:
        if not sd.linear and sd.path not in toc_paths:
            nonlinear += 1
            continue
        if sd.path in pkg.nav_paths or "nav" in sd.properties:
            continue
        info = DocInfo.from_bytes(arc.read(sd.path))
        if info is None:
            warnings.append(f"spine document {sd.path} has no readable markup; skipped")
            continue
        docs.append(_Doc(sd.path, info))
    if nonlinear:
        warnings.append(f"skipped {nonlinear} non-linear spine documents not in the TOC")

    by_path = {d.path: i for i, d in enumerate(docs)}
    entries = _flatten(pkg.toc)
    split_ids: dict[int, set[str]] = {}
    for e in entries:
        if e.node.path in by_path and e.node.fragment:
            split_ids.setdefault(by_path[e.node.path], set()).add(e.node.fragment)
    for i, d in enumerate(docs):
        d.walked = walk(d.info.body, split_ids.get(i, set()) & d.info.ids)

    skip = {i for i, d in enumerate(docs) if _is_boilerplate(d, pkg)}
    at_start, at_anchor, at_end = _place(entries, docs, by_path, skip, warnings)
    landmarks = read_landmarks(
        arc, pkg.nav_paths,
        lambda path, fragment: path in by_path and _opens(docs[by_path[path]], fragment))
    for d in docs:
        d.hints = frozenset(d.info.types | landmarks.get(d.path, set()))
    _assemble(book, docs, skip, entries, at_start, at_anchor, at_end, bool(entries))
    if not any(s.blocks for c in book.chapters for s in c.sections):
        raise InputFileError(f"{path}: no text found in the EPUB (image-only or empty)")
    return book


def _toc_paths(nodes: list[TocNode]) -> set[str]:
    out: set[str] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.path:
            out.add(n.path)
        stack.extend(n.children)
    return out


def _is_part(node: TocNode) -> bool:
    """A part: every child opens a document of its own, different from the part's page."""
    if not node.children:
        return False
    paths = [c.path for c in node.children]
    return (
        all(p and p != node.path for p in paths)
        and all(not c.fragment for c in node.children)
        and len(set(paths)) == len(paths)
    )


def _flatten(toc: list[TocNode]) -> list[_Entry]:
    out: list[_Entry] = []

    def sections(node: TocNode, prefix: list[str]) -> None:
        for c in node.children:
            p = [*prefix, c.title]
            out.append(_Entry(c.title, False, p, c))
            sections(c, p)

    def chapter(node: TocNode) -> None:
        out.append(_Entry(node.title, True, [], node))
        if _is_part(node):
            for c in node.children:
                chapter(c)
        else:
            sections(node, [])

    for n in toc:
        chapter(n)
    return out


def _is_boilerplate(doc: _Doc, pkg: Package) -> bool:
    """Cover, nav/TOC pages, copyright/imprint/colophon pages: packaging, not the book."""
    if doc.path in pkg.guide_skip or doc.info.types & BOILERPLATE_TYPES:
        return True
    w = doc.walked
    # An HTML table of contents in the spine: mostly links to other documents.
    return w is not None and w.links >= 3 and w.link_chars >= 0.7 * max(w.text_chars, 1)


def _place(
    entries: list[_Entry],
    docs: list[_Doc],
    by_path: dict[str, int],
    skip: set[int],
    warnings: list[str],
) -> tuple[dict[int, list[int]], dict[tuple[int, str], list[int]], list[int]]:
    """Decide where each TOC entry starts: a document start, an anchor, or (unresolvable)
    just before the next resolvable entry, so it becomes an empty section, not a thief of
    its neighbour's text."""
    at_start: dict[int, list[int]] = {}
    at_anchor: dict[tuple[int, str], list[int]] = {}
    pending: list[int] = []
    for k, e in enumerate(entries):
        n = e.node
        doc = by_path.get(n.path) if n.path else None
        if doc is not None and doc in skip:
            continue  # entry for a cover/copyright page: dropped with its page
        if doc is None:
            if n.path is not None or n.fragment is not None:
                warnings.append(f"TOC entry {e.title!r} points outside the reading order")
            pending.append(k)
            continue
        if n.fragment and n.fragment in docs[doc].info.ids:
            at_anchor.setdefault((doc, n.fragment), []).extend([*pending, k])
        elif n.fragment and n.fragment.strip() and not _top_anchor(docs[doc], n.fragment):
            warnings.append(f"TOC entry {e.title!r} points to missing anchor #{n.fragment}")
            pending.append(k)
            continue
        else:
            at_start.setdefault(doc, []).extend([*pending, k])
        pending = []
    return at_start, at_anchor, pending


def _top_anchor(doc: _Doc, fragment: str) -> bool:
    root_id = doc.info.root.get("id")
    return fragment == root_id


def _opens(doc: _Doc, fragment: str) -> bool:
    """Whether ``fragment`` names where the document opens: its root, its body or the
    first element inside them, however deeply nested (``<section id=c1><h1 id=t1>``)."""
    element = doc.info.body
    while element is not None:
        if element.get("id") == fragment:
            return True
        element = next((child for child in element if localname(child)), None)
    return _top_anchor(doc, fragment)


class _Builder:
    """Accumulates chapters/sections/blocks and hands out synthetic pages."""

    def __init__(self, book: ParsedBook) -> None:
        self.book = book
        self.pages = SyntheticPages()
        self.chapter: ParsedChapter | None = None
        self.section: ParsedSection | None = None
        self.attached = False
        self.hints: frozenset[str] = frozenset()  # of the document being read

    def new_chapter(self, title: str) -> None:
        self.chapter = ParsedChapter(title=title, anchor_page=self.pages.page, hints=self.hints)
        self.book.chapters.append(self.chapter)
        self.section = ParsedSection(title="", path=[], anchor_page=self.pages.page,
                                     hints=self.hints)
        self.attached = False

    def new_section(self, title: str, path: list[str], chapter_title: str) -> None:
        if self.chapter is None:
            self.new_chapter(chapter_title)
        assert self.chapter is not None
        self.section = ParsedSection(title=title, path=path, anchor_page=self.pages.page,
                                     hints=self.hints)
        self.chapter.sections.append(self.section)
        self.attached = True

    def add(self, text: str) -> None:
        assert self.chapter is not None and self.section is not None
        if not self.attached:
            self.chapter.sections.append(self.section)
            self.attached = True
        self.section.blocks.append(self.pages.block(text))


def _assemble(
    book: ParsedBook,
    docs: list[_Doc],
    skip: set[int],
    entries: list[_Entry],
    at_start: dict[int, list[int]],
    at_anchor: dict[tuple[int, str], list[int]],
    at_end: list[int],
    has_toc: bool,
) -> None:
    b = _Builder(book)
    chapter_of: dict[int, str] = {}
    current = ""
    for k, e in enumerate(entries):
        if e.is_chapter:
            current = e.title
        chapter_of[k] = current
    seen_mark = False

    def mark(ks: list[int]) -> None:
        nonlocal seen_mark
        seen_mark = True
        for k in ks:
            e = entries[k]
            if e.is_chapter:
                b.new_chapter(e.title)
            else:
                b.new_section(e.title, e.path, chapter_of[k])

    for i, d in enumerate(docs):
        if i in skip or d.walked is None:
            continue
        untitled = not has_toc or not seen_mark
        b.hints = d.hints
        if i in at_start:
            mark(at_start[i])
            untitled = False
        for kind, value in d.walked.events:
            if kind == "anchor":
                if (i, value) in at_anchor:
                    mark(at_anchor[(i, value)])
                    untitled = False
                continue
            if untitled:
                b.new_chapter(_doc_title(d))
                untitled = False
            b.add(value)
    mark(at_end)
    book.page_count = b.pages.count


def _doc_title(d: _Doc) -> str:
    """Title for a document outside the TOC: first heading, else <title>, else file name."""
    if d.walked is not None and d.walked.first_heading:
        return d.walked.first_heading
    return d.info.title or posixpath.splitext(posixpath.basename(d.path))[0]
