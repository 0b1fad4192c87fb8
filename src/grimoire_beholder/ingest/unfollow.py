"""Stop following a folder given to ``ingest DIR`` — a folder of files, or a Calibre library or
Zotero data folder: ``sync`` adds none of its files or items again."""

from __future__ import annotations

import os
from pathlib import Path

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.store import book_rows, folders, source_rows
from grimoire_beholder.store.records import BookRow
from grimoire_beholder.store.transactions import transaction


def unfollow(deps: IngestDeps, folder: str | os.PathLike[str], *,
             delete_books: bool = False) -> tuple[str, list[BookRow]]:
    """Forget the followed ``folder`` (under the writer lock, in one transaction); its books
    stay, as books of single files, unless ``delete_books``. Returns the folder as stored
    and the books it held; InputFileError when it is not followed."""
    conn = deps.conn
    roots = [r.path for r in folders.list_roots(conn)]
    libraries = [path for path, _ in source_rows.libraries(conn)]
    given = Path(folder).expanduser()
    real = str(given.resolve()) if given.exists() else str(given.absolute())
    if real not in roots and real not in libraries:
        shown = ", ".join(sorted(roots + libraries)) or "none"
        raise InputFileError(f"{given}: not a followed folder; followed: {shown}")
    if real in libraries:  # a Calibre library or Zotero data folder
        ids = {s.book_id for s in source_rows.stored_items(conn, real).values()}
        books = [b for b in book_rows.list_books(conn) if b.id in ids]
    else:
        books = [b for b in book_rows.list_books(conn) if b.source_root == real]
    deleted = books if delete_books else []
    with deps.library_writer(), deps.book_writer(*(b.source_hash for b in deleted)), (
            transaction(conn)):
        if real in libraries:  # its books lose its link, labels and metadata (cascade)
            for item in source_rows.dropped_items(conn, real):
                source_rows.undrop_item(conn, real, item)
            source_rows.forget_library(conn, real)
        else:
            folders.forget_root(conn, real)
        for b in deleted:
            book_rows.delete_book(conn, b.id)
    return real, books
