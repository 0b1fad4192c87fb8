"""Stop following a folder given to ``ingest DIR``: ``sync`` adds none of its files again."""

from __future__ import annotations

import os
from pathlib import Path

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.store import book_rows, folders
from grimoire_beholder.store.records import BookRow
from grimoire_beholder.store.transactions import transaction


def unfollow(deps: IngestDeps, folder: str | os.PathLike[str], *,
             delete_books: bool = False) -> tuple[str, list[BookRow]]:
    """Forget the followed ``folder`` (under the writer lock, in one transaction); its books
    stay, as books of single files, unless ``delete_books``. Returns the folder as stored
    and the books it held; InputFileError when it is not followed."""
    conn = deps.conn
    roots = [r.path for r in folders.list_roots(conn)]
    given = Path(folder).expanduser()
    real = str(given.resolve()) if given.exists() else str(given.absolute())
    if real not in roots:
        shown = ", ".join(roots) or "none"
        raise InputFileError(f"{given}: not a followed folder; followed: {shown}")
    books = [b for b in book_rows.list_books(conn) if b.source_root == real]
    deleted = books if delete_books else []
    with deps.library_writer(), deps.book_writer(*(b.source_hash for b in deleted)), (
            transaction(conn)):
        folders.forget_root(conn, real)
        for b in deleted:
            book_rows.delete_book(conn, b.id)
    return real, books
