"""A Calibre library or Zotero data folder ingested from a new place: moved or renamed
(Calibre's "move library", a new disk, a renamed folder).

Its books were remembered under the old folder, which is gone; ingesting it where it is now
would add every book a second time, and every sync would warn about the old folder for good.
Instead the library is recognised (:func:`moved_from`): a remembered library of the same kind
whose folder no longer holds it, at least half of whose stored items the new one holds with a
file of the same size (the item's key alone is no proof: every Calibre library has a book 1).
Its books then follow it (:func:`follow_move`): their origin, the items left out after their
books were deleted, and the library itself are re-pointed in one transaction, and the sync
that follows finds each book's same bytes at a new path — *moved*, no model call.

The same holds for a book that was there before its library: a file of a Calibre library
ingested on its own (or kept when the library was unfollowed) is adopted by the library's
item for that very file (:func:`single_file_book`) — its title, labels and link are written
onto it (*updated*) — rather than becoming a second book of one file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grimoire_beholder.sources.discover import detect
from grimoire_beholder.sources.items import SourceItem, SourceLibrary
from grimoire_beholder.store import book_rows, source_rows
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.store.transactions import transaction


def _same_file(item: SourceItem, stored: source_rows.StoredOrigin) -> bool:
    try:
        return item.file is not None and item.file.stat().st_size == stored.source_size
    except OSError:
        return False


def moved_from(conn: Store, library: SourceLibrary) -> str | None:
    """The folder ``library`` was remembered at before it moved, or None (it is remembered
    where it is, or is no library seen before)."""
    known = source_rows.libraries(conn)
    if any(path == str(library.path) for path, _ in known):
        return None
    best: tuple[int, str] | None = None
    for path, kind in known:
        if kind != library.kind or detect(Path(path)) == kind:
            continue  # another kind, or still there: not this one moved
        stored = source_rows.stored_items(conn, path)
        same = sum(1 for item in library.items
                   if item.key in stored and _same_file(item, stored[item.key]))
        if same and 2 * same >= len(stored) and (best is None or same > best[0]):
            best = (same, path)
    return best[1] if best is not None else None


def follow_move(conn: Store, old: str, library: SourceLibrary) -> None:
    """Re-point the books of the items ``library`` holds, the left-out items and the
    remembered library from ``old`` to ``library``'s folder, in one transaction (the caller
    holds the library writer lock).

    A book whose item the new folder lacks stays with ``old``, which stays remembered while
    it has one: the "move" may be a partial copy made while the original's drive was
    unplugged, and the sync that follows would otherwise remove that book for good (the
    original, plugged back in, no longer followed). Its sync keeps warning about ``old``
    until it is back or the book is deleted."""
    new = str(library.path)
    keys = {item.key for item in library.items}
    stays = False
    with transaction(conn):
        source_rows.save_library(conn, new, library.kind)
        for book_id, origin in source_rows.origins(conn).items():
            if origin.library != old:
                continue
            if origin.item in keys:
                source_rows.save_origin(conn, book_id, replace(origin, library=new))
            else:
                stays = True
        for item in source_rows.dropped_items(conn, old):
            source_rows.drop_item(conn, new, item)
            if not stays:
                source_rows.undrop_item(conn, old, item)
        if not stays:
            source_rows.forget_library(conn, old)


def single_file_book(conn: Store, path: str, sha256: str, item: str
                     ) -> source_rows.StoredOrigin | None:
    """The book of the file at ``path`` (these bytes) that no library or followed folder
    owns, as a stored item of ``item`` whose metadata differs (so the sync step rewrites
    it); None when there is none."""
    owned = source_rows.source_book_ids(conn)
    for book in book_rows.books_of_file(conn, path):
        if (book.source_hash == sha256 and book.id not in owned
                and book.source_root is None):
            return source_rows.StoredOrigin(
                book.id, book.slug, item, metadata_hash="", content_key=f"{sha256}:",
                source_path=path, source_size=int(book.source_size or 0),
                source_mtime=float(book.source_mtime or 0.0))
    return None
