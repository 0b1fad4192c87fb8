"""Where each top-level command lives, and what ``--help`` says of it before it is imported.

The CLI imports a command's module only when that command runs (``app.Commands``): a cold
``query`` does not import ``serve-mcp``'s, ``ingest``'s or ``eval``'s code. ``--help``
lists every command from this table alone: its help panel and the first sentence of its help
(all click's one-line summary ever shows). tests/test_cli_entry.py checks the table against
the commands themselves, so a command added, moved or reworded without it fails there.
"""

from __future__ import annotations

from typing import NamedTuple


class Listed(NamedTuple):
    """A command as the table knows it."""

    module: str  # the module under ``grimoire_beholder.cli`` that registers it
    panel: str  # its help panel (``help_pages.PANELS``)
    summary: str  # its help up to the end of the first sentence


# By module; ``--help`` orders them by help_pages.ORDER (the ones it does not name follow,
# alphabetically, as click lists them).
COMMANDS: dict[str, Listed] = {
    "verify": Listed("extra_commands", "Ask it", "Check a quotation: where it is (book, "
                     "chapter, section, page or lines), the book's own words, and what "
                     "differs."),
    "page": Listed("extra_commands", "Read it", "Write a PDF page as a PNG with the cited "
                   "words highlighted (the library is only read)."),
    "health": Listed("extra_commands", "Check it", "Per book: how much of it retrieval finds "
                     "from its own text, and what looks wrong (pages without text, empty "
                     "sections, contents pages, garbled text)."),
    "lookup": Listed("extra_commands", "Ask it", "Look a term up in the books' printed "
                     "back-of-book indexes: each entry's pages (the file's page and the "
                     "printed one) and the sections there."),
    "ingest": Listed("library_commands", "Build the library", "Parse a file (or every file "
                     "under a folder) into chapters, sections and chunks, then contextualize "
                     "and embed them."),
    "sync": Listed("library_commands", "Build the library", "Bring the library in line with "
                   "the files: re-embed only changed chunks, drop deleted files, follow "
                   "moves, add new files under ingested folders."),
    "list": Listed("library_commands", "Read it", "Every book with author, type, pages, "
                   "chapters, sections and chunk status counts."),
    "delete": Listed("library_commands", "Build the library", "Remove a book and everything "
                     "under it (one transaction)."),
    "unfollow": Listed("library_commands", "Build the library", "Stop following a folder: "
                       "sync adds none of its new files again."),
    "status": Listed("library_commands", "Check it", "The library's embedding model (and "
                     "the configured one, when it differs), database path, and per-book "
                     "counts by status."),
    "check": Listed("library_commands", "Check it", "Check the library file: SQLite's "
                    "integrity check and the index consistency rules."),
    "reindex-fts": Listed("library_commands", "Check it", "Drop and rebuild the keyword "
                          "(FTS5) index from embedded chunks."),
    "query": Listed("library_commands", "Ask it", "Hybrid search over the library, with "
                    "book · chapter · section · page citations."),
    "outline": Listed("reading_commands", "Read it", "A book's chapters and sections, with "
                      "the CHAPTER and SECTION numbers `show` takes."),
    "show": Listed("reading_commands", "Read it", "A section's citation, summary and full "
                   "text: what the assistant's get_section reads."),
    "serve-mcp": Listed("serve_commands", "Assistants", "Serve the library to AI assistants "
                        "over MCP: on stdio, read-only unless an --allow-* option adds an "
                        "upkeep tool; or with --http over the network, each request with a "
                        "token."),
    "mcp-config": Listed("setup_commands", "Assistants", "Print the MCP server entry for an "
                         "assistant, with absolute paths to this installation and the "
                         "library; --write merges it into the assistant's config file."),
    "token": Listed("token_commands", "Assistants", "Access tokens for serve-mcp --http: make "
                    "one (printed once), list them, revoke one."),
    "eval": Listed("tool_commands", "Check it", "Score retrieval on a question set: "
                   "recall@1/5/10, MRR@10 and abstention per mode."),
    "stats": Listed("tool_commands", "Check it", "Cumulative token savings: passage text "
                    "served vs the full books it came from."),
    "hook": Listed("tool_commands", "Assistants", "Hooks for AI assistants (Claude Code): "
                   "print library context."),
    "web": Listed("web_commands", "Read it", "Read the library in a browser: books, "
                  "outlines, sections, search, PDF pages with the passage marked, quotation "
                  "check and printed index."),
}
