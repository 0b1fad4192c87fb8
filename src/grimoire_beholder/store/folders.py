"""Folder libraries in the store: the synced roots, and replacing a changed book in place.

Replacing is what makes ``sync`` cheap. A changed file is re-parsed and re-chunked, then in
ONE transaction the old book is deleted and the new structure inserted under the same id and
slug, and every new chunk whose ``content_hash`` (text + section breadcrumb) existed in the
old book gets the old chunk's context, status, vector and FTS rows; every new section whose
breadcrumb and text are unchanged gets the old summary. Only what is left (pending chunks,
NULL summaries) then meets the models. A book renamed by its replacement (``ingest --force
--name``, a title edited in Calibre or Zotero) carries no model work over: every context
names its book (and an LLM's summary may), so all of it is made again, as for a new book.
The vector generation is bumped by the delete, in the same transaction, so in-memory vector
indexes rebuild (see ``store.vectors``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from grimoire_beholder.store import book_rows, fts, vectors
from grimoire_beholder.store.meta_rows import MetaStore, meta_delete, meta_prefixed, meta_put
from grimoire_beholder.store.records import NewBook


@dataclass(frozen=True)
class FolderRoot:
    """A folder ingested with ``ingest DIR``, with the globs it was ingested with."""

    path: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class StoredFile:
    """What sync needs to know about a book's source file."""

    book_id: int
    slug: str
    name: str
    path: str
    sha256: str
    size: int
    mtime: float
    root: str | None
    group: str


@dataclass
class Reuse:
    """What a replacement carried over from the old book."""

    chunks: int = 0  # chunks that kept context/status (and vector when embedded)
    vectors: int = 0
    summaries: int = 0


@dataclass
class OldWork:
    """What a replaced book had done, to carry over: by chunk content hash (context, status,
    vector as the engine stores it), by section (breadcrumb, text) its summary; and the
    book's name, which that work was made for."""

    chunks: dict[str, tuple[str | None, str, object | None]]
    summaries: dict[tuple[str, str], str]
    added_at: str | None
    name: str | None


class FolderStore(MetaStore, vectors.StampStore, Protocol):
    """What a server engine (``store.server_engine``) answers for this module's functions."""

    def list_roots(self) -> list[FolderRoot]: ...
    def save_root(self, root: FolderRoot) -> None: ...
    def forget_root(self, root: str) -> list[int]: ...
    def stored_files(self) -> list[StoredFile]: ...
    def embedded_hashes(self, book_id: int) -> set[str]: ...
    def unfinished_books(self) -> set[int]: ...
    def update_file_stat(self, book_id: int, size: int, mtime: float) -> None: ...
    # replace_book's steps
    def old_work(self, book_id: int) -> OldWork: ...
    def insert_book(self, book: NewBook, book_id: int | None = None) -> int: ...
    def delete_book(self, book_id: int) -> None: ...
    def new_rows(self, book_id: int) -> tuple[list[tuple[int, str, str]],
                                              list[tuple[int, str]]]: ...
    def write_carried(self, book_id: int, added_at: str | None,
                      summaries: list[tuple[str, int]],
                      updates: list[tuple[str | None, str, int]],
                      vectors: list[tuple[int, int, object]],
                      stamp: tuple[str, int] | None) -> None: ...


def list_roots(conn: sqlite3.Connection | FolderStore) -> list[FolderRoot]:
    if not isinstance(conn, sqlite3.Connection):
        return conn.list_roots()
    return [FolderRoot(r[0], tuple(json.loads(r[1])), tuple(json.loads(r[2])))
            for r in conn.execute("SELECT path, include, exclude FROM folder_roots ORDER BY path")]


# library_meta key prefix of a file of a synced folder whose book was deleted, + its path;
# the value is the root it was found under. Sync leaves such a file out.
DROPPED_KEY = "dropped:"


def drop_file(conn: sqlite3.Connection | FolderStore, path: str, root: str) -> None:
    """Keep ``path`` (under synced ``root``) out of later syncs. Call inside a transaction."""
    meta_put(conn, DROPPED_KEY + path, root)


def undrop_file(conn: sqlite3.Connection | FolderStore, path: str) -> None:
    """Let sync see ``path`` again (it was ingested by name). Call inside a transaction."""
    meta_delete(conn, [DROPPED_KEY + path])


