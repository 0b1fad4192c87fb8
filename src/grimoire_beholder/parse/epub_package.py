"""Safe, in-memory access to an EPUB container: the zip, the OPF package and the TOC.

Kept apart from :mod:`grimoire_beholder.parse.epub` so the parts that defend against hostile
input (zip bombs, path traversal, DRM, malformed XML) sit in one place and can be reviewed
on their own. Nothing here touches the filesystem beyond opening the one file for reading:
zip members are read into memory by name, never extracted, so a member called
``../../evil`` cannot write anywhere.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.epub_html import attr_type, load_markup, localname

# Limits. A real book's text documents are rarely above a few MB each; these leave headroom
# for huge reference works while keeping a hostile archive from exhausting memory or time.
MAX_ENTRIES = 50_000
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # one member we read (declared and actual)
MAX_TOTAL_BYTES = 512 * 1024 * 1024  # everything we read from one archive
MAX_DECLARED_TOTAL = 4 * 1024 * 1024 * 1024  # sum of all declared sizes (we don't read most)
BOMB_RATIO = 200  # deflate of real text/images stays far below this
BOMB_MIN_BYTES = 8 * 1024 * 1024  # ratio only matters for members at least this big
MAX_TOC_DEPTH = 32

# Errors the zip/zlib/lxml stack raises on corrupt input; mapped to InputFileError.
READ_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    UnicodeError,
    etree.LxmlError,
)


@dataclass
class TocNode:
    """One TOC entry as written in the nav document or NCX (href not yet resolved)."""

    title: str
    path: str | None  # zip member the entry points at, or None when unresolvable
    fragment: str | None
    children: list[TocNode] = field(default_factory=list)


@dataclass
class SpineDoc:
    path: str  # zip member name
    linear: bool
    properties: frozenset[str]


@dataclass
class Package:
    """What the OPF says: metadata, reading order, TOC and which documents are boilerplate."""

    title: str | None
    author: str | None
    spine: list[SpineDoc]
    toc: list[TocNode]
    nav_paths: set[str]  # the EPUB 3 nav document(s): never content
    guide_skip: set[str]  # EPUB 2 <guide> cover/copyright pages (its "toc" is unreliable)
    warnings: list[str]


class Archive:
    """Bounded, in-memory reader over the zip: every read counts against a total budget."""

    def __init__(self, path: Path, data: bytes) -> None:
        """``data`` is the file's bytes, read by ``parse.source.read_source``."""
        self.label = str(path)
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except READ_ERRORS as exc:
            raise InputFileError(f"{self.label}: not an EPUB (not a readable zip archive)") from exc
        try:
            self._check(infos)
        except InputFileError:
            self._zip.close()
            raise
        # Only names that stay inside the archive root are addressable at all.
        self._infos = {i.filename: i for i in infos if _safe_name(i.filename)}
        self._lower = {n.lower(): n for n in self._infos}
        self._budget = MAX_TOTAL_BYTES

    def _check(self, infos: list[zipfile.ZipInfo]) -> None:
        refuse_zip_bomb(self.label, infos)

    def close(self) -> None:
        self._zip.close()

    def find(self, name: str) -> str | None:
        """The member called ``name`` (falling back to a case-insensitive match), or None."""
        if name in self._infos:
            return name
        return self._lower.get(name.lower())

    def names(self) -> list[str]:
        return list(self._infos)

    def read(self, name: str) -> bytes:
        """Read one member, refusing oversized or password-protected members."""
        info = self._infos[name]
        if info.flag_bits & 0x1:
            raise InputFileError(f"{self.label}: {name} is encrypted (password-protected zip)")
        if info.file_size > MAX_ENTRY_BYTES:
            raise InputFileError(
                f"{self.label}: refused, member {name} is {info.file_size:,} bytes uncompressed"
            )
        limit = min(MAX_ENTRY_BYTES, self._budget)
        with self._zip.open(info) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise InputFileError(f"{self.label}: refused, archive expands beyond read limits")
        self._budget -= len(data)
        return data


def refuse_zip_bomb(label: str, infos: list[zipfile.ZipInfo], *,
                    declared_limit: int = MAX_DECLARED_TOTAL) -> None:
    """Refuse an archive whose entry count, declared sizes or compression ratios betray a
    zip bomb, before any member is read (EPUB here, ``.docx`` in parse/docx.py)."""
    if len(infos) > MAX_ENTRIES:
        raise InputFileError(f"{label}: zip has too many entries ({len(infos)})")
    declared = sum(i.file_size for i in infos)
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= BOMB_MIN_BYTES and ratio > BOMB_RATIO:
            raise InputFileError(
                f"{label}: refused, looks like a zip bomb "
                f"({info.file_size:,} bytes packed at ratio {ratio:.0f}:1)"
            )
    if declared > declared_limit:
        raise InputFileError(
            f"{label}: refused, declares {declared:,} uncompressed bytes (zip bomb?)"
        )


