"""The queries that read a Zotero data folder's ``zotero.sqlite`` (a private copy of it, see
``foreign_copy.py``): the user library's regular items with their fields, creators,
collections and tags, their attachments, and the annotations and notes on them. Zotero's
own schema (``resource/schema/userdata.sql``); nothing here is ever written. Items in the
trash (``deletedItems``) are left out."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from grimoire_beholder.errors import InputFileError

_LIVE = "NOT IN (SELECT itemID FROM deletedItems)"
# Zotero's annotation types (Zotero.Annotations.ANNOTATION_TYPE_*).
ANNOTATION_TYPES = {1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline",
                    6: "text"}


@dataclass
class ZoteroAttachment:
    item_id: int
    key: str
    link_mode: int  # 0 imported file, 1 imported URL (snapshot), 2 linked file, 3 linked URL
    content_type: str
    path: str  # "storage:name.pdf" for stored files, an absolute path for linked ones


@dataclass
class ZoteroAnnotation:
    kind: str  # ANNOTATION_TYPES
    text: str
    comment: str
    page_label: str | None
    sort_index: str
    position: str  # JSON: {"pageIndex": 0, "rects": …} for PDFs


@dataclass
class ZoteroItem:
    item_id: int
    key: str
    item_type: str
    fields: dict[str, str] = field(default_factory=dict)
    creators: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    attachments: list[ZoteroAttachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # child notes, as Zotero's HTML


def _name(first: str | None, last: str | None, mode: int | None) -> str:
    if mode == 1 or not first:
        return (last or "").strip()
    return f"{first.strip()} {(last or '').strip()}".strip()


def read_items(conn: sqlite3.Connection) -> list[ZoteroItem]:
    """The user library's regular items (not attachments, notes or annotations), by id;
    InputFileError when this is no Zotero database."""
    try:
        items = {int(r[0]): ZoteroItem(int(r[0]), str(r[1]), str(r[2])) for r in conn.execute(
            "SELECT i.itemID, i.key, t.typeName FROM items i "
            "JOIN itemTypesCombined t ON t.itemTypeID = i.itemTypeID "
            "JOIN libraries l ON l.libraryID = i.libraryID WHERE l.type = 'user' "
            "AND t.typeName NOT IN ('attachment', 'note', 'annotation') "
            f"AND i.itemID {_LIVE} ORDER BY i.itemID")}
        _fill(conn, items)
    except sqlite3.DatabaseError as exc:
        raise InputFileError(f"not a Zotero database ({exc})") from exc
    return list(items.values())


def _fill(conn: sqlite3.Connection, items: dict[int, ZoteroItem]) -> None:
    for item_id, name, value in conn.execute(
            "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            "JOIN fieldsCombined f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID"):
        if item_id in items and value is not None:
            items[item_id].fields[str(name)] = str(value)
    for item_id, first, last, mode in conn.execute(
            "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic "
            "JOIN creators c ON c.creatorID = ic.creatorID ORDER BY ic.itemID, ic.orderIndex"):
        if item_id in items and (name := _name(first, last, mode)):
            items[item_id].creators.append(name)
    for item_id, name in conn.execute(
            "SELECT ci.itemID, c.collectionName FROM collectionItems ci "
            "JOIN collections c ON c.collectionID = ci.collectionID WHERE c.collectionID "
            "NOT IN (SELECT collectionID FROM deletedCollections) ORDER BY c.collectionName"):
        if item_id in items:
            items[item_id].collections.append(str(name))
    for item_id, name in conn.execute("SELECT it.itemID, t.name FROM itemTags it "
                                      "JOIN tags t ON t.tagID = it.tagID ORDER BY t.name"):
        if item_id in items:
            items[item_id].tags.append(str(name))
    for parent, item_id, key, mode, kind, path in conn.execute(
            "SELECT a.parentItemID, a.itemID, i.key, a.linkMode, a.contentType, a.path "
            "FROM itemAttachments a JOIN items i ON i.itemID = a.itemID "
            f"WHERE a.parentItemID IS NOT NULL AND a.itemID {_LIVE} ORDER BY a.itemID"):
        if parent in items:
            items[parent].attachments.append(ZoteroAttachment(
                int(item_id), str(key), int(mode if mode is not None else -1),
                str(kind or ""), str(path or "")))
    for parent, note in conn.execute(
            "SELECT n.parentItemID, n.note FROM itemNotes n WHERE n.parentItemID IS NOT NULL "
            f"AND n.itemID {_LIVE} AND n.itemID NOT IN (SELECT itemID FROM itemAttachments) "
            "ORDER BY n.itemID"):
        if parent in items and note:
            items[parent].notes.append(str(note))


def read_annotations(conn: sqlite3.Connection, attachment_id: int) -> list[ZoteroAnnotation]:
    """The annotations on one attachment, in Zotero's reading order (``sortIndex``)."""
    return [ZoteroAnnotation(ANNOTATION_TYPES.get(int(r[0]), "annotation"), str(r[1] or ""),
                             str(r[2] or ""), r[3], str(r[4]), str(r[5] or "{}"))
            for r in conn.execute(
                "SELECT type, text, comment, pageLabel, sortIndex, position "
                "FROM itemAnnotations WHERE parentItemID = ? "
                f"AND itemID {_LIVE} ORDER BY sortIndex, itemID", (attachment_id,))]
