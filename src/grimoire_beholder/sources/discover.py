"""Which application's library a folder is, and reading it.

A Calibre library is a folder holding ``metadata.db``; a Zotero data folder one holding
``zotero.sqlite``. Anything else is a plain folder (``ingest/folder.py`` scans it).
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.sources.items import CALIBRE_DB, DEFAULT_FORMATS, ZOTERO_DB, SourceLibrary


def detect(folder: Path) -> str | None:
    """"calibre" or "zotero" for a folder holding that application's database, else None."""
    if (folder / CALIBRE_DB).is_file():
        return "calibre"
    if (folder / ZOTERO_DB).is_file():
        return "zotero"
    return None


def read_library(folder: Path, order: tuple[str, ...] = DEFAULT_FORMATS) -> SourceLibrary:
    """Read the Calibre library or Zotero data folder at ``folder`` (see :func:`detect`)."""
    kind = detect(folder)
    if kind == "calibre":
        from grimoire_beholder.sources.calibre import read_calibre

        return read_calibre(folder.resolve(), order)
    if kind == "zotero":
        from grimoire_beholder.sources.zotero import read_zotero

        return read_zotero(folder.resolve(), order)
    raise ValueError(f"{folder} is neither a Calibre library nor a Zotero data folder")


