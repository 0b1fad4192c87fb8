"""The read side of the persisted search index: segments + an in-memory delta, searched.

A :class:`PersistedIndex` is the manifest's segments (``search/segment_files.py``) plus
everything the change log (``search_log``) says happened since the manifest was written:
those chunks are masked out of the segments and, when they still exist, read from the
database into a small in-memory *delta* segment that is searched exactly. Before it is
used, the whole is checked against the library — library id, embedding model and
dimension, FTS table definition and BM25 weights; chunk count, chunk-id sum and token
total against ``embeddings`` and FTS5's own statistics — and any mismatch means it is not
used at all (the engine falls back to the exact arms). It is never trusted blindly.

Vector search scans the int8 codes (``simsimd``: a quarter of the float32 bytes, SIMD int8
dot products), re-scores the best ``max(4k, 256)`` rows of each segment exactly from the
float32 vectors, then every further row whose estimate's proven error bound reaches the
``k``-th best exact score (``bounded_scan.bounded_top``). In a segment scanned whole (under
``index_partition.PARTITION_MIN_ROWS`` rows) the result is the exact top ``k``. A bigger
segment is read list by list (``index_partition``): the nearest lists, then those whose
bound still reaches the ``k``-th score, up to a budget — exact when the bound closes within
it (``last_proven``), approximate otherwise, with the recall ``bench/scale.py`` measures. A
filter that leaves few rows is answered by an exact scan of just those rows; otherwise
disallowed rows are masked before the top rows are taken, so filtered searches still return
``k`` hits.

Keyword search computes FTS5's ``bm25()`` exactly (same formula, column weights, idf and
average length, from FTS5's own row and token totals) from the postings of the query's
terms only, with numpy (``search/bm25.py``: a common word's contribution is added only to
the rows that can still be among the best). Query tokens are turned into terms by FTS5's
own tokenizer.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np

from grimoire_beholder.search import bm25, bounded_scan, segment_files
from grimoire_beholder.store import index_source, vectors
from grimoire_beholder.store.hit_queries import WORD_WEIGHTS

EXACT_FILTER_ROWS = 20_000  # a filter keeping at most this many rows: exact scan


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    norms[norms == 0.0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)


def read_docs(conn: sqlite3.Connection, tokenizer: index_source.Tokenizer,
              chunk_ids: list[int], dimension: int) -> tuple[dict[str, np.ndarray], float]:
    """Segment arrays (no int8 codes) for those of ``chunk_ids`` that have a vector."""
    ids, books, matrix = index_source.vectors_of(conn, chunk_ids, dimension)
    hashes, docs, tf, counts = tokenizer.postings(index_source.fts_rows(conn, ids.tolist()),
                                                  segment_files.term_hash)
    rows = np.searchsorted(ids, docs)
    known = np.zeros(len(docs), dtype=bool)
    if ids.size:
        known = (rows < len(ids)) & (ids[np.minimum(rows, len(ids) - 1)] == docs)
    lengths = np.bincount(rows[known], weights=counts[known], minlength=len(ids))
    postings = segment_files.Postings(rows[known].astype(np.int32), hashes[known],
                            tf[known].astype(np.float32))
    return segment_files.segment_arrays(ids, books, normalise_rows(matrix),
                                        lengths.astype(np.int32), postings, codes=False)


def stamps(conn: sqlite3.Connection) -> segment_files.Stamps:
    """What a manifest must match to belong to this library as it is now."""
    stamp = vectors.get_stamp(conn)
    return {"library_id": index_source.library_id(conn),
            "embedding": list(stamp) if stamp else None,
            "fts": index_source.word_table_sql(conn), "weights": list(WORD_WEIGHTS)}


def _dimension(manifest: segment_files.Manifest) -> int:
    """The vectors' dimension a manifest names (0 before the first embedding)."""
    return int(manifest["embedding"][1]) if manifest["embedding"] else 0


