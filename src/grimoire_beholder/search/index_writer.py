"""Keeping the persisted search index current: run by writing commands, after they commit.

``update`` looks at the index beside the database. Missing, foreign, stale beyond the log,
changed in most of its chunks, or inconsistent with the library → it is rebuilt from the
database (``built``); otherwise
the chunks changed since it was written are folded in as one new segment, and the chunk ids
they replace are marked dead in the older segments (``updated``). Small segments are merged
as they accumulate (the newer two whenever the older holds at most 4× the newer, up to
``MAX_SEGMENT_ROWS``), and a segment more than a third dead is rewritten, so a library
keeps a handful of segments.

Nothing here writes the database except pruning the change log, and only entries older than
the previous manifest (a reader may still be catching up from that one). The new files are
fsynced before the manifest that names them is atomically replaced, so a kill at any point
leaves the previous index or the new one, never a mix; a leftover half-written segment is
never named by a manifest and is deleted by the next update. Below ``MIN_ROWS`` embedded
chunks there is no index: the exact arms are faster there (bench/scale.py).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

from grimoire_beholder import faults, portable
from grimoire_beholder.search import segment_files
from grimoire_beholder.search.persisted import PersistedIndex, normalise_rows, stamps
from grimoire_beholder.store import hit_queries, index_source, vectors
from grimoire_beholder.store.transactions import transaction

MIN_ROWS = 10_000
MIN_ROWS_ENV = "GRIMOIRE_BEHOLDER_INDEX_MIN_ROWS"  # tests and benches only: override MIN_ROWS
MAX_SEGMENT_ROWS = 250_000
FOLD_MIN = 2_000  # a smaller change waits for the end of the command (``force``)


@contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """One index writer at a time (a second one skips: the first will catch up). The lock
    file is never truncated, nor followed if it is a link."""
    folder.mkdir(parents=True, exist_ok=True)
    with portable.exclusive(folder / "lock") as held:
        yield held


# What an update did: too few chunks for an index, another writer holds it, built from
# scratch, already up to date, left for later (few changes), changes folded in.
UpdateResult = Literal["small", "busy", "built", "fresh", "deferred", "updated"]


def min_rows() -> int:
    """Embedded chunks from which a library gets a persisted index (see MIN_ROWS)."""
    raw = os.environ.get(MIN_ROWS_ENV, "")
    return int(raw) if raw.isdigit() else MIN_ROWS


def update(conn: sqlite3.Connection, db_path: Path, *, force: bool = True) -> UpdateResult:
    """Bring the index beside ``db_path`` up to date; returns what was done."""
    folder = segment_files.folder_for(db_path)
    with hit_queries.snapshot(conn):
        sig = vectors.signature(conn)
        if sig.count < min_rows() or vectors.get_stamp(conn) is None:
            return "small"
        with _locked(folder) as mine:
            if not mine:
                return "busy"
            previous = segment_files.read_manifest(folder)
            index = PersistedIndex.open(folder, conn)
            if index is None or not index.catch_up(conn, sig):
                manifest = _build(conn, folder, sig)
                result: UpdateResult = "built"
            elif not index.touched:
                return "fresh"
            elif len(index.touched) < FOLD_MIN and not force:
                return "deferred"
            else:
                try:
                    manifest, result = _fold(index, folder), "updated"
                except (segment_files.IndexDamage, IndexError, ValueError):
                    # a segment folded holds impossible values: rebuild it all instead
                    manifest, result = _build(conn, folder, sig), "built"
            faults.reached("search_index.before_publish")
            segment_files.publish(folder, manifest)
            _collect_garbage(folder, manifest, previous)
    if previous is not None and index_source.log_size(conn) > max(sig.count, 100_000):
        with transaction(conn):
            index_source.prune_log(conn, int(previous.get("seq", 0)))
    return result


def _manifest(conn: sqlite3.Connection, seq: int, entries: list[segment_files.SegmentEntry]
              ) -> segment_files.Manifest:
    return {**stamps(conn), "seq": seq, "segments": entries}


def _build(conn: sqlite3.Connection, folder: Path, sig: vectors.VectorSignature
           ) -> segment_files.Manifest:
    """Every embedded chunk, in segments of up to MAX_SEGMENT_ROWS consecutive chunk ids.

    Postings come from FTS5's own index in one pass (``index_source.library_postings``),
    split by segment as they stream; each segment's vectors are then read and written
    with its postings.
    """
    stamp = vectors.get_stamp(conn)
    assert stamp is not None
    seq = index_source.log_position(conn)
    ids = np.array(index_source.vector_ids(conn), dtype=np.int64)
    if ids.size == 0:
        return _manifest(conn, seq, [])
    starts = list(range(0, len(ids), MAX_SEGMENT_ROWS))
    bounds = [int(ids[i]) for i in starts] + [int(ids[-1]) + 1]
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in starts]
    lengths = np.zeros(len(ids), dtype=np.int64)
    postings_of = index_source.library_postings(conn, hit_queries.WORD_WEIGHTS)
    for terms, term_index, docs, tf, counts in postings_of:
        rows = np.searchsorted(ids, docs)
        known = (rows < len(ids)) & (ids[np.minimum(rows, len(ids) - 1)] == docs)
        lengths += np.bincount(rows[known], weights=counts[known],
                               minlength=len(ids)).astype(np.int64)
        hashes = np.array([segment_files.term_hash(t) for t in terms], dtype=np.uint64)[term_index]
        which = np.searchsorted(bounds, docs, side="right") - 1
        for i in range(len(parts)):
            mine = known & (which == i)
            if mine.any():
                parts[i].append((rows[mine].astype(np.int32), hashes[mine],
                                 tf[mine].astype(np.float32)))
        faults.reached("search_index.build_batch")
    entries: list[segment_files.SegmentEntry] = []
    for i, (first, part) in enumerate(zip(starts, parts, strict=True)):
        last = starts[i + 1] if i + 1 < len(starts) else len(ids)
        chunk_ids, books, matrix = index_source.vectors_of(conn, ids[first:last].tolist(),
                                                           stamp[1])
        postings = segment_files.Postings(
            (np.concatenate([p[0] for p in part]) - first).astype(np.int32) if part
            else np.zeros(0, np.int32),
            np.concatenate([p[1] for p in part]) if part else np.zeros(0, np.uint64),
            np.concatenate([p[2] for p in part]) if part else np.zeros(0, np.float32))
        arrays, scale = segment_files.segment_arrays(chunk_ids, books, normalise_rows(matrix),
                                           lengths[first:last], postings)
        entries.append({"name": segment_files.write_segment(folder, arrays, scale)})
    return _manifest(conn, seq, entries)


def _fold(index: PersistedIndex, folder: Path) -> segment_files.Manifest:
    """Append the delta as a segment, mark what it replaces dead, merge small segments."""
    live: list[tuple[segment_files.Segment, np.ndarray, str | None]] = []
    for i, (segment, alive) in enumerate(zip(index.segments, index.alive, strict=True)):
        dead_name = index.manifest["segments"][i].get("dead")
        if not alive.all():
            gone = np.asarray(segment.arrays["chunk_ids"])[~alive]
            if gone.size != len(index._dead[i]):
                dead_name = segment_files.dead_file(folder, segment.name, gone)
        live.append((segment, alive, dead_name))
    if index.delta.size:
        everything = np.ones(index.delta.size, bool)
        arrays, scale = segment_files.combine([(index.delta.arrays, everything)])
        name = segment_files.write_segment(folder, arrays, scale)
        fresh = segment_files.load_segment(folder, name)
        live.append((fresh, np.ones(fresh.size, dtype=bool), None))
    live = _merge_small(folder, live)
    entries: list[segment_files.SegmentEntry] = [{"name": s.name, "dead": dead}
                                                 for s, _, dead in live]
    return {**index.manifest, "seq": index.seen_seq, "segments": entries}


def _merge_small(folder: Path, live: list[tuple[segment_files.Segment, np.ndarray, str | None]]
                 ) -> list[tuple[segment_files.Segment, np.ndarray, str | None]]:
    """Rewrite mostly-dead segments, and merge the newest two while they are comparable."""
    out: list[tuple[segment_files.Segment, np.ndarray, str | None]] = []
    for segment, alive, dead in live:
        if alive.size and alive.mean() < 2 / 3:
            out.append(_rewrite(folder, [(segment, alive)]))
        else:
            out.append((segment, alive, dead))
        while len(out) >= 2:
            older, newer = int(out[-2][1].sum()), int(out[-1][1].sum())
            if older > 4 * newer or older + newer > MAX_SEGMENT_ROWS:
                break
            pair = [(s, a) for s, a, _ in out[-2:]]
            del out[-2:]
            out.append(_rewrite(folder, pair))
    return [entry for entry in out if entry[1].any()]


def _rewrite(folder: Path, parts: list[tuple[segment_files.Segment, np.ndarray]]
             ) -> tuple[segment_files.Segment, np.ndarray, str | None]:
    """One new segment of the live rows of ``parts``; every byte of theirs is read here
    anyway, so they are checked first (IndexDamage: the caller rebuilds)."""
    if damaged := [f for s, _ in parts for f in s.damaged()]:
        raise segment_files.IndexDamage(f"damaged: {', '.join(damaged)}")
    arrays, scale = segment_files.combine([(s.arrays, a) for s, a in parts])
    fresh = segment_files.load_segment(folder, segment_files.write_segment(folder, arrays, scale))
    return fresh, np.ones(fresh.size, dtype=bool), None


def _collect_garbage(folder: Path, current: segment_files.Manifest,
                     previous: segment_files.Manifest | None) -> None:
    """Delete segments and dead lists named by neither the new manifest nor the one before
    it (a reader may still be opening that one). Only names this index writes are ever
    deleted: the folder may be a link to a place holding the user's own files."""
    keep: set[str] = set()
    for manifest in (current, previous) if previous else (current,):
        for entry in manifest["segments"]:
            keep.add(entry["name"])
            if entry.get("dead"):
                keep.add(f"{entry['name']}/{entry['dead']}")
    for path in folder.iterdir():
        if not (segment_files.SEGMENT_NAME.fullmatch(path.name) and path.is_dir()):
            continue
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)
            continue
        for dead in path.iterdir():
            known = f"{path.name}/{dead.name}" in keep
            if segment_files.DEAD_NAME.fullmatch(dead.name) and not known:
                dead.unlink(missing_ok=True)
