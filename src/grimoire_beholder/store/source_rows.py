"""Books that come from a Calibre library or a Zotero data folder: which item of which
library each is, the link that opens it there, its metadata, and its labels (tags,
collections, series) for the search filters. Tables from schema 6 (``migrations._schema_v6``)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol

from grimoire_beholder.store.meta_rows import MetaStore, meta_delete, meta_prefixed, meta_put
from grimoire_beholder.store.records import BookRow

LABEL_KINDS: tuple[str, ...] = ("tag", "collection", "series")


class SourceStore(MetaStore, Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions:
    the rows; what they mean is decided here for both engines."""

    def save_library(self, path: str, kind: str) -> None: ...
    def libraries(self) -> list[tuple[str, str]]: ...
    def forget_library(self, path: str) -> None: ...
    def save_origin_rows(self, book_id: int, row: tuple[str, str, str, str, str],
                         labels: list[tuple[str, str]]) -> None: ...
    def rename_book(self, book_id: int, name: str, author: str | None) -> None: ...
    def stored_item_rows(self, library: str) -> list[tuple[Any, ...]]: ...
    def source_book_ids(self) -> set[int]: ...
    def origin_rows(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]: ...
    def label_rows(self, kind: str) -> list[tuple[Any, ...]]: ...
    def label_values(self, kind: str) -> list[str]: ...


Sources = sqlite3.Connection | SourceStore


@dataclass(frozen=True)
class Origin:
    """Where a book came from and what that library says about it."""

    library: str  # the library folder, resolved
    item: str  # Calibre book id, Zotero item key
    link: str  # calibre://show-book/… or zotero://select/library/items/…
    metadata: dict[str, Any] = field(default_factory=dict)
    metadata_hash: str = ""
    tags: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    series: str | None = None


@dataclass(frozen=True)
class StoredOrigin:
    """A stored book of a library, as a sync compares it."""

    book_id: int
    slug: str
    item: str
    metadata_hash: str
    content_key: str  # the book file's sha256 and what else went into its text
    source_path: str
    source_size: int
    source_mtime: float


def save_library(conn: Sources, path: str, kind: str) -> None:
    if not isinstance(conn, sqlite3.Connection):
        return conn.save_library(path, kind)
    conn.execute("INSERT INTO source_libraries (path, kind) VALUES (?, ?) "
                 "ON CONFLICT (path) DO UPDATE SET kind = excluded.kind", (path, kind))


def libraries(conn: Sources) -> list[tuple[str, str]]:
    """(path, kind) of every external library ingested, by path."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.libraries()
    return [(str(r[0]), str(r[1])) for r in
            conn.execute("SELECT path, kind FROM source_libraries ORDER BY path")]


def forget_library(conn: Sources, path: str) -> None:
    """Stop following the library at ``path``; books still tied to it lose their origin
    (``book_sources`` cascades), so move them first (``ingest/library_moves.py``)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.forget_library(path)
    conn.execute("DELETE FROM source_libraries WHERE path = ?", (path,))


def save_origin(conn: Sources, book_id: int, origin: Origin) -> None:
    """Record (or replace) where ``book_id`` came from and its labels."""
    row = (origin.library, origin.item, origin.link,
           json.dumps(origin.metadata, sort_keys=True, ensure_ascii=False),
           origin.metadata_hash)
    labels = [("tag", t) for t in origin.tags] + [("collection", c) for c in origin.collections]
    if origin.series:
        labels.append(("series", origin.series))
    # as a filter is asked for ('Ocean Physics ' in Zotero is --collection 'Ocean Physics')
    labels = sorted({(kind, value.strip()) for kind, value in labels if value.strip()})
    if not isinstance(conn, sqlite3.Connection):
        return conn.save_origin_rows(book_id, row, labels)
    conn.execute(
        "INSERT INTO book_sources (book_id, library, item, link, metadata, metadata_hash) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (book_id) DO UPDATE SET "
        "library = excluded.library, item = excluded.item, link = excluded.link, "
        "metadata = excluded.metadata, metadata_hash = excluded.metadata_hash",
        (book_id, *row))
    conn.execute("DELETE FROM book_labels WHERE book_id = ?", (book_id,))
    conn.executemany("INSERT OR IGNORE INTO book_labels (book_id, kind, value) VALUES (?, ?, ?)",
                     [(book_id, kind, value) for kind, value in labels])


