"""The queries that read a Zotero data folder's ``zotero.sqlite`` (a private copy of it, see
``foreign_copy.py``): the user library's regular items with their fields, creators,
collections and tags, their attachments, and the annotations and notes on them. Zotero's
own schema (``resource/schema/userdata.sql``), as plain values for ``sources/zotero.py``;
nothing here is ever written. Items in the
trash (``deletedItems``) are left out."""

from __future__ import annotations

import sqlite3
from typing import Any

from grimoire_beholder.errors import InputFileError

_LIVE = "NOT IN (SELECT itemID FROM deletedItems)"
# Zotero's annotation types (Zotero.Annotations.ANNOTATION_TYPE_*).
ANNOTATION_TYPES = {1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline",
                    6: "text"}


def _name(first: str | None, last: str | None, mode: int | None) -> str:
    if mode == 1 or not first:
        return (last or "").strip()
    return f"{first.strip()} {(last or '').strip()}".strip()


def read_items(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The user library's regular items (not attachments, notes or annotations), by id, as
    the fields of ``sources.zotero.ZoteroItem`` (attachments as those of
    ``ZoteroAttachment``); InputFileError when this is no Zotero database."""
    try:
        items = {int(r[0]): _item(int(r[0]), str(r[1]), str(r[2])) for r in conn.execute(
            "SELECT i.itemID, i.key, t.typeName FROM items i "
            "JOIN itemTypesCombined t ON t.itemTypeID = i.itemTypeID "
            "JOIN libraries l ON l.libraryID = i.libraryID WHERE l.type = 'user' "
            "AND t.typeName NOT IN ('attachment', 'note', 'annotation') "
            f"AND i.itemID {_LIVE} ORDER BY i.itemID")}
        _fill(conn, items)
    except sqlite3.DatabaseError as exc:
        raise InputFileError(f"not a Zotero database ({exc})") from exc
    return list(items.values())


def _item(item_id: int, key: str, item_type: str) -> dict[str, Any]:
    return {"item_id": item_id, "key": key, "item_type": item_type, "fields": {},
            "creators": [], "collections": [], "tags": [], "attachments": [], "notes": []}


def _fill(conn: sqlite3.Connection, items: dict[int, dict[str, Any]]) -> None:
    for item_id, name, value in conn.execute(
            "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            "JOIN fieldsCombined f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID"):
        if item_id in items and value is not None:
            items[item_id]["fields"][str(name)] = str(value)
    for item_id, first, last, mode in conn.execute(
            "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic "
            "JOIN creators c ON c.creatorID = ic.creatorID ORDER BY ic.itemID, ic.orderIndex"):
        if item_id in items and (name := _name(first, last, mode)):
            items[item_id]["creators"].append(name)
    live = ("WHERE c.collectionID NOT IN (SELECT collectionID FROM deletedCollections) "
            if _has_table(conn, "deletedCollections") else "")  # an older Zotero's has none
    for item_id, name in conn.execute(
            "SELECT ci.itemID, c.collectionName FROM collectionItems ci "
            f"JOIN collections c ON c.collectionID = ci.collectionID {live}"
            "ORDER BY c.collectionName"):
        if item_id in items:
            items[item_id]["collections"].append(str(name))
    for item_id, name in conn.execute("SELECT it.itemID, t.name FROM itemTags it "
                                      "JOIN tags t ON t.tagID = it.tagID ORDER BY t.name"):
        if item_id in items:
            items[item_id]["tags"].append(str(name))
    for parent, item_id, key, mode, kind, path in conn.execute(
            "SELECT a.parentItemID, a.itemID, i.key, a.linkMode, a.contentType, a.path "
            "FROM itemAttachments a JOIN items i ON i.itemID = a.itemID "
            f"WHERE a.parentItemID IS NOT NULL AND a.itemID {_LIVE} ORDER BY a.itemID"):
        if parent in items:
            items[parent]["attachments"].append({
                "item_id": int(item_id), "key": str(key),
                "link_mode": int(mode if mode is not None else -1),
                "content_type": str(kind or ""), "path": str(path or "")})
    for parent, note in conn.execute(
            "SELECT n.parentItemID, n.note FROM itemNotes n WHERE n.parentItemID IS NOT NULL "
            f"AND n.itemID {_LIVE} AND n.itemID NOT IN (SELECT itemID FROM itemAttachments) "
            "ORDER BY n.itemID"):
        if parent in items and note:
            items[parent]["notes"].append(str(note))


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database has this table (one older Zotero versions did not make)."""
    return conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None


def read_annotations(conn: sqlite3.Connection) -> dict[int, list[dict[str, Any]]]:
    """Every live annotation, by the attachment it is on, in Zotero's reading order
    (``sortIndex``), as the fields of ``sources.zotero.ZoteroAnnotation``; none from an
    older Zotero's database, which has no ``itemAnnotations``; InputFileError when the
    table is there but cannot be read."""
    out: dict[int, list[dict[str, Any]]] = {}
    try:
        if not _has_table(conn, "itemAnnotations"):
            return out
        for parent, kind, text, comment, label, order, position in conn.execute(
                "SELECT parentItemID, type, text, comment, pageLabel, sortIndex, position "
                f"FROM itemAnnotations WHERE itemID {_LIVE} ORDER BY parentItemID, "
                "sortIndex, itemID"):
            out.setdefault(int(parent), []).append({
                "kind": ANNOTATION_TYPES.get(int(kind), "annotation"),
                "text": str(text or ""), "comment": str(comment or ""), "page_label": label,
                "sort_index": str(order), "position": str(position or "{}")})
    except sqlite3.DatabaseError as exc:
        raise InputFileError(f"not a Zotero database ({exc})") from exc
    return out