class PersistedIndex:
    """Segments from one manifest, caught up with the change log. Read-only."""

    def __init__(self, folder: Path, manifest: segment_files.Manifest,
                 segments: list[segment_files.Segment], dead: list[np.ndarray],
                 tokenizer: index_source.Tokenizer) -> None:
        self.folder = folder
        self.tokenizer = tokenizer
        self.manifest = manifest
        self.segments = segments
        self._dead = dead
        self.base_seq = int(manifest["seq"])
        self.seen_seq = self.base_seq
        self.dimension = _dimension(manifest)
        self.touched: set[int] = set()
        self.alive = [self._alive(i) for i in range(len(segments))]
        self.delta: segment_files.Segment = self._empty_delta()
        self.last_proven = True  # whether the last vector search is proven exact
        self._id_order: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # see _allowed_rows

    @classmethod
    def open(cls, folder: Path, conn: sqlite3.Connection) -> PersistedIndex | None:
        """The index in ``folder`` if it exists and belongs to this library, else None."""
        manifest = segment_files.read_manifest(folder)
        if manifest is None or manifest["embedding"] is None:
            return None
        now = stamps(conn)
        if any(manifest[k] != now[k] for k in ("library_id", "embedding", "fts", "weights")):
            return None
        if int(manifest["seq"]) > index_source.log_position(conn):
            return None  # written for a later state of the database than this one
        try:
            parts = [(segment_files.load_segment(folder, s["name"]),
                      segment_files.load_dead(folder, s["name"], s.get("dead")))
                     for s in manifest["segments"]]
        except ValueError:  # a file missing, empty, cut short or of another shape
            return None
        if any(p[0].arrays["vectors"].shape[1] != _dimension(manifest) for p in parts):
            return None
        return cls(folder, manifest, [p[0] for p in parts], [p[1] for p in parts],
                   index_source.Tokenizer(conn, WORD_WEIGHTS))

    @property
    def size(self) -> int:
        return sum(int(a.sum()) for a in self.alive) + self.delta.size

    def _alive(self, i: int) -> np.ndarray:
        ids = self.segments[i].arrays["chunk_ids"]
        gone = np.union1d(self._dead[i], np.fromiter(self.touched, dtype=np.int64))
        return ~np.isin(ids, gone) if gone.size else np.ones(len(ids), dtype=bool)

    def _empty_delta(self) -> segment_files.Segment:
        empty = segment_files.Postings(np.zeros(0, np.int32), np.zeros(0, np.uint64),
                             np.zeros(0, np.float32))
        arrays, _ = segment_files.segment_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                       np.zeros((0, self.dimension), np.float32),
                                       np.zeros(0, np.int32), empty, codes=False)
        return segment_files.Segment("delta", 1.0, arrays)

    def catch_up(self, conn: sqlite3.Connection, sig: vectors.VectorSignature) -> bool:
        """Apply the changes logged since the last call; True if the result is consistent.

        Call inside a read snapshot. Only chunks logged since the last call are read (and
        tokenized) again; the delta stays small because writers fold it into segments
        after every book and every command.
        """
        position = index_source.log_position(conn)
        if position < self.seen_seq or self._log_gap(conn):
            return False
        if position > self.seen_seq:
            new = set(index_source.changed_since(conn, self.seen_seq))
            if len(self.touched | new) > sig.count // 2:
                # Most of the library changed (e.g. ``reindex-fts``): re-reading it chunk by
                # chunk into the delta would take minutes at a million chunks, and the
                # writer rebuilds such an index from scratch anyway.
                return False
            self.touched |= new
            self.seen_seq = position
            self.alive = [self._alive(i) for i in range(len(self.segments))]
            fresh, _ = read_docs(conn, self.tokenizer, sorted(new), self.dimension)
            kept = ~np.isin(self.delta.arrays["chunk_ids"], np.fromiter(new, dtype=np.int64))
            arrays, _ = segment_files.combine([(self.delta.arrays, kept),
                                     (fresh, np.ones(len(fresh["chunk_ids"]), dtype=bool))])
            self.delta = segment_files.Segment("delta", 1.0, arrays)
        return self._consistent(conn, sig)

    def _log_gap(self, conn: sqlite3.Connection) -> bool:
        """Entries this index still needs were pruned (a newer manifest must be loaded)."""
        start = index_source.log_start(conn)
        return start is not None and start > self.seen_seq + 1

    def _consistent(self, conn: sqlite3.Connection, sig: vectors.VectorSignature) -> bool:
        count, id_sum, tokens = 0, 0, 0
        for segment, alive in self._parts():
            count += int(alive.sum())
            id_sum += int(segment.arrays["chunk_ids"][alive].sum())
            tokens += int(segment.arrays["lengths"][alive].sum(dtype=np.int64))
        fts_rows, fts_tokens = index_source.fts_totals(conn)
        return (count == sig.count == fts_rows and id_sum == sig.id_sum
                and tokens == fts_tokens)

    # -- vectors -------------------------------------------------------------------------
    def vector_search(self, query: np.ndarray, k: int, book_ids: np.ndarray | None,
                      chunk_ids: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``k`` best chunks in ``book_ids`` (None: all), and
        among ``chunk_ids`` (a reading position) when given, ``query`` being a unit vector:
        the exact top ``k`` unless segments with lists are read, then approximate unless
        ``last_proven`` (see ``bounded_scan.bounded_top``)."""
        parts = list(zip(self.segments, self.alive, strict=True))
        delta_rows = np.arange(self.delta.size)
        if book_ids is not None and delta_rows.size:
            delta_rows = delta_rows[np.isin(self.delta.arrays["book_ids"][delta_rows], book_ids)]
        if chunk_ids is not None and delta_rows.size:
            delta_rows = delta_rows[np.isin(self.delta.arrays["chunk_ids"][delta_rows],
                                            chunk_ids)]
        found = [bounded_scan.exact_scores(self.delta, delta_rows, query)]
        rows_of = None
        if book_ids is not None or chunk_ids is not None:
            rows_of = [self._allowed_rows(i, book_ids, chunk_ids) for i in range(len(parts))]
        if rows_of is not None and sum(len(r) for r in rows_of) <= EXACT_FILTER_ROWS:
            for (segment, _), rows in zip(parts, rows_of, strict=True):
                found.append(bounded_scan.exact_scores(segment, rows, query))
            self.last_proven = True
            return _best(found, k, descending=True)
        masked = []
        for i, (segment, alive) in enumerate(parts):
            mask = alive
            if rows_of is not None:
                mask = np.zeros(segment.size, dtype=bool)
                mask[rows_of[i]] = True
            masked.append((segment, mask))
        more, self.last_proven = bounded_scan.bounded_top(masked, query, k, found[0][1])
        return _best(found + more, k, descending=True)

    def _allowed_rows(self, i: int, book_ids: np.ndarray | None,
                      chunk_ids: np.ndarray | None) -> np.ndarray:
        """Live rows of segment ``i`` within the books and chunks given (sorted). Chunk ids
        (sorted, unique) are looked up in the segment's chunk ids sorted once: the few ids
        of a fill or a reading position cost a binary search each, not a pass over every
        row."""
        segment, alive = self.segments[i], self.alive[i]
        if chunk_ids is None:
            assert book_ids is not None
            rows = segment.rows_of_books(book_ids)
            return rows[alive[rows]]
        if i not in self._id_order:
            order = np.argsort(segment.arrays["chunk_ids"], kind="stable")
            self._id_order[i] = (order, np.asarray(segment.arrays["chunk_ids"])[order])
        order, ordered = self._id_order[i]
        at = np.minimum(np.searchsorted(ordered, chunk_ids), max(len(ordered) - 1, 0))
        rows = np.sort(order[at[ordered[at] == chunk_ids]]) if len(ordered) else at[:0]
        rows = rows[alive[rows]]
        if book_ids is not None:
            rows = rows[np.isin(np.asarray(segment.arrays["book_ids"])[rows], book_ids)]
        return rows

    # -- keywords ------------------------------------------------------------------------
    def keyword_search(self, hashes: list[int], limit: int, book_ids: np.ndarray | None,
                       totals: tuple[int, int]) -> list[tuple[int, float]]:
        """(chunk id, bm25) best first — FTS5's ``bm25()`` (negative, lower is better) of
        the query whose phrases are the single terms ``hashes``, within ``book_ids``."""
        rows_total, tokens_total = totals
        if rows_total <= 0 or not hashes:
            return []
        avgdl = tokens_total / rows_total
        parts = self._parts()
        postings = [[segment.postings(h) for h in hashes] for segment, _ in parts]
        idf = []
        whole = [bool(alive.all()) for _, alive in parts]  # no row masked: count postings
        for j in range(len(hashes)):  # document frequency over the whole library, as FTS5
            hits = sum(p[j][0].size if full else int(alive[p[j][0]].sum())
                       for p, (_, alive), full in zip(postings, parts, whole, strict=True))
            value = math.log((rows_total - hits + 0.5) / (hits + 0.5))
            idf.append(value if value > 0.0 else 1e-6)
        if book_ids is not None:  # the books' rows through the book order, not np.isin
            parts = [(s, alive & _mask(s.size, s.rows_of_books(book_ids))) for s, alive in parts]
        found = [_bm25(segment, allowed, posts, idf, avgdl, limit)
                 for (segment, allowed), posts in zip(parts, postings, strict=True)]
        return [(chunk_id, -score) for chunk_id, score in _best(found, limit, descending=True)]

    def _parts(self) -> list[tuple[segment_files.Segment, np.ndarray]]:
        """(segment, live rows) of every segment and of the delta."""
        return [*zip(self.segments, self.alive, strict=True),
                (self.delta, np.ones(self.delta.size, dtype=bool))]


def _mask(size: int, rows: np.ndarray) -> np.ndarray:
    mask = np.zeros(size, dtype=bool)
    mask[rows] = True
    return mask


def _bm25(segment: segment_files.Segment, allowed: np.ndarray,
          posts: list[tuple[np.ndarray, np.ndarray]], idf: list[float], avgdl: float,
          limit: int) -> tuple[np.ndarray, np.ndarray]:
    """FTS5's bm25 of the allowed rows that can be in the segment's best ``limit``."""
    rows, scores = bm25.segment_top(segment.arrays["lengths"], segment.size, allowed, posts,
                                    idf, avgdl, limit)
    return np.asarray(segment.arrays["chunk_ids"][rows]), scores


def _best(found: list[tuple[np.ndarray, np.ndarray]], k: int, *, descending: bool
          ) -> list[tuple[int, float]]:
    """The ``k`` best (chunk id, score) over all parts; ties go to the lower chunk id."""
    ids = np.concatenate([f[0] for f in found]) if found else np.zeros(0, np.int64)
    scores = np.concatenate([f[1] for f in found]) if found else np.zeros(0)
    order = np.lexsort((ids, -scores if descending else scores))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]