def rename_book(conn: Sources, book_id: int, name: str, author: str | None) -> None:
    """A book's display name and author, as its library now has them."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.rename_book(book_id, name, author)
    conn.execute("UPDATE books SET name = ?, author = ?, "
                 "updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
                 (name, author, book_id))


def stored_items(conn: Sources, library: str) -> dict[str, StoredOrigin]:
    """The books of one library, keyed by item."""
    rows = conn.stored_item_rows(library) if not isinstance(conn, sqlite3.Connection) else (
        conn.execute(
        "SELECT s.book_id, b.slug, s.item, s.metadata_hash, s.metadata, b.source_path, "
        "b.source_size, b.source_mtime FROM book_sources s JOIN books b ON b.id = s.book_id "
        "WHERE s.library = ? ORDER BY s.book_id", (library,)).fetchall())
    return {str(r[2]): StoredOrigin(int(r[0]), str(r[1]), str(r[2]), str(r[3]),
                                    str(json.loads(r[4] or "{}").get("content_key", "")),
                                    str(r[5]), int(r[6]), float(r[7])) for r in rows}


# library_meta key prefix of a library item whose book was deleted, + JSON [library, item];
# the value is the library. Its sync leaves such an item out.
DROPPED_ITEM_KEY = "dropped-item:"


def drop_item(conn: Sources, library: str, item: str) -> None:
    """Keep ``item`` of ``library`` out of later syncs. Call inside a transaction."""
    meta_put(conn, DROPPED_ITEM_KEY + json.dumps([library, item]), library)


def undrop_item(conn: Sources, library: str, item: str) -> None:
    """Let sync see ``item`` of ``library`` again. Call inside a transaction."""
    meta_delete(conn, [DROPPED_ITEM_KEY + json.dumps([library, item])])


def dropped_items(conn: Sources, library: str) -> set[str]:
    """The items of ``library`` its sync leaves out: their books were deleted."""
    return {str(json.loads(key[len(DROPPED_ITEM_KEY):])[1])
            for key, value in meta_prefixed(conn, DROPPED_ITEM_KEY).items() if value == library}


def source_book_ids(conn: Sources) -> set[int]:
    """Books that a library sync owns (folder sync leaves them alone)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.source_book_ids()
    return {int(r[0]) for r in conn.execute("SELECT book_id FROM book_sources")}


def origins(conn: Sources, book_ids: list[int] | None = None) -> dict[int, Origin]:
    """Origin of each given book (all when None) that came from a library."""
    if book_ids is not None and not book_ids:
        return {}
    rows, label_rows = conn.origin_rows() if not isinstance(conn, sqlite3.Connection) else (
        _origin_rows(conn))
    wanted = None if book_ids is None else set(book_ids)
    labels: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for book_id, kind, value in label_rows:
        labels[int(book_id)][str(kind)].append(str(value))
    out = {}
    for r in rows:
        book_id = int(r[0])
        if wanted is not None and book_id not in wanted:
            continue
        own = labels.get(book_id, {})
        out[book_id] = Origin(str(r[1]), str(r[2]), str(r[3]), json.loads(r[4] or "{}"),
                              str(r[5]), tuple(own.get("tag", ())),
                              tuple(own.get("collection", ())),
                              _first(own.get("series")))
    return out


def _origin_rows(conn: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
    return (conn.execute("SELECT book_id, library, item, link, metadata, metadata_hash "
                         "FROM book_sources").fetchall(),
            conn.execute("SELECT book_id, kind, value FROM book_labels "
                         "ORDER BY book_id, kind, value").fetchall())


def _label_key(value: str) -> str:
    """What two labels must share to be the same: their text without surrounding spaces,
    in any case of any script ('Ökologie' is 'ökologie'; SQLite's NOCASE knows only ASCII)."""
    return value.strip().casefold()


def books_labelled(conn: Sources, kind: str, value: str) -> set[int]:
    """Books carrying the label ``value`` of ``kind`` (case-insensitive, exact)."""
    rows = (conn.execute("SELECT book_id, value FROM book_labels WHERE kind = ?",
                         (kind,)).fetchall()
            if isinstance(conn, sqlite3.Connection) else conn.label_rows(kind))
    wanted = _label_key(value)
    return {int(book) for book, stored in rows if _label_key(str(stored)) == wanted}


def label_values(conn: Sources, kind: str) -> list[str]:
    """Every value of a label kind in the library (for 'no such tag' messages)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.label_values(kind)
    return [str(r[0]) for r in conn.execute(
        "SELECT DISTINCT value FROM book_labels WHERE kind = ? ORDER BY value COLLATE NOCASE",
        (kind,))]


def attach_origins(conn: Sources, books: list[BookRow]) -> list[BookRow]:
    """``books``, each from a Calibre or Zotero library given its labels, link and metadata."""
    found = origins(conn, [b.id for b in books])
    for book in books:
        origin = found.get(book.id)
        if origin is not None:
            book.tags, book.collections = list(origin.tags), list(origin.collections)
            book.series, book.link = origin.series, origin.link
            book.metadata = {k: v for k, v in origin.metadata.items() if k != "content_key"}
    return books


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None