def dropped_files(conn: sqlite3.Connection | FolderStore) -> set[str]:
    """The paths sync leaves out: books deleted from a synced folder."""
    return {key[len(DROPPED_KEY):] for key in meta_prefixed(conn, DROPPED_KEY)}


def forget_root(conn: sqlite3.Connection | FolderStore, root: str) -> list[int]:
    """Stop following ``root``: its row and its dropped files go; its books stay, as books
    of single files (no root, no group). Returns their ids. Call inside a transaction."""
    meta_delete(conn, [key for key, value in meta_prefixed(conn, DROPPED_KEY).items()
                       if value == root])
    if not isinstance(conn, sqlite3.Connection):
        return conn.forget_root(root)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM books WHERE source_root = ?",
                                           (root,))]
    conn.execute("UPDATE books SET source_root = NULL, source_group = '' "
                 "WHERE source_root = ?", (root,))
    conn.execute("DELETE FROM folder_roots WHERE path = ?", (root,))
    return ids


def save_root(conn: sqlite3.Connection | FolderStore, root: FolderRoot) -> None:
    """Remember (or update the globs of) a root. Call inside a transaction."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.save_root(root)
    conn.execute(
        "INSERT INTO folder_roots (path, include, exclude) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET include = excluded.include, "
        "exclude = excluded.exclude",
        (root.path, json.dumps(list(root.include)), json.dumps(list(root.exclude))),
    )


def stored_files(conn: sqlite3.Connection | FolderStore) -> list[StoredFile]:
    """Every book's source file, by book id — but for the books of a Calibre or Zotero
    library, which that library's sync follows (``ingest/external.py``)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.stored_files()
    return [StoredFile(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), float(r[6]), r[7],
                       r[8] or "") for r in conn.execute(
        "SELECT id, slug, name, source_path, source_hash, source_size, source_mtime, "
        "source_root, source_group FROM books "
        "WHERE id NOT IN (SELECT book_id FROM book_sources) ORDER BY id")]


def embedded_hashes(conn: sqlite3.Connection | FolderStore, book_id: int) -> set[str]:
    """Content hashes of a book's embedded chunks (what a replacement could reuse)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.embedded_hashes(book_id)
    return {r[0] for r in conn.execute(
        "SELECT content_hash FROM chunks WHERE book_id = ? AND status = 'embedded'",
        (book_id,))}


def unfinished_books(conn: sqlite3.Connection | FolderStore) -> set[int]:
    """Books with a chunk not yet embedded or a section not yet summarised."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.unfinished_books()
    return {int(r[0]) for r in conn.execute(
        "SELECT book_id FROM chunks WHERE status != 'embedded' "
        "UNION SELECT book_id FROM sections WHERE summary IS NULL")}


def update_file_stat(conn: sqlite3.Connection | FolderStore, book_id: int, size: int,
                     mtime: float) -> None:
    """Record a new mtime/size for a file whose bytes (sha256) did not change."""
    if not isinstance(conn, sqlite3.Connection):
        return conn.update_file_stat(book_id, size, mtime)
    conn.execute("UPDATE books SET source_size = ?, source_mtime = ? WHERE id = ?",
                 (size, mtime, book_id))


def replace_book(conn: sqlite3.Connection | FolderStore, old_id: int,
                 new_book: NewBook) -> Reuse:
    """Replace book ``old_id`` by ``new_book`` (same id), reusing unchanged work.

    Call inside a transaction (the caller's, so delete + insert + copy commit together).
    Which work carries over is decided here for every engine; each engine only reads and
    writes the rows (``_SqliteSteps`` below, ``postgres/pg_folders.py``). Under another
    name none does (the module's docstring): its chunks start pending, its sections
    unsummarised, and the model stages make them again, each checkpointed as for a new book.
    """
    steps: FolderStore | _SqliteSteps = (
        _SqliteSteps(conn) if isinstance(conn, sqlite3.Connection) else conn)
    stamp = vectors.get_stamp(conn)
    old = steps.old_work(old_id)
    if old.name != new_book.name:  # the contexts name the book: nothing of it carries over
        old = OldWork({}, {}, old.added_at, old.name)
    steps.delete_book(old_id)  # FTS rows too, and bumps the vector generation
    book_id = steps.insert_book(new_book, old_id)
    new_sections, new_chunks = steps.new_rows(book_id)
    summaries = [(old.summaries[(crumb, text)], section_id)
                 for section_id, crumb, text in new_sections if (crumb, text) in old.summaries]
    updates: list[tuple[str | None, str, int]] = []
    kept: list[tuple[int, int, object]] = []
    for chunk_id, content_hash in new_chunks:
        found = old.chunks.get(content_hash)
        if found is None:
            continue
        context, status, vector = found
        updates.append((context, status, chunk_id))
        if status == "embedded" and vector is not None:
            kept.append((chunk_id, book_id, vector))
    steps.write_carried(book_id, old.added_at, summaries, updates, kept, stamp)
    return Reuse(chunks=len(updates), vectors=len(kept), summaries=len(summaries))


