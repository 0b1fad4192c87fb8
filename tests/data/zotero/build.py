"""Rebuild the Zotero fixture data folder (``zotero.sqlite`` + ``storage/``) from Zotero's
own published schema.

Usage, from the repository root, with a checkout of Zotero's repository (the schema is
``resource/schema/{system,userdata,triggers}.sql``, run in that order as Zotero's
``schema.js`` does for a new database)::

    uv run python tests/data/zotero/build.py PATH/TO/zotero/resource/schema

Only the database this makes and the attachment files are kept in the repository, never
Zotero's SQL (AGPL-3.0; see README.md here). The rows are ours: the few item types and
fields the items use (Zotero fills those tables from its global schema at start-up), a user
library, and items with creators, a collection, tags, attachments, a highlight and a note.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
PAGES = [
    "Tidal Friction and the Length of the Day. The tides raised by the Moon drag on the "
    "spinning Earth and slow it down.",
    "Measured by lunar laser ranging, the Moon recedes by 3.8 centimetres a year, while the "
    "day grows longer by about two milliseconds a century.",
    "Ancient coral growth rings record about four hundred days a year in the Devonian.",
]
SNAPSHOT = """<!DOCTYPE html><html><head><title>Composting at home</title></head><body>
<nav><a href="/">Home</a></nav><main><h1>Composting at home</h1>
<h2>Greens and browns</h2><p>Mix green kitchen scraps with brown leaves and cardboard, one
part greens to two parts browns, and turn the heap every fortnight.</p>
<h2>Worms</h2><p>Brandling worms thrive in a bin kept moist and out of the sun.</p>
</main><footer>Garden Club newsletter</footer></body></html>"""
TYPES = ["annotation", "attachment", "journalArticle", "note", "webpage"]
FIELDS = ["title", "date", "DOI", "publicationTitle", "url"]


def _pdf(path: Path) -> None:
    doc = pymupdf.open()
    for text in PAGES:
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 770), text, fontsize=11)
    doc.save(str(path))


class _Zotero:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.next_id = 1

    def item(self, kind: str, key: str, fields: dict[str, str] | None = None) -> int:
        item_id, self.next_id = self.next_id, self.next_id + 1
        self.conn.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) "
                          "VALUES (?, ?, 1, ?)", (item_id, TYPES.index(kind) + 1, key))
        for name, value in (fields or {}).items():
            self.conn.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)",
                              (value,))
            (value_id,) = self.conn.execute("SELECT valueID FROM itemDataValues "
                                            "WHERE value = ?", (value,)).fetchone()
            self.conn.execute("INSERT INTO itemData VALUES (?, ?, ?)",
                              (item_id, FIELDS.index(name) + 1, value_id))
        return item_id

    def creators(self, item_id: int, names: list[tuple[str, str]]) -> None:
        for order, (first, last) in enumerate(names):
            self.conn.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) "
                              "VALUES (?, ?, 0)", (first, last))
            (creator,) = self.conn.execute("SELECT creatorID FROM creators WHERE "
                                           "firstName = ? AND lastName = ?",
                                           (first, last)).fetchone()
            self.conn.execute("INSERT INTO itemCreators VALUES (?, ?, 1, ?)",
                              (item_id, creator, order))

    def tag(self, item_id: int, name: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (name,))
        (tag,) = self.conn.execute("SELECT tagID FROM tags WHERE name = ?", (name,)).fetchone()
        self.conn.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item_id, tag))

    def attachment(self, parent: int, key: str, mode: int, kind: str, path: str) -> int:
        item_id = self.item("attachment", key)
        self.conn.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, "
                          "contentType, path) VALUES (?, ?, ?, ?, ?)",
                          (item_id, parent, mode, kind, path))
        return item_id


def build(schema: Path) -> None:
    db = HERE / "zotero.sqlite"
    db.unlink(missing_ok=True)
    shutil.rmtree(HERE / "storage", ignore_errors=True)
    conn = sqlite3.connect(db)
    for name in ("system", "userdata", "triggers"):
        conn.executescript((schema / f"{name}.sql").read_text(encoding="utf-8"))
    conn.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) "
                 "VALUES (1, 'user', 1, 1)")
    for n, name in enumerate(TYPES, 1):
        conn.execute("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", (n, name))
        conn.execute("INSERT INTO itemTypesCombined VALUES (?, ?, 1, 0)", (n, name))
    for n, name in enumerate(FIELDS, 1):
        conn.execute("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)", (n, name))
        conn.execute("INSERT INTO fieldsCombined (fieldID, fieldName, custom) "
                     "VALUES (?, ?, 0)", (n, name))
    conn.execute("INSERT INTO creatorTypes VALUES (1, 'author')")
    z = _Zotero(conn)
    paper = z.item("journalArticle", "TIDES234", {
        "title": "Tidal Friction and the Length of the Day", "date": "2021-03-04",
        "DOI": "10.5555/tides.2021.7", "publicationTitle": "Journal of Coastal Physics"})
    z.creators(paper, [("Ada", "Marsh"), ("Ben", "Flood")])
    for tag in ("tides", "geophysics"):
        z.tag(paper, tag)
    conn.execute("INSERT INTO collections (collectionID, collectionName, libraryID, key) "
                 "VALUES (1, 'Ocean Physics', 1, 'COLL2345')")
    conn.execute("INSERT INTO collectionItems VALUES (1, ?, 0)", (paper,))
    pdf = z.attachment(paper, "PDF23456", 0, "application/pdf", "storage:tidal-friction.pdf")
    (HERE / "storage" / "PDF23456").mkdir(parents=True)
    _pdf(HERE / "storage" / "PDF23456" / "tidal-friction.pdf")
    highlight = z.item("annotation", "ANNOT234")
    conn.execute("INSERT INTO itemAnnotations (itemID, parentItemID, type, text, comment, "
                 "color, pageLabel, sortIndex, position, isExternal) "
                 "VALUES (?, ?, 1, ?, ?, '#ffd400', '2', '00001|000100|00200', ?, 0)",
                 (highlight, pdf, "the Moon recedes by 3.8 centimetres a year",
                  "the figure for my chapter on lunar drift",
                  json.dumps({"pageIndex": 1, "rects": [[72, 690, 500, 704]]})))
    note = z.item("note", "NOTE2345")
    conn.execute("INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?, ?, ?, ?)",
                 (note, paper, "<div><p>Compare with the coral growth-ring counts.</p></div>",
                  "Compare with the coral growth-ring counts."))
    page = z.item("webpage", "WEB23456", {"title": "Composting at home",
                                          "url": "http://garden.example/compost"})
    z.tag(page, "garden")
    z.attachment(page, "SNAP2345", 1, "text/html", "storage:compost.html")
    (HERE / "storage" / "SNAP2345").mkdir(parents=True)
    (HERE / "storage" / "SNAP2345" / "compost.html").write_text(SNAPSHOT, encoding="utf-8")
    link_only = z.item("journalArticle", "LINK2345", {"title": "A Paper Known Only by Link"})
    z.attachment(link_only, "URL23456", 3, "text/html", "")
    trashed = z.item("journalArticle", "TRASH234", {"title": "A Paper in the Trash"})
    z.attachment(trashed, "TPDF2345", 0, "application/pdf", "storage:tidal-friction.pdf")
    conn.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (trashed,))
    conn.commit()
    conn.execute("VACUUM")
    conn.close()


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (Path(sys.argv[1]) / "userdata.sql").is_file():
        sys.exit("usage: build.py ZOTERO_CHECKOUT/resource/schema")
    build(Path(sys.argv[1]))
