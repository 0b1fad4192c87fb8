"""A Zotero data folder (the folder holding ``zotero.sqlite`` and ``storage/``) as a source.

One :class:`SourceItem` per regular item of the user library that has a readable attachment
(a stored PDF, EPUB, HTML snapshot, Word or text file; a linked file by its absolute path),
the first in the configured format order; an item with none is listed with the formats it
has. Title, creators, date, DOI, item type, publication, collections and tags come along,
and the attachment's annotations (highlights, underlines, notes, with their page) plus the
item's child notes become the reader's own chapter of the book (``items.reader_chapter``).
The link selects the item in Zotero: ``zotero://select/library/items/KEY``.

``zotero.sqlite`` is read from a private copy (``store/foreign_copy.py``): Zotero keeps it
locked while it runs, and nothing here may ever write it.
"""

from __future__ import annotations

import json
from pathlib import Path

from lxml import html

from grimoire_beholder.sources.items import (
    ZOTERO_DB,
    Annotation,
    SourceItem,
    SourceLibrary,
    choose_format,
)
from grimoire_beholder.store.foreign_copy import foreign_database
from grimoire_beholder.store.zotero_rows import (
    ZoteroAnnotation,
    ZoteroAttachment,
    ZoteroItem,
    read_annotations,
    read_items,
)

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
            files.setdefault(_format(attachment), path)
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


def read_zotero(folder: Path, order: tuple[str, ...]) -> SourceLibrary:
    """Every item of the Zotero data folder at ``folder`` (resolved), with the annotations
    of the attachment chosen for it; read from a copy of ``zotero.sqlite``."""
    library = SourceLibrary("zotero", folder)
    with foreign_database(folder / ZOTERO_DB, "Zotero database") as conn:
        for row in read_items(conn):
            item, attachment = _item(folder, row, order)
            if attachment is not None:
                item.annotations = [_annotation(a)
                                    for a in read_annotations(conn, attachment.item_id)]
            item.annotations += [Annotation("note", "", text) for text in
                                 (_note_text(n) for n in row.notes) if text]
            library.items.append(item)
    return library
