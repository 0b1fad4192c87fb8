"""grimoire-beholder: a local, offline library of books and documents for AI assistants.

The public API::

    from grimoire_beholder import Library
    with Library.open() as lib:            # config.toml / $GRIMOIRE_BEHOLDER_CONFIG / defaults
        lib.ingest("book.pdf")
        for hit in lib.search("how do I rebase?").hits:
            print(hit.book, hit.chapter, hit.page_start, hit.text)

Names are resolved lazily so that importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import (
    BookNotFoundError,
    ConfigError,
    EmbeddingMismatchError,
    GrimoireError,
    InputFileError,
    LibraryBusyError,
    ModelError,
    NotFoundError,
    SlugConflictError,
    StorageError,
)

if TYPE_CHECKING:
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library
    from grimoire_beholder.search.hits import SearchHit, SearchResults

__all__ = [
    "BookNotFoundError", "Config", "ConfigError", "EmbeddingMismatchError", "GrimoireError",
    "InputFileError", "Library", "LibraryBusyError", "ModelError", "NotFoundError",
    "SearchHit", "SearchResults", "SlugConflictError", "StorageError",
]

_LAZY = {
    "Library": ".library",
    "Config": ".config",
    "SearchHit": ".search.hits",
    "SearchResults": ".search.hits",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'grimoire_beholder' has no attribute {name!r}")