def _safe_name(name: str) -> bool:
    if not name or name.startswith(("/", "\\")) or "\\" in name or ":" in name.split("/")[0]:
        return False
    return ".." not in name.split("/")


def resolve_href(base_dir: str, href: str) -> tuple[str | None, str | None]:
    """Turn a (possibly URL-encoded, relative) href into (archive path, fragment).

    The path is None for external links and for anything that climbs out of the archive.
    """
    href = href.strip()
    raw_path, _, frag = href.partition("#")
    fragment = unquote(frag) if frag else None
    if not raw_path:
        return None, fragment
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", raw_path):
        return None, fragment  # http:, mailto:, data: ...
    joined = posixpath.normpath(posixpath.join(base_dir, unquote(raw_path)))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None, fragment
    return joined, fragment


def _xml(data: bytes, arc: Archive, name: str) -> etree._Element:
    """A package XML member (container, OPF, NCX, encryption), parsed forgivingly — except
    that hitting libxml2's entity-expansion limit (a "billion laughs" bomb) refuses the
    whole book, instead of recovering to a truncated tree that reads as an empty spine."""
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=True
    )
    root = etree.fromstring(data, parser)
    if any(e.type_name in _BOMB_ERRORS or "amplification" in e.message
           for e in parser.error_log):
        raise InputFileError(
            f"{arc.label}: refused, {name} defines entities that expand past the safety "
            "limit (an entity-expansion bomb, 'billion laughs')")
    if root is None:
        raise etree.ParserError("empty or unparsable XML document")
    return root


# libxml2's reports of an entity that expands without bound or refers to itself.
_BOMB_ERRORS = frozenset(("ERR_RESOURCE_LIMIT", "ERR_ENTITY_LOOP", "ERR_ENTITY_AMPLIFICATION"))


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if localname(c) == name]


def _first(root: etree._Element, name: str) -> etree._Element | None:
    for el in root.iter():
        if localname(el) == name:
            return el
    return None


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _opf_path(arc: Archive) -> str:
    container = arc.find("META-INF/container.xml")
    if container is not None:
        try:
            root = _xml(arc.read(container), arc, container)
            for el in root.iter():
                if localname(el) == "rootfile" and el.get("full-path"):
                    found = arc.find(resolve_href("", el.get("full-path", ""))[0] or "")
                    if found:
                        return found
        except etree.LxmlError:
            pass
    opfs = [n for n in arc.names() if n.lower().endswith(".opf")]
    if not opfs:
        raise InputFileError(f"{arc.label}: not an EPUB (no OPF package document)")
    return sorted(opfs, key=len)[0]


def check_drm(arc: Archive, content_paths: set[str]) -> None:
    """Refuse books whose content documents are encrypted; obfuscated fonts are fine."""
    enc = arc.find("META-INF/encryption.xml")
    if enc is None:
        return
    try:
        root = _xml(arc.read(enc), arc, enc)
    except etree.LxmlError as exc:
        raise InputFileError(
            f"{arc.label}: unreadable META-INF/encryption.xml (DRM-protected?)"
        ) from exc
    for ref in root.iter():
        if localname(ref) != "cipherreference":
            continue
        target, _ = resolve_href("", ref.get("URI", ""))
        if target is not None and (
            target in content_paths
            or target.lower().endswith((".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx"))
        ):
            raise InputFileError(
                f"{arc.label}: DRM-protected (content is encrypted); remove DRM to ingest"
            )


