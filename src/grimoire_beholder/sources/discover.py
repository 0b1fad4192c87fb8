"""Which application's library a folder is.

A Calibre library is a folder holding ``metadata.db``; a Zotero data folder one holding
``zotero.sqlite``. Anything else is a plain folder (``ingest/folder.py`` scans it).
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.sources.items import CALIBRE_DB, ZOTERO_DB, is_file


def detect(folder: Path) -> str | None:
    """"calibre" or "zotero" for a folder holding that application's database, else None."""
    if is_file(folder / CALIBRE_DB):
        return "calibre"
    if is_file(folder / ZOTERO_DB):
        return "zotero"
    return None
