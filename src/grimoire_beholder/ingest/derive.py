"""Roles and printed indexes judged again from what the library already stores.

Both are pure functions of stored data (section titles, text and markup hints; page labels
and page text), so a library written by an older version — or before the rules improved —
gets them without re-parsing or re-embedding anything: ``Library`` calls
:func:`refresh_if_needed` on a writable open, which refreshes when
``library_meta.derived_version`` differs from ``structure.roles.DERIVED_VERSION``. One
transaction per book, so a crash leaves every book either judged or as it was; the version
is stamped only after the last book.
"""

from __future__ import annotations

import contextlib
import sqlite3

from grimoire_beholder.errors import StorageError
from grimoire_beholder.store import book_rows, index_entries, role_rows
from grimoire_beholder.store.records import NewIndexEntry
from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.structure.book_index import page_texts, pages_of, resolve_entries
from grimoire_beholder.structure.roles import BODY, DERIVED_VERSION, INDEX, section_role, whole_book


def needed(conn: sqlite3.Connection) -> bool:
    return role_rows.derived_version(conn) != DERIVED_VERSION


def refresh(conn: sqlite3.Connection) -> int:
    """Judge every book's section roles and index entries again; the number of books."""
    books = book_rows.list_books(conn)
    for book in books:
        with transaction(conn):
            stored = role_rows.sections(conn, book.id)
            judged = whole_book([section_role(s.chapter_title, s.title, s.text, s.hints)
                                 for s in stored])
            roles = [(s.id, role) for s, role in zip(stored, judged, strict=True)]
            role_rows.set_roles(conn, roles)
            texts = [s.text for s, (_, role) in zip(stored, roles, strict=True)
                     if role == INDEX]
            entries = []
            if texts:
                pages = page_texts(role_rows.page_pieces(conn, book.id))
                back = pages_of((s.page_start, s.page_end)
                                for s, (_, role) in zip(stored, roles, strict=True)
                                if role != BODY)
                entries = [NewIndexEntry(**vars(e)) for e in resolve_entries(
                    texts, book.page_labels, pages, paged=book.source_type == "pdf",
                    back_pages=back)]
            index_entries.replace_entries(conn, book.id, entries)
    with transaction(conn):
        role_rows.stamp_derived(conn, DERIVED_VERSION)
    return len(books)


def refresh_if_needed(conn: sqlite3.Connection) -> None:
    """Judge section roles and printed indexes again when the rules changed (or the library
    predates them). Busy or read-only storage just means next time."""
    if needed(conn):
        with contextlib.suppress(StorageError):
            refresh(conn)