def old_work(chunk_rows: Iterable[tuple[str, str | None, str, object | None]],
             section_rows: Iterable[tuple[str, str, str]], added_at: str | None,
             name: str | None) -> OldWork:
    """The work of a book about to be replaced, from its non-pending chunks (content hash,
    context, status, vector or None) in id order and its summarised sections (breadcrumb,
    text, summary), and its name: the first of equal chunks or sections wins; a chunk
    marked embedded whose vector is missing is embedded again."""
    chunks: dict[str, tuple[str | None, str, object | None]] = {}
    for content_hash, context, status, vector in chunk_rows:
        if status == "embedded" and vector is None:
            status = "contextualized"
        chunks.setdefault(content_hash, (context, status, vector))
    summaries: dict[tuple[str, str], str] = {}
    for crumb, text, summary in section_rows:
        summaries.setdefault((crumb, text), summary)
    return OldWork(chunks, summaries, added_at, name)


class _SqliteSteps:
    """``replace_book``'s reads and writes on a SQLite library."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def old_work(self, book_id: int) -> OldWork:
        conn = self.conn
        added = conn.execute("SELECT added_at, name FROM books WHERE id = ?",
                             (book_id,)).fetchone()
        return old_work(
            conn.execute("SELECT c.content_hash, c.context, c.status, e.vector FROM chunks c "
                         "LEFT JOIN embeddings e ON e.chunk_id = c.id "
                         "WHERE c.book_id = ? AND c.status != 'pending' ORDER BY c.id",
                         (book_id,)).fetchall(),
            conn.execute("SELECT breadcrumb, text, summary FROM sections WHERE book_id = ? "
                         "AND summary IS NOT NULL ORDER BY id", (book_id,)).fetchall(),
            added[0] if added else None, added[1] if added else None)

    def delete_book(self, book_id: int) -> None:
        book_rows.delete_book(self.conn, book_id)

    def insert_book(self, book: NewBook, book_id: int | None = None) -> int:
        return book_rows.insert_book(self.conn, book, book_id=book_id)

    def new_rows(self, book_id: int) -> tuple[list[tuple[int, str, str]],
                                              list[tuple[int, str]]]:
        conn = self.conn
        return ([(int(r[0]), r[1], r[2]) for r in conn.execute(
                    "SELECT id, breadcrumb, text FROM sections WHERE book_id = ?", (book_id,))],
                [(int(r[0]), r[1]) for r in conn.execute(
                    "SELECT id, content_hash FROM chunks WHERE book_id = ?", (book_id,))])

    def write_carried(self, book_id: int, added_at: str | None,
                      summaries: list[tuple[str, int]],
                      updates: list[tuple[str | None, str, int]],
                      kept: list[tuple[int, int, object]],
                      stamp: tuple[str, int] | None) -> None:
        conn = self.conn
        if added_at is not None:
            conn.execute("UPDATE books SET added_at = ? WHERE id = ?", (added_at, book_id))
        conn.executemany("UPDATE sections SET summary = ? WHERE id = ?", summaries)
        conn.executemany("UPDATE chunks SET context = ?, status = ? WHERE id = ?", updates)
        conn.executemany("INSERT INTO embeddings (chunk_id, book_id, vector) VALUES (?, ?, ?)",
                         kept)
        fts.index_chunks(conn, [k[0] for k in kept])
        if kept and stamp is not None:
            vectors.ensure_stamp(conn, *stamp)  # delete_book may have cleared it
