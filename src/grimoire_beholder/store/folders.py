"""Folder libraries in the store: the synced roots, and replacing a changed book in place.

Replacing is what makes ``sync`` cheap. A changed file is re-parsed and re-chunked, then in
ONE transaction the old book is deleted and the new structure inserted under the same id and
slug, and every new chunk whose ``content_hash`` (text + section breadcrumb) existed in the
old book gets the old chunk's context, status, vector and FTS rows; every new section whose
breadcrumb and text are unchanged gets the old summary. Only what is left (pending chunks,
NULL summaries) then meets the models. The vector generation is bumped by the delete, in the
same transaction, so in-memory vector indexes rebuild (see ``store.vectors``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from grimoire_beholder.store import book_rows, fts, vectors
from grimoire_beholder.store.records import NewBook


@dataclass(frozen=True)
class FolderRoot:
    """A folder ingested with ``ingest DIR``, with the globs it was ingested with."""

    path: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]


def list_roots(conn: sqlite3.Connection) -> list[FolderRoot]:
    return [FolderRoot(r[0], tuple(json.loads(r[1])), tuple(json.loads(r[2])))
            for r in conn.execute("SELECT path, include, exclude FROM folder_roots ORDER BY path")]


# library_meta key prefix of a file of a synced folder whose book was deleted, + its path;
# the value is the root it was found under. Sync leaves such a file out.
DROPPED_KEY = "dropped:"


def drop_file(conn: sqlite3.Connection, path: str, root: str) -> None:
    """Keep ``path`` (under synced ``root``) out of later syncs. Call inside a transaction."""
    conn.execute("INSERT OR REPLACE INTO library_meta (key, value) VALUES (?, ?)",
                 (DROPPED_KEY + path, root))


def undrop_file(conn: sqlite3.Connection, path: str) -> None:
    """Let sync see ``path`` again (it was ingested by name). Call inside a transaction."""
    conn.execute("DELETE FROM library_meta WHERE key = ?", (DROPPED_KEY + path,))


def dropped_files(conn: sqlite3.Connection) -> set[str]:
    """The paths sync leaves out: books deleted from a synced folder."""
    return {r[0][len(DROPPED_KEY):] for r in conn.execute(
        "SELECT key FROM library_meta WHERE substr(key, 1, ?) = ?",
        (len(DROPPED_KEY), DROPPED_KEY))}


def forget_root(conn: sqlite3.Connection, root: str) -> list[int]:
    """Stop following ``root``: its row and its dropped files go; its books stay, as books
    of single files (no root, no group). Returns their ids. Call inside a transaction."""
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM books WHERE source_root = ?",
                                           (root,))]
    conn.execute("UPDATE books SET source_root = NULL, source_group = '' "
                 "WHERE source_root = ?", (root,))
    conn.execute("DELETE FROM library_meta WHERE substr(key, 1, ?) = ? AND value = ?",
                 (len(DROPPED_KEY), DROPPED_KEY, root))
    conn.execute("DELETE FROM folder_roots WHERE path = ?", (root,))
    return ids


def save_root(conn: sqlite3.Connection, root: FolderRoot) -> None:
    """Remember (or update the globs of) a root. Call inside a transaction."""
    conn.execute(
        "INSERT INTO folder_roots (path, include, exclude) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET include = excluded.include, "
        "exclude = excluded.exclude",
        (root.path, json.dumps(list(root.include)), json.dumps(list(root.exclude))),
    )


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


def stored_files(conn: sqlite3.Connection) -> list[StoredFile]:
    """Every book's source file, by book id — but for the books of a Calibre or Zotero
    library, which that library's sync follows (``ingest/external.py``)."""
    return [StoredFile(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), float(r[6]), r[7],
                       r[8] or "") for r in conn.execute(
        "SELECT id, slug, name, source_path, source_hash, source_size, source_mtime, "
        "source_root, source_group FROM books "
        "WHERE id NOT IN (SELECT book_id FROM book_sources) ORDER BY id")]