def read_package(arc: Archive) -> tuple[Package, set[str]]:
    """Read the OPF: metadata, manifest, spine, guide, and the TOC (nav first, else NCX).

    Returns the package and the set of all content-document paths (for the DRM check).
    """
    opf = _opf_path(arc)
    try:
        root = _xml(arc.read(opf), arc, opf)
    except etree.LxmlError as exc:
        raise InputFileError(f"{arc.label}: unreadable OPF package document ({opf})") from exc
    base = posixpath.dirname(opf)
    warnings: list[str] = []

    title = author = None
    meta = _first(root, "metadata")
    if meta is not None:
        titles = [_collapse(e.xpath("string()")) for e in meta.iter() if localname(e) == "title"]
        creators = [
            _collapse(e.xpath("string()")) for e in meta.iter() if localname(e) == "creator"
        ]
        title = next((t for t in titles if t), None)
        names = list(dict.fromkeys(c for c in creators if c))
        author = ", ".join(names) or None

    manifest: dict[str, tuple[str | None, str, frozenset[str]]] = {}
    man = _first(root, "manifest")
    for item in _children(man, "item") if man is not None else []:
        path, _ = resolve_href(base, item.get("href", ""))
        found = arc.find(path) if path else None
        props = frozenset((item.get("properties") or "").split())
        manifest[item.get("id", "")] = (found or path, item.get("media-type", ""), props)

    content = {p for p, mt, _ in manifest.values() if p and ("html" in mt or "xml" in mt)}

    spine: list[SpineDoc] = []
    seen: set[str] = set()
    spine_el = _first(root, "spine")
    ncx_id = spine_el.get("toc") if spine_el is not None else None
    for ref in _children(spine_el, "itemref") if spine_el is not None else []:
        idref = ref.get("idref", "")
        entry = manifest.get(idref)
        if entry is None or entry[0] is None or arc.find(entry[0]) is None:
            where = entry[0] if entry and entry[0] else idref
            warnings.append(f"spine item {where!r} is missing from the EPUB; skipped")
            continue
        path = arc.find(entry[0]) or entry[0]
        if path in seen:
            continue
        seen.add(path)
        spine.append(SpineDoc(path, ref.get("linear", "yes").lower() != "no", entry[2]))

    nav_paths = {p for p, _, props in manifest.values() if p and "nav" in props}
    guide_skip: set[str] = set()
    guide = _first(root, "guide")
    for ref in _children(guide, "reference") if guide is not None else []:
        if (ref.get("type") or "").lower() in {"cover", "copyright-page"}:
            path, _ = resolve_href(base, ref.get("href", ""))
            if path and (found := arc.find(path)):
                guide_skip.add(found)

    spine_paths = [d.path for d in spine]
    toc: list[TocNode] = []
    for nav in sorted(nav_paths):
        if arc.find(nav):
            toc = _read_nav(arc, nav, spine_paths, warnings)
            if toc:
                break
    if not toc:
        ncx = [p for i, (p, mt, _) in manifest.items() if p and (i == ncx_id or "ncx" in mt)]
        for path in ncx:
            if arc.find(path):
                toc = _read_ncx(arc, path, spine_paths, warnings)
                if toc:
                    break
    pkg = Package(title, author, spine, toc, nav_paths, guide_skip, warnings)
    return pkg, content | set(spine_paths)


def _target(
    arc: Archive, base: str, href: str | None, spine_paths: list[str]
) -> tuple[str | None, str | None]:
    """Resolve a TOC href, tolerating generators (Sphinx) that write hrefs relative to the
    wrong directory: fall back to the spine document whose path ends with the href."""
    if not href:
        return None, None
    path, frag = resolve_href(base, href)
    if path is None:
        return None, frag
    found = arc.find(path)
    if found:
        return found, frag
    rel, _ = resolve_href("", href)
    if rel:
        for cand in spine_paths:
            if cand == rel or cand.endswith("/" + rel):
                return cand, frag
    return None, frag


def _read_nav(arc: Archive, nav: str, spine: list[str], warnings: list[str]) -> list[TocNode]:
    root = load_markup(arc.read(nav))
    if root is None:
        warnings.append(f"navigation document {nav} is unreadable; using the NCX if any")
        return []
    navs = [el for el in root.iter() if localname(el) == "nav"]
    toc_nav = next((n for n in navs if "toc" in attr_type(n)), navs[0] if navs else None)
    if toc_nav is None:
        return []
    top = next((el for el in toc_nav.iter() if localname(el) == "ol"), None)
    if top is None:
        return []
    base = posixpath.dirname(nav)

    def walk(ol: etree._Element, depth: int) -> list[TocNode]:
        out: list[TocNode] = []
        for li in _children(ol, "li"):
            label = next((c for c in li if localname(c) in ("a", "span")), None)
            sub = next((c for c in li if localname(c) == "ol"), None)
            title = _collapse(label.xpath("string()")) if label is not None else ""
            href = label.get("href") if label is not None and localname(label) == "a" else None
            path, frag = _target(arc, base, href, spine)
            kids = walk(sub, depth + 1) if sub is not None and depth < MAX_TOC_DEPTH else []
            if title or kids:
                out.append(TocNode(title, path, frag, kids))
        return out

    return walk(top, 0)


def _read_ncx(arc: Archive, ncx: str, spine: list[str], warnings: list[str]) -> list[TocNode]:
    try:
        root = _xml(arc.read(ncx), arc, ncx)
    except etree.LxmlError:
        warnings.append(f"NCX table of contents {ncx} is unreadable")
        return []
    nav_map = _first(root, "navmap")
    if nav_map is None:
        return []
    base = posixpath.dirname(ncx)

    def walk(parent: etree._Element, depth: int) -> list[TocNode]:
        out: list[TocNode] = []
        for point in _children(parent, "navpoint"):
            label = next((c for c in point if localname(c) == "navlabel"), None)
            title = _collapse(label.xpath("string()")) if label is not None else ""
            content = next((c for c in point if localname(c) == "content"), None)
            href = content.get("src") if content is not None else None
            path, frag = _target(arc, base, href, spine)
            kids = walk(point, depth + 1) if depth < MAX_TOC_DEPTH else []
            if title or kids:
                out.append(TocNode(title, path, frag, kids))
        return out

    return walk(nav_map, 0)
