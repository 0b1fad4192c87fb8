"""Folder libraries in PostgreSQL: synced roots, the files sync compares, notes kept in
``library_meta``, and the reads and writes of replacing a changed book in place.

The same contracts as ``store/folders.py`` and ``store/meta_rows.py`` (whose types these
return); what carries over when a book is replaced is decided there, for both engines.
Methods of :class:`FolderRowsMixin`, mixed into ``pg_engine.PostgresEngine``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING

from grimoire_beholder.store.folders import FolderRoot, OldWork, StoredFile, old_work
from grimoire_beholder.store.postgres.pg_base import PgBase


class FolderRowsMixin(PgBase):
    # -- library_meta notes -------------------------------------------------------------
    def meta_put(self, key: str, value: str) -> None:
        self.run("INSERT INTO library_meta (key, value) VALUES (%s, %s) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def meta_delete(self, keys: Collection[str]) -> None:
        self.run("DELETE FROM library_meta WHERE key = ANY(%s)", (list(keys),))

    def meta_prefixed(self, prefix: str) -> dict[str, str]:
        return {str(r[0]): str(r[1]) for r in self.rows(
            "SELECT key, value FROM library_meta WHERE left(key, %s) = %s",
            (len(prefix), prefix))}

    # -- roots and files ----------------------------------------------------------------
    def list_roots(self) -> list[FolderRoot]:
        return [FolderRoot(r[0], tuple(json.loads(r[1])), tuple(json.loads(r[2])))
                for r in self.rows("SELECT path, include, exclude FROM folder_roots "
                                   "ORDER BY path COLLATE \"C\"")]

    def save_root(self, root: FolderRoot) -> None:
        self.run("INSERT INTO folder_roots (path, include, exclude) VALUES (%s, %s, %s) "
                 "ON CONFLICT (path) DO UPDATE SET include = excluded.include, "
                 "exclude = excluded.exclude",
                 (root.path, json.dumps(list(root.include)), json.dumps(list(root.exclude))))

    def forget_root(self, root: str) -> list[int]:
        ids = [int(r[0]) for r in self.rows(
            "UPDATE books SET source_root = NULL, source_group = '' WHERE source_root = %s "
            "RETURNING id", (root,))]
        self.run("DELETE FROM folder_roots WHERE path = %s", (root,))
        return sorted(ids)

    def stored_files(self) -> list[StoredFile]:
        return [StoredFile(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), float(r[6]), r[7],
                           r[8] or "") for r in self.rows(
            "SELECT id, slug, name, source_path, source_hash, source_size, source_mtime, "
            "source_root, source_group FROM books "
            "WHERE id NOT IN (SELECT book_id FROM book_sources) ORDER BY id")]

    def embedded_hashes(self, book_id: int) -> set[str]:
        return {str(r[0]) for r in self.rows(
            "SELECT content_hash FROM chunks WHERE book_id = %s AND status = 'embedded'",
            (book_id,))}

    def unfinished_books(self) -> set[int]:
        return {int(r[0]) for r in self.rows(
            "SELECT book_id FROM chunks WHERE status != 'embedded' "
            "UNION SELECT book_id FROM sections WHERE summary IS NULL")}

    def update_file_stat(self, book_id: int, size: int, mtime: float) -> None:
        self.run("UPDATE books SET source_size = %s, source_mtime = %s WHERE id = %s",
                 (size, mtime, book_id))

    # -- replacing a changed book in place (folders.replace_book decides) ---------------
    def old_work(self, book_id: int) -> OldWork:
        vectors = bool(self.execute_one("SELECT to_regclass('embeddings') IS NOT NULL")[0])
        chunk_sql = ("SELECT c.content_hash, c.context, c.status, e.vector FROM chunks c "
                     "LEFT JOIN embeddings e ON e.chunk_id = c.id " if vectors else
                     "SELECT c.content_hash, c.context, c.status, NULL FROM chunks c ")
        added = self.rows("SELECT added_at, name FROM books WHERE id = %s", (book_id,))
        return old_work(
            [(r[0], r[1], r[2], r[3]) for r in self.rows(
                chunk_sql + "WHERE c.book_id = %s AND c.status != 'pending' ORDER BY c.id",
                (book_id,))],
            [(r[0], r[1], r[2]) for r in self.rows(
                "SELECT breadcrumb, text, summary FROM sections WHERE book_id = %s "
                "AND summary IS NOT NULL ORDER BY id", (book_id,))],
            added[0][0] if added else None, added[0][1] if added else None)

    def new_rows(self, book_id: int) -> tuple[list[tuple[int, str, str]],
                                              list[tuple[int, str]]]:
        return ([(int(r[0]), r[1], r[2]) for r in self.rows(
                    "SELECT id, breadcrumb, text FROM sections WHERE book_id = %s",
                    (book_id,))],
                [(int(r[0]), r[1]) for r in self.rows(
                    "SELECT id, content_hash FROM chunks WHERE book_id = %s", (book_id,))])

    def write_carried(self, book_id: int, added_at: str | None,
                      summaries: list[tuple[str, int]],
                      updates: list[tuple[str | None, str, int]],
                      kept: list[tuple[int, int, object]],
                      stamp: tuple[str, int] | None) -> None:
        if added_at is not None:
            self.run("UPDATE books SET added_at = %s WHERE id = %s", (added_at, book_id))
        self.run_many("UPDATE sections SET summary = %s WHERE id = %s", list(summaries))
        self.run_many("UPDATE chunks SET context = %s, status = %s WHERE id = %s",
                      list(updates))
        if kept and stamp is not None:
            self.ensure_stamp(*stamp)  # delete_book may have dropped the vector table
        self.run_many("INSERT INTO embeddings (chunk_id, book_id, vector) VALUES (%s, %s, %s)",
                      list(kept))
        self.index_chunks([k[0] for k in kept])

    if TYPE_CHECKING:  # from pg_stages.StageRowsMixin, mixed in beside this one
        def ensure_stamp(self, identity: str, dimension: int) -> None: ...
        def index_chunks(self, chunk_ids: list[int]) -> None: ...
