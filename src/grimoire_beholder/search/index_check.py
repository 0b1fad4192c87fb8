"""What ``check`` says about the persisted search index beside the database.

Opening the index checks its structure and totals against the library, never its bytes:
at a million chunks they are gigabytes. ``check`` is where a user asks whether anything is
damaged, so here every file the manifest names is read and compared with the CRC-32
written beside it. A damaged file is a problem (the disk may be failing, and a file
damaged in place, same size, would still be searched); an index that is missing, stale or
another library's is only reported: searches then use the exact arms and the next writing
command rebuilds it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from grimoire_beholder.search import segment_files
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.search.index_writer import min_rows
from grimoire_beholder.store import vectors


def inspect(conn: sqlite3.Connection, db_path: Path) -> tuple[str, list[str]]:
    """(the index's state in a few words, its problems)."""
    folder = segment_files.folder_for(db_path)
    embedded = vectors.signature(conn).count
    if embedded < min_rows():
        return f"none (below {min_rows():,} embedded chunks, searches scan exactly)", []
    manifest = segment_files.read_manifest(folder)
    if manifest is None:
        try:
            there = (folder / segment_files.MANIFEST).exists()
        except OSError:  # a folder this user may not read
            there = True
        what = "unreadable or of another version" if there else "missing"
        return f"{what} (searches use the exact arms; the next writing command builds it)", []
    damaged: list[str] = []
    for entry in manifest["segments"]:
        try:
            damaged += segment_files.load_segment(folder, entry["name"]).damaged()
        except ValueError as exc:
            damaged.append(str(exc))
    if damaged:
        return "damaged", [
            f"the search index {folder} is damaged ({'; '.join(damaged[:5])}); delete that "
            "folder: it is a cache, and the next writing command (sync, ingest, delete) "
            "rebuilds it"]
    if SearchIndex(db_path).refresh(conn, exact_vectors=False) != "persisted":
        return ("not used: it does not match this library (another library or model, a "
                "later state, or changes it cannot catch up with); the next writing "
                "command rebuilds it"), []
    count = len(manifest['segments'])
    return f"in use ({embedded:,} chunks in {count} segment{'s' * (count != 1)})", []
