"""The library's health check: SQLite's own integrity check plus our consistency rules.

The rules are the ones the crash tests hold every interrupted library to: every embedded
chunk has exactly one vector of the stamped size and one row in each keyword index, and
nothing else has any; no row points at a parent that is gone. Reading only, so it runs on
a read-only library too (the FTS5 self-check, which SQLite phrases as an INSERT, only runs
when the connection may write).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from grimoire_beholder.errors import StorageError
from grimoire_beholder.store import vectors

_MAX_MESSAGES = 20

# (problem when the count is not 0, SQL counting the offending rows)
_RULES: tuple[tuple[str, str], ...] = (
    ("embedded chunks without a vector",
     "SELECT count(*) FROM chunks c WHERE c.status = 'embedded' "
     "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)"),
    ("vectors of chunks that are not embedded",
     "SELECT count(*) FROM embeddings e LEFT JOIN chunks c ON c.id = e.chunk_id "
     "WHERE c.id IS NULL OR c.status != 'embedded'"),
    ("embedded chunks missing from the keyword index",
     "SELECT count(*) FROM chunks c WHERE c.status = 'embedded' "
     "AND c.id NOT IN (SELECT rowid FROM chunks_fts)"),
    ("keyword rows of chunks that are not embedded",
     "SELECT count(*) FROM chunks_fts f WHERE f.rowid NOT IN "
     "(SELECT id FROM chunks WHERE status = 'embedded')"),
    ("embedded chunks missing from the trigram index",
     "SELECT count(*) FROM chunks c WHERE c.status = 'embedded' "
     "AND c.id NOT IN (SELECT rowid FROM chunks_fts_trigram)"),
    ("trigram rows of chunks that are not embedded",
     "SELECT count(*) FROM chunks_fts_trigram f WHERE f.rowid NOT IN "
     "(SELECT id FROM chunks WHERE status = 'embedded')"),
)


_FIGURES = {
    "books": "SELECT count(*) FROM books",
    "chunks": "SELECT count(*) FROM chunks",
    "embedded_chunks": "SELECT count(*) FROM chunks WHERE status = 'embedded'",
    "vectors": "SELECT count(*) FROM embeddings",
    "fts_rows": "SELECT count(*) FROM chunks_fts",
    "trigram_rows": "SELECT count(*) FROM chunks_fts_trigram",
}


@dataclass
class LibraryCheck:
    """What ``check`` found: ``problems`` is empty when the library is sound."""

    database: str
    problems: list[str] = field(default_factory=list)
    figures: dict[str, int] = field(default_factory=dict)
    search_index: str = "not checked"  # the persisted search index (search/index_check.py)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, object]:
        return {"database": self.database, "ok": self.ok, "problems": self.problems,
                "figures": self.figures, "search_index": self.search_index}


def check(conn: sqlite3.Connection, database: str, *, writable: bool) -> LibraryCheck:
    """Run every check; damage is reported as problems, never raised."""
    result = LibraryCheck(database=database)

    def count(what: str, sql: str, *args: object) -> int | None:
        try:
            return int(conn.execute(sql, args).fetchone()[0])
        except StorageError as exc:  # a damaged page under this query
            result.problems.append(f"cannot read {what}: {exc.__cause__ or exc}")
            return None

    try:
        report = [r[0] for r in conn.execute(f"PRAGMA integrity_check({_MAX_MESSAGES})")]
    except StorageError as exc:  # the damage stops SQLite before it can even look
        result.problems.append(f"SQLite cannot check the file: {exc.__cause__ or exc}")
        return result
    messages = [m for r in report for m in r.splitlines() if not m.startswith("***")]
    if messages != ["ok"]:
        result.problems += [f"SQLite integrity check: {m}" for m in messages]
    for name, sql in _FIGURES.items():
        if (n := count(f"the {name.replace('_', ' ')}", sql)) is not None:
            result.figures[name] = n
    orphans = count("the references between rows",
                    "SELECT count(*) FROM pragma_foreign_key_check")
    if orphans:
        result.problems.append(f"{orphans} rows point at a book, chapter, section or chunk "
                               "that is gone")
    for problem, sql in _RULES:
        if n := count(problem, sql):
            result.problems.append(f"{n} {problem}")
    try:
        stamp = vectors.get_stamp(conn)
    except StorageError as exc:
        result.problems.append(f"cannot read the embedding stamp: {exc.__cause__ or exc}")
        stamp = None
    if stamp is not None:
        wrong = "SELECT count(*) FROM embeddings WHERE length(vector) != ?"
        if n := count("the vectors", wrong, stamp[1] * 4):  # float32
            result.problems.append(f"{n} vectors whose size is not the stamped {stamp[1]} "
                                   "dimensions")
    if writable:
        _check_fts(conn, result)
    return result


def _check_fts(conn: sqlite3.Connection, result: LibraryCheck) -> None:
    """FTS5's own check of its index structure (phrased as an INSERT, so writable only)."""
    for table in ("chunks_fts", "chunks_fts_trigram"):
        try:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        except (sqlite3.DatabaseError, StorageError) as exc:
            result.problems.append(f"the keyword index {table} is damaged "
                                   f"({exc.__cause__ or exc}); `grimoire-beholder "
                                   "reindex-fts` rebuilds it")
