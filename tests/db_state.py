"""Snapshots of a library database for tests that must prove "unchanged" or "equal"."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path


def snapshot(db: Path) -> str:
    """A digest of every row of every table (FTS shadow tables too): equal means unchanged."""
    conn = sqlite3.connect(db)
    try:
        digest = hashlib.sha256()
        for line in conn.iterdump():
            digest.update(line.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()
    finally:
        conn.close()


def library_state(db: Path) -> dict[str, object]:
    """Everything a reader could see, keyed by stable identities (not autoincrement ids)."""
    conn = sqlite3.connect(db)
    try:
        q = conn.execute
        return {
            "books": q("SELECT slug, name, author, source_type, source_hash, page_count "
                       "FROM books ORDER BY slug").fetchall(),
            "chapters": q("SELECT b.slug, chapter_index, title, c.page_start, c.page_end "
                          "FROM chapters c JOIN books b ON b.id = c.book_id "
                          "ORDER BY 1, 2").fetchall(),
            "sections": q("SELECT b.slug, chapter_index, section_index, title, breadcrumb, "
                          "summary, text FROM sections s JOIN books b ON b.id = s.book_id "
                          "ORDER BY 1, 2, 3").fetchall(),
            "chunks": q("SELECT b.slug, chapter_index, section_index, chunk_index, text, "
                        "context, status, content_hash, e.vector FROM chunks c "
                        "JOIN books b ON b.id = c.book_id "
                        "LEFT JOIN embeddings e ON e.chunk_id = c.id "
                        "ORDER BY 1, 2, 3, 4").fetchall(),
            "fts": q("SELECT count(*) FROM chunks_fts").fetchone()[0],
            "trigram": q("SELECT count(*) FROM chunks_fts_trigram").fetchone()[0],
            "integrity": q("PRAGMA integrity_check").fetchone()[0],
        }
    finally:
        conn.close()
