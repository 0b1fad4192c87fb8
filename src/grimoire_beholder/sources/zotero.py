"""A Zotero data folder (the folder holding ``zotero.sqlite`` and ``storage/``) as a source.

One :class:`SourceItem` per regular item of the user library that has a readable attachment
(a stored PDF, EPUB, HTML snapshot, Word or text file; a linked file by its absolute path),
the first in the configured format order; an item with none is listed with the formats it
has. Title, creators, date, DOI, item type, publication, collections and tags come along,
and the attachment's annotations (highlights, underlines, notes, with their page) plus the
item's child notes become the reader's own chapter of the book (``items.reader_chapter``).
The link selects the item in Zotero: ``zotero://select/library/items/KEY``.

``zotero.sqlite`` is read by ``store/zotero_rows.py`` from a private copy
(``store/foreign_copy.py``): Zotero keeps it locked while it runs, and nothing may ever
write it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import html

from grimoire_beholder.sources.items import (
    Annotation,
    SourceItem,
    SourceLibrary,
    choose_format,
    is_file,
)


@dataclass
class ZoteroAttachment:
    item_id: int
    key: str
    link_mode: int  # 0 imported file, 1 imported URL (snapshot), 2 linked file, 3 linked URL
    content_type: str
    path: str  # "storage:name.pdf" for stored files, an absolute path for linked ones


@dataclass
class ZoteroAnnotation:
    kind: str  # highlight, underline, note, image, ink, text
    text: str
    comment: str
    page_label: str | None
    sort_index: str
    position: str  # JSON: {"pageIndex": 0, "rects": …} for PDFs


@dataclass
class ZoteroItem:
    """A regular item with what hangs on it (read by ``store/zotero_rows.py``)."""

    item_id: int
    key: str
    item_type: str
    fields: dict[str, str] = field(default_factory=dict)
    creators: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    attachments: list[ZoteroAttachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # child notes, as Zotero's HTML

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ZoteroItem:
        return cls(**{**row, "attachments": [ZoteroAttachment(**a)
                                             for a in row.get("attachments", [])]})

CONTENT_TYPES = {
    "application/pdf": "pdf",
    "application/epub+zip": "epub",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/plain": "txt",
    "text/markdown": "md",
}
LINKED_URL = 3
_FIELDS = {"date": "date", "DOI": "doi", "publicationTitle": "publication",
           "publisher": "publisher", "language": "language", "url": "url", "ISBN": "isbn"}


def _file(folder: Path, attachment: ZoteroAttachment) -> Path | None:
    """Where an attachment's file is: ``storage/KEY/name`` for a stored one, the path itself
    for a linked one; None for a link to a web page or a path relative to a base folder
    this reader does not know."""
    if attachment.link_mode == LINKED_URL or not attachment.path:
        return None
    if attachment.path.startswith("storage:"):
        return folder / "storage" / attachment.key / attachment.path.removeprefix("storage:")
    path = Path(attachment.path)
    return path if path.is_absolute() else None


def _format(attachment: ZoteroAttachment) -> str:
    if attachment.link_mode == LINKED_URL:
        return "link"  # a web address, no file
    kind = CONTENT_TYPES.get(attachment.content_type.split(";")[0].strip().lower())
    return kind or Path(attachment.path).suffix.lower().lstrip(".") or "unknown"


def _annotation(row: ZoteroAnnotation) -> Annotation:
    page = None
    try:
        index = json.loads(row.position).get("pageIndex")
        page = int(index) + 1 if isinstance(index, int) and index >= 0 else None
    except (ValueError, AttributeError):
        pass
    return Annotation(row.kind, row.text, row.comment, page, row.page_label)


def _note_text(note: str) -> str:
    try:
        return " ".join(html.fromstring(note).text_content().split())
    except (ValueError, TypeError):
        return ""


def _item(folder: Path, item: ZoteroItem, order: tuple[str, ...]
          ) -> tuple[SourceItem, ZoteroAttachment | None]:
    files: dict[str, Path] = {}
    chosen: dict[Path, ZoteroAttachment] = {}
    for attachment in item.attachments:
        path = _file(folder, attachment)
        if path is not None:
            kind = _format(attachment)  # of two of a format, the first on disk
            if kind not in files or (not is_file(files[kind]) and is_file(path)):
                files[kind] = path
            chosen.setdefault(path, attachment)
    file = choose_format(files, order)
    metadata = {ours: item.fields.get(theirs) for theirs, ours in _FIELDS.items()}
    metadata["item_type"] = item.item_type
    source = SourceItem(
        key=item.key, title=item.fields.get("title") or item.key, authors=list(item.creators),
        link=f"zotero://select/library/items/{item.key}", file=file,
        formats=sorted({_format(a).upper() for a in item.attachments}),
        tags=list(item.tags), collections=list(item.collections), metadata=metadata)
    return source, chosen.get(file) if file is not None else None


def zotero_library(folder: Path, rows: Iterable[Mapping[str, Any]],
                   annotations: Mapping[int, Sequence[Mapping[str, Any]]],
                   order: tuple[str, ...]) -> SourceLibrary:
    """The Zotero data folder at ``folder`` (resolved) from its database's items and the
    annotations by attachment id; the files are not opened here."""
    library = SourceLibrary("zotero", folder)
    for row in rows:
        zotero_item = ZoteroItem.from_row(row)
        item, attachment = _item(folder, zotero_item, order)
        if attachment is not None:
            item.annotations = [_annotation(ZoteroAnnotation(**a))
                                for a in annotations.get(attachment.item_id, [])]
        item.annotations += [Annotation("note", "", text) for text in
                             (_note_text(n) for n in zotero_item.notes) if text]
        library.items.append(item)
    return library
