-- The whole schema of a grimoire-beholder library (schema version 1).
-- Books → chapters → sections → chunks; embeddings and the FTS5 indexes hang off chunks.
-- Rows are keyed by (book, chapter_index, section_index, chunk_index) so re-ingesting a book
-- never duplicates anything. Deleting a book cascades to everything under it, except the
-- FTS5 tables (virtual tables know no foreign keys), which the store deletes explicitly in
-- the same transaction.
--
-- This file stays schema version 1; later versions are forward migrations in store/db.py.
-- Version 2 adds books.source_root (the folder given to `ingest DIR`, NULL for single
-- files), books.source_group (the top-level folder under that root, "" for files directly
-- in it) and the folder_roots table (each synced root with its include/exclude globs).
-- Version 3 renames all-digit slugs (`1` → `book-1`: they read as book ids), adds triggers
-- refusing such slugs, and library_meta.last_book_id (book ids are never given twice).
-- Version 4 adds search_log (chunk ids whose vector or FTS rows changed, for the persisted
-- search index to catch up from), its triggers on embeddings, and library_meta.library_id.
-- Version 5 adds sections.role and sections.hints (what part of the book a section is, and
-- the markup that said so) and the index_entries table (a printed back-of-book index).

CREATE TABLE IF NOT EXISTS library_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS books (
    id           INTEGER PRIMARY KEY,
    slug         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    author       TEXT,
    source_type  TEXT NOT NULL CHECK (source_type IN ('pdf', 'epub', 'markdown', 'text')),
    source_path  TEXT NOT NULL,
    source_hash  TEXT NOT NULL,            -- sha256 of the file's bytes
    source_size  INTEGER NOT NULL,
    source_mtime REAL NOT NULL,
    page_count   INTEGER,                  -- physical (PDF) or synthetic (EPUB) pages
    line_count   INTEGER,                  -- Markdown / text
    page_labels  TEXT,                     -- JSON {"physical page": "printed label"}
    added_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

CREATE TABLE IF NOT EXISTS chapters (
    id            INTEGER PRIMARY KEY,
    book_id       INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    chapter_index INTEGER NOT NULL,        -- 0-based, reading order
    title         TEXT NOT NULL,
    page_start    INTEGER,
    page_end      INTEGER,
    UNIQUE (book_id, chapter_index)
);

CREATE TABLE IF NOT EXISTS sections (
    id            INTEGER PRIMARY KEY,
    book_id       INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    chapter_id    INTEGER NOT NULL REFERENCES chapters(id) ON DELETE CASCADE,
    chapter_index INTEGER NOT NULL,
    section_index INTEGER NOT NULL,        -- 0-based within the chapter
    title         TEXT NOT NULL,           -- "" for a chapter's untitled lead-in
    breadcrumb    TEXT NOT NULL,           -- "Chapter › Section › Subsection"
    text          TEXT NOT NULL,
    approx_tokens INTEGER NOT NULL,
    page_start    INTEGER,
    page_end      INTEGER,
    line_start    INTEGER,
    line_end      INTEGER,
    summary       TEXT,                    -- NULL until the summary stage has run
    UNIQUE (book_id, chapter_index, section_index)
);

CREATE TABLE IF NOT EXISTS chunks (
    id            INTEGER PRIMARY KEY,
    book_id       INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    section_id    INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
    chapter_index INTEGER NOT NULL,
    section_index INTEGER NOT NULL,
    chunk_index   INTEGER NOT NULL,        -- 0-based within the section
    text          TEXT NOT NULL,
    char_start    INTEGER NOT NULL,        -- span in the section's text
    char_end      INTEGER NOT NULL,
    approx_tokens INTEGER NOT NULL,
    page_start    INTEGER,
    page_end      INTEGER,
    line_start    INTEGER,
    line_end      INTEGER,
    content_hash  TEXT NOT NULL,           -- sha256 of the chunk text + its section breadcrumb
    context       TEXT,                    -- situating context (NULL until contextualized)
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'contextualized', 'embedded')),
    UNIQUE (book_id, chapter_index, section_index, chunk_index)
);
CREATE INDEX IF NOT EXISTS chunks_status ON chunks (status, book_id);
CREATE INDEX IF NOT EXISTS chunks_section ON chunks (section_id);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks (content_hash);

-- One row per embedded chunk: little-endian float32, dimension and model in library_meta.
CREATE TABLE IF NOT EXISTS embeddings (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    book_id  INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    vector   BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS embeddings_book ON embeddings (book_id);

-- Keyword index, rowid = chunks.id. Word index: porter stemming over unicode61 with accents
-- folded. Trigram index over the same chunk text so scripts without spaces (CJK) are findable.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, context, section, chapter, book,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_trigram USING fts5(
    text,
    tokenize = 'trigram'
);
