"""User-facing errors.

Every error the library raises on purpose is a :class:`GrimoireError` whose message is one
line a person can act on. The adapters (CLI, MCP server) map these to an exit code or a tool
error; anything else is a bug and is allowed to show a traceback.
"""

from __future__ import annotations


class GrimoireError(Exception):
    """Base class: a one-line, user-facing message."""

    exit_code = 1


class ConfigError(GrimoireError):
    """The configuration file is missing, unreadable, or has a bad key or value."""

    exit_code = 2


class InputFileError(GrimoireError):
    """A file cannot be ingested (missing, unsupported, empty, corrupt, encrypted, ...)."""


class NoTextError(InputFileError):
    """A file holds nothing to index (empty, only whitespace, only headings). Asked for by
    name it is an error; met in a folder ingest or sync it is skipped with a warning."""


class BookNotFoundError(GrimoireError):
    """A book slug or id names no book in the library."""


class SlugConflictError(GrimoireError):
    """A different file would take a slug that is already in the library."""


class NotFoundError(GrimoireError):
    """A chapter or section index is out of range."""


class NoPageImagesError(GrimoireError):
    """The book's format has no pages to render (EPUB, Markdown, text)."""


class StorageError(GrimoireError):
    """The database cannot be opened, is read-only, full, or from an incompatible version."""


class LibraryDamagedError(StorageError):
    """The library file has damaged pages, or is not a library database at all.

    Raised wherever SQLite reports corruption (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``), so no
    command ends in a traceback; the message names the file and what to do about it.
    """


class ReadOnlyLibraryError(StorageError):
    """A write was asked of a library that is read-only here (read-only media, permissions,
    or opened read-only on purpose, as the MCP server does)."""


class ModelError(GrimoireError):
    """A model backend is unreachable, missing a model, or returned something unusable."""


class EmbeddingMismatchError(ModelError):
    """The library was embedded with a different model or dimension than configured."""


class LibraryBusyError(GrimoireError):
    """Another process holds the library's write lock (e.g. a second ingest)."""
