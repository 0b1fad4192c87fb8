"""Books from Calibre and Zotero libraries in PostgreSQL: the libraries followed, each book's
item, link, metadata and labels. The rows only: ``store/source_rows.py`` reads and decides
the same for both engines. Methods of :class:`SourceRowsMixin`, mixed into
``pg_engine.PostgresEngine``."""

from __future__ import annotations

from typing import Any

from grimoire_beholder.store.postgres.pg_base import PgBase
from grimoire_beholder.store.postgres.pg_schema import NOW


class SourceRowsMixin(PgBase):
    def save_library(self, path: str, kind: str) -> None:
        self.run("INSERT INTO source_libraries (path, kind) VALUES (%s, %s) "
                 "ON CONFLICT (path) DO UPDATE SET kind = excluded.kind", (path, kind))

    def libraries(self) -> list[tuple[str, str]]:
        return [(str(r[0]), str(r[1])) for r in self.rows(
            "SELECT path, kind FROM source_libraries ORDER BY path COLLATE \"C\"")]

    def forget_library(self, path: str) -> None:
        self.run("DELETE FROM source_libraries WHERE path = %s", (path,))

    def save_origin_rows(self, book_id: int, row: tuple[str, str, str, str, str],
                         labels: list[tuple[str, str]]) -> None:
        self.run("INSERT INTO book_sources (book_id, library, item, link, metadata, "
                 "metadata_hash) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (book_id) DO "
                 "UPDATE SET library = excluded.library, item = excluded.item, "
                 "link = excluded.link, metadata = excluded.metadata, "
                 "metadata_hash = excluded.metadata_hash", (book_id, *row))
        self.run("DELETE FROM book_labels WHERE book_id = %s", (book_id,))
        self.run_many("INSERT INTO book_labels (book_id, kind, value) VALUES (%s, %s, %s)",
                      [(book_id, kind, value) for kind, value in labels])

    def rename_book(self, book_id: int, name: str, author: str | None) -> None:
        self.run(f"UPDATE books SET name = %s, author = %s, updated_at = {NOW} WHERE id = %s",
                 (name, author, book_id))

    def stored_item_rows(self, library: str) -> list[tuple[Any, ...]]:
        return self.rows(
            "SELECT s.book_id, b.slug, s.item, s.metadata_hash, s.metadata, b.source_path, "
            "b.source_size, b.source_mtime FROM book_sources s JOIN books b ON b.id = s.book_id "
            "WHERE s.library = %s ORDER BY s.book_id", (library,))

    def source_book_ids(self) -> set[int]:
        return {int(r[0]) for r in self.rows("SELECT book_id FROM book_sources")}

    def origin_rows(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        return (self.rows("SELECT book_id, library, item, link, metadata, metadata_hash "
                          "FROM book_sources"),
                self.rows("SELECT book_id, kind, value FROM book_labels "
                          "ORDER BY book_id, kind, value COLLATE \"C\""))

    def label_rows(self, kind: str) -> list[tuple[Any, ...]]:
        return self.rows("SELECT book_id, value FROM book_labels WHERE kind = %s", (kind,))

    def label_values(self, kind: str) -> list[str]:
        return [str(r[0]) for r in self.rows(
            "SELECT value FROM (SELECT DISTINCT value FROM book_labels WHERE kind = %s) v "
            "ORDER BY lower(value), value COLLATE \"C\"", (kind,))]