def embedded_hashes(conn: sqlite3.Connection, book_id: int) -> set[str]:
    """Content hashes of a book's embedded chunks (what a replacement could reuse)."""
    return {r[0] for r in conn.execute(
        "SELECT content_hash FROM chunks WHERE book_id = ? AND status = 'embedded'",
        (book_id,))}


def unfinished_books(conn: sqlite3.Connection) -> set[int]:
    """Books with a chunk not yet embedded or a section not yet summarised."""
    return {int(r[0]) for r in conn.execute(
        "SELECT book_id FROM chunks WHERE status != 'embedded' "
        "UNION SELECT book_id FROM sections WHERE summary IS NULL")}


def update_file_stat(conn: sqlite3.Connection, book_id: int, size: int, mtime: float) -> None:
    """Record a new mtime/size for a file whose bytes (sha256) did not change."""
    conn.execute("UPDATE books SET source_size = ?, source_mtime = ? WHERE id = ?",
                 (size, mtime, book_id))


@dataclass
class Reuse:
    """What a replacement carried over from the old book."""

    chunks: int = 0  # chunks that kept context/status (and vector when embedded)
    vectors: int = 0
    summaries: int = 0


def replace_book(conn: sqlite3.Connection, old_id: int, new_book: NewBook) -> Reuse:
    """Replace book ``old_id`` by ``new_book`` (same id), reusing unchanged work.

    Call inside a transaction (the caller's, so delete + insert + copy commit together).
    """
    stamp = vectors.get_stamp(conn)
    old_chunks: dict[str, tuple[str | None, str, bytes | None]] = {}
    for h, context, status, blob in conn.execute(
        "SELECT c.content_hash, c.context, c.status, e.vector FROM chunks c "
        "LEFT JOIN embeddings e ON e.chunk_id = c.id "
        "WHERE c.book_id = ? AND c.status != 'pending' ORDER BY c.id", (old_id,)):
        if status == "embedded" and blob is None:
            status = "contextualized"  # a vector gone missing: embed it again
        old_chunks.setdefault(h, (context, status, blob))
    old_summaries: dict[tuple[str, str], str] = {}
    for crumb, text, summary in conn.execute(
        "SELECT breadcrumb, text, summary FROM sections WHERE book_id = ? "
        "AND summary IS NOT NULL", (old_id,)):
        old_summaries.setdefault((crumb, text), summary)
    added_at = conn.execute("SELECT added_at FROM books WHERE id = ?", (old_id,)).fetchone()

    book_rows.delete_book(conn, old_id)  # FTS rows too, and bumps the vector generation
    book_id = book_rows.insert_book(conn, new_book, book_id=old_id)
    if added_at is not None:
        conn.execute("UPDATE books SET added_at = ? WHERE id = ?", (added_at[0], book_id))

    reuse = Reuse()
    summaries = [(old_summaries[(r[1], r[2])], r[0]) for r in conn.execute(
        "SELECT id, breadcrumb, text FROM sections WHERE book_id = ?", (book_id,))
        if (r[1], r[2]) in old_summaries]
    conn.executemany("UPDATE sections SET summary = ? WHERE id = ?", summaries)
    reuse.summaries = len(summaries)

    updates: list[tuple[str | None, str, int]] = []
    blobs: list[tuple[int, int, bytes]] = []
    for chunk_id, h in conn.execute(
            "SELECT id, content_hash FROM chunks WHERE book_id = ?", (book_id,)).fetchall():
        found = old_chunks.get(h)
        if found is None:
            continue
        context, status, blob = found
        updates.append((context, status, int(chunk_id)))
        if status == "embedded" and blob is not None:
            blobs.append((int(chunk_id), book_id, blob))
    conn.executemany("UPDATE chunks SET context = ?, status = ? WHERE id = ?", updates)
    conn.executemany("INSERT INTO embeddings (chunk_id, book_id, vector) VALUES (?, ?, ?)",
                     blobs)
    fts.index_chunks(conn, [b[0] for b in blobs])
    if blobs and stamp is not None:
        vectors.ensure_stamp(conn, *stamp)  # delete_book may have cleared it
    reuse.chunks = len(updates)
    reuse.vectors = len(blobs)
    return reuse
