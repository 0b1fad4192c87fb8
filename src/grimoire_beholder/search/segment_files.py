"""The persisted search index on disk: immutable segments and one manifest, beside the DB.

``<db>.search/`` holds segment folders and ``manifest.json``. A segment covers a set of
chunks and never changes once written:

* ``chunk_ids``, ``book_ids`` (int64) and ``vectors`` (the normalised float32 vectors, for
  exact re-scoring and exact scans of small filtered sets);
* ``codes`` (int8): the same vectors scaled by ``scale`` and rounded — a quarter of the bytes
  to stream through the approximate scan;
* ``lengths`` (tokens per chunk) and the postings of every term: ``term_hash`` (sorted,
  64-bit BLAKE2b of the term), ``offsets`` into ``rows`` (the chunk's row in the segment)
  and ``tf`` (the BM25 column-weighted term frequency);
* ``centroids``, ``list_offsets`` and ``radii``: a segment of at least
  ``index_partition.PARTITION_MIN_ROWS`` rows has its rows grouped into lists (rows
  ``list_offsets[j]:list_offsets[j + 1]`` nearest ``centroids[j]``, all within ``radii[j]``
  of it), so a search reads a few lists instead of every row; a smaller one has no lists;
* ``segment.json``: the scale, the row count, each array's CRC-32 (``check`` compares
  them with the bytes; opening only checks dtypes and shapes) and ``residual``, the largest
  ``||vector - codes / scale||`` of any row — what makes the int8 scan's error provable
  (``search/persisted.py``; a segment written before it was recorded gets the worst case
  ``sqrt(dimension) / (2 * scale)``).

Files are read with ``mmap``, so opening a million-chunk index costs milliseconds and only
the pages a search touches become resident. The manifest names the live segments, the
chunk ids since deleted or rewritten in each (``dead``), the change-log position it covers
and the stamps that must match the library (library id, embedding model and dimension, FTS
table definition, BM25 weights). It is replaced atomically (write, fsync, rename) after
every file it names is on disk, so a crash leaves either the old or the new index.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import itertools
import json
import math
import os
import re
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import numpy as np

from grimoire_beholder import portable
from grimoire_beholder.search import index_partition
from grimoire_beholder.search.int8_codes import max_residual as max_residual  # re-exported
from grimoire_beholder.search.int8_codes import quantize as quantize

FORMAT = 3  # 2: segment.json holds each array's CRC-32; 3: lists (index_partition)
MANIFEST = "manifest.json"
# Every array of a segment: its dtype and number of dimensions.
_ARRAYS: dict[str, tuple[type, int]] = {
    "chunk_ids": (np.int64, 1), "book_ids": (np.int64, 1), "vectors": (np.float32, 2),
    "codes": (np.int8, 2), "lengths": (np.int32, 1), "term_hash": (np.uint64, 1),
    "offsets": (np.int64, 1), "rows": (np.int32, 1), "tf": (np.float32, 1),
    "centroids": (np.float32, 2), "list_offsets": (np.int64, 1), "radii": (np.float32, 1)}


class Stamps(TypedDict):
    """What a manifest must match to belong to a library as it is now."""

    library_id: str
    embedding: list[Any] | None  # [identity, dimension]; None before the first embedding
    fts: str  # the word table's definition
    weights: list[float]  # BM25 column weights


class SegmentEntry(TypedDict):
    name: str
    dead: NotRequired[str | None]  # the segment's dead list (chunk ids no longer live)


class Manifest(Stamps):
    """``manifest.json``: the stamps, the change-log position covered, the live segments."""

    seq: int
    segments: list[SegmentEntry]
    format: NotRequired[int]


# The only names this index writes: anything else in the folder is not its to delete.
# The small arrays every search reads through (term directory, per-chunk ids and lengths):
# their CRC-32 is checked when a segment opens, so a flipped byte there cannot silently
# lose hits. The big ones (vectors, codes, postings) are checked by ``check`` and on use.
CHECKED_AT_OPEN = ("term_hash", "offsets", "chunk_ids", "book_ids", "lengths", "centroids",
                   "list_offsets", "radii")
SEGMENT_NAME = re.compile(r"seg-[0-9a-f]{12}")
DEAD_NAME = re.compile(r"dead-[0-9a-f]{8}\.npy")


def folder_for(db_path: Path) -> Path:
    """Where a library's index lives: ``book.db`` → ``book.db.search/``."""
    return db_path.with_name(db_path.name + ".search")


class IndexDamage(ValueError):
    """A segment holds a value it cannot hold (a posting past its last row): its bytes
    are not the ones written. Readers fall back to the exact arms; writers rebuild."""


@functools.lru_cache(maxsize=200_000)
def term_hash(term: str) -> int:
    """A term's 64-bit hash (a collision among a million terms: odds ~1e-8)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "little")


@dataclass
class Segment:
    """One immutable segment, memory-mapped."""

    name: str
    scale: float
    arrays: dict[str, np.ndarray]
    checksums: dict[str, int] | None = None  # CRC-32 of each array, as written
    residual: float | None = None  # max over rows of ||vector - codes / scale|| (None: unknown)

    def residual_bound(self) -> float:
        """An upper bound of ``||vector - codes / scale||`` over every row: the recorded
        maximum, else the worst case of rounding (half a step in every dimension)."""
        worst = 0.5 * math.sqrt(self.arrays["vectors"].shape[1]) / self.scale
        if self.residual is not None and 0.0 <= self.residual <= worst:
            return self.residual
        return worst

    def damaged(self) -> list[str]:
        """Files whose bytes are not the ones written. Reads every byte of the segment:
        for ``check``, not for opening (a million-chunk index holds gigabytes)."""
        sums = self.checksums or {}
        bad = [f"{self.name}/{key}.npy" for key, array in self.arrays.items()
               if zlib.crc32(array.data) != sums.get(key)]
        if not bad and max_residual(self.arrays["vectors"], self.arrays["codes"],
                                    self.scale) > self.residual_bound() * (1 + 1e-6):
            bad.append(f"{self.name}/segment.json")  # a residual too small: scans not exact
        return bad

    @functools.cached_property
    def books_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows in book order, their book ids), made on the first filtered search."""
        order = np.argsort(self.arrays["book_ids"], kind="stable")
        return order, np.asarray(self.arrays["book_ids"])[order]

    @property
    def size(self) -> int:
        return len(self.arrays["chunk_ids"])

    @property
    def lists(self) -> int:
        """How many lists the rows are grouped in (0: none, the segment is scanned whole)."""
        return len(self.arrays["radii"])

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        """float32 vectors of ``rows`` (ascending). On disk they are read one call per run
        of consecutive rows, straight into the result (``portable.OffsetReader``), not
        through the memory map: mapped pages count as resident and the kernel maps
        neighbours of every touched page too, so re-scoring 256 random rows a query had
        mapped most of a 100k-row file within 120 queries (RSS 1.7× the raw vectors;
        bench/scale.py). A file shorter than its rows is IndexDamage."""
        vectors = self.arrays["vectors"]
        if not isinstance(vectors, np.memmap) or rows.size == 0:
            return np.asarray(vectors[rows], dtype=np.float32)
        row_bytes = vectors.shape[1] * 4
        out = np.empty((len(rows), vectors.shape[1]), dtype=np.float32)
        view = out.data.cast("B")
        starts = np.flatnonzero(np.diff(rows) != 1) + 1
        bounds = [0, *(starts * row_bytes).tolist(), len(rows) * row_bytes]
        at = (vectors.offset + rows[np.r_[0, starts]] * row_bytes).tolist()
        if not self._vectors_file.read_into(zip(at, [
                view[a:b] for a, b in itertools.pairwise(bounds)], strict=True)):
            raise IndexDamage(f"segment {self.name}: its vectors file is too short")
        return out

    @functools.cached_property
    def _vectors_file(self) -> portable.OffsetReader:
        vectors = self.arrays["vectors"]
        assert isinstance(vectors, np.memmap)
        return portable.OffsetReader(str(vectors.filename))

    def postings(self, term_hash: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, tf) of one term in this segment (empty if absent)."""
        hashes = self.arrays["term_hash"]
        i = int(np.searchsorted(hashes, np.uint64(term_hash)))
        if i >= len(hashes) or int(hashes[i]) != term_hash:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        start, end = int(self.arrays["offsets"][i]), int(self.arrays["offsets"][i + 1])
        rows = self.arrays["rows"][start:end]
        if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= self.size):
            raise IndexDamage(f"segment {self.name}: a posting names a row it does not have")
        return rows, self.arrays["tf"][start:end]

    def rows_of_books(self, book_ids: np.ndarray) -> np.ndarray:
        """Rows whose book is in ``book_ids`` (sorted), via the book-ordered permutation."""
        order, ordered = self.books_order
        lo = np.searchsorted(ordered, book_ids, side="left")
        hi = np.searchsorted(ordered, book_ids, side="right")
        parts = [order[a:b] for a, b in zip(lo, hi, strict=True) if b > a]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


@dataclass
class Postings:
    """Postings of a set of chunks before they become a segment: one entry per (term, row)."""

    rows: np.ndarray  # int32, row of the chunk in the segment
    hashes: np.ndarray  # uint64
    tf: np.ndarray  # float32

    def sorted(self) -> Postings:
        """Ordered by term. Every producer lists a term's rows ascending and in row order
        across parts, so a stable sort by hash alone gives (term, row) order."""
        order = np.argsort(self.hashes, kind="stable")
        return Postings(self.rows[order], self.hashes[order], self.tf[order])


def segment_arrays(chunk_ids: np.ndarray, book_ids: np.ndarray, vectors: np.ndarray,
                   lengths: np.ndarray, postings: Postings, *, codes: bool = True
                   ) -> tuple[dict[str, np.ndarray], float]:
    """The arrays of a segment (vectors already normalised) and its int8 scale. With
    ``codes`` (a segment to write) a big one's rows are grouped into lists."""
    vectors = vectors.astype(np.float32, copy=False)
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    lists = index_partition.list_count(len(chunk_ids)) if codes else 0
    parts: tuple[np.ndarray, ...] = (np.zeros((0, dim), np.float32), np.zeros(1, np.int64),
                                     np.zeros(0, np.float32))
    if lists:
        order, *rest = index_partition.partition(vectors, lists)
        parts = tuple(rest)
        where = np.empty(len(order), dtype=np.int64)
        where[order] = np.arange(len(order))
        chunk_ids, book_ids, vectors, lengths = (np.asarray(a)[order] for a in
                                                 (chunk_ids, book_ids, vectors, lengths))
        postings = Postings(where[postings.rows].astype(np.int32), postings.hashes,
                            postings.tf)
        keyed = np.lexsort((postings.rows, postings.hashes))  # (term, row) order again
        post = Postings(postings.rows[keyed], postings.hashes[keyed], postings.tf[keyed])
    else:
        post = postings.sorted()
    hashes, starts = np.unique(post.hashes, return_index=True)
    offsets = np.append(starts, len(post.hashes)).astype(np.int64)
    arrays: dict[str, np.ndarray] = {
        "chunk_ids": chunk_ids.astype(np.int64), "book_ids": book_ids.astype(np.int64),
        "vectors": vectors, "lengths": lengths.astype(np.int32),
        "term_hash": hashes.astype(np.uint64), "offsets": offsets,
        "rows": post.rows.astype(np.int32), "tf": post.tf.astype(np.float32),
        "centroids": parts[0], "list_offsets": parts[1], "radii": parts[2]}
    scale = 1.0
    if codes:
        arrays["codes"], scale = quantize(arrays["vectors"])
    return arrays, scale


def combine(parts: list[tuple[dict[str, np.ndarray], np.ndarray]]
            ) -> tuple[dict[str, np.ndarray], float]:
    """One segment's arrays (with int8 codes) from the live rows of several, in order."""
    keys = ("chunk_ids", "book_ids", "vectors", "lengths")
    kept = {key: np.concatenate([np.asarray(a[key])[alive] for a, alive in parts])
            for key in keys}
    rows, hashes, tf = [], [], []
    offset = 0
    for arrays, alive in parts:
        new_row = np.cumsum(alive) - 1 + offset
        offset += int(alive.sum())
        counts = np.diff(np.asarray(arrays["offsets"]))
        term = np.repeat(np.asarray(arrays["term_hash"]), counts)
        old = np.asarray(arrays["rows"])
        keep = alive[old]
        rows.append(new_row[old[keep]].astype(np.int32))
        hashes.append(term[keep])
        tf.append(np.asarray(arrays["tf"])[keep])
    postings = Postings(np.concatenate(rows), np.concatenate(hashes), np.concatenate(tf))
    return segment_arrays(kept["chunk_ids"], kept["book_ids"], kept["vectors"],
                          kept["lengths"], postings)


def write_segment(folder: Path, arrays: dict[str, np.ndarray], scale: float) -> str:
    """Write a new segment (from :func:`segment_arrays`) and return its name."""
    name = f"seg-{os.urandom(6).hex()}"
    path = folder / name
    path.mkdir(parents=True)
    checksums = {key: _save(path / f"{key}.npy", array) for key, array in arrays.items()}
    _write_json(path / "segment.json", {"scale": scale, "size": len(arrays["chunk_ids"]),
                                        "crc32": checksums,
                                        "residual": max_residual(arrays["vectors"],
                                                                 arrays["codes"], scale)})
    portable.fsync_folder(path)
    return name


def _regular(path: Path) -> Path:
    """``path`` if it is a regular file (links followed); OSError otherwise — a named pipe or
    a device put in the index would make opening it wait forever."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return path


def load_segment(folder: Path, name: str) -> Segment:
    """Open a segment, memory-mapped. Anything but a segment as written here — a file
    missing, empty, cut short or of another type or shape — is a ValueError (the index is
    then not used); its bytes are not read (see :meth:`Segment.damaged`)."""
    path = folder / name
    try:
        meta = json.loads(_regular(path / "segment.json").read_text(encoding="utf-8"))
        arrays = {key: np.load(_regular(path / f"{key}.npy"), mmap_mode="r") for key in _ARRAYS}
        residual = meta.get("residual")
        segment = Segment(name, float(meta["scale"]), arrays,
                          {key: int(meta["crc32"][key]) for key in _ARRAYS},
                          float(residual) if isinstance(residual, (int, float)) else None)
        size = int(meta["size"])
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"segment {name} cannot be read ({exc})") from exc
    if not _well_formed(arrays, size):
        raise ValueError(f"segment {name} is inconsistent")
    sums = segment.checksums or {}
    if any(zlib.crc32(arrays[key].data) != sums.get(key) for key in CHECKED_AT_OPEN):
        raise ValueError(f"segment {name} is damaged (a checksum differs)")
    offsets = arrays["offsets"]
    if offsets.size and (offsets[0] != 0 or offsets[-1] != len(arrays["rows"])):
        raise ValueError(f"segment {name} is inconsistent")
    bounds = arrays["list_offsets"]
    if (bounds[0] != 0 or bounds[-1] != (size if len(bounds) > 1 else 0)
            or np.any(np.diff(bounds) < 0)
            or not np.all(np.isfinite(arrays["radii"]))):
        raise ValueError(f"segment {name} has inconsistent lists")
    # plain views of the maps (np.memmap's slicing costs µs a call); vectors_of reads vectors
    arrays.update([(k, np.asarray(v)) for k, v in arrays.items() if k != "vectors"])
    return segment


def _well_formed(arrays: dict[str, np.ndarray], size: int) -> bool:
    """Every array of the dtype and shape written, of lengths that agree."""
    if not all(arrays[k].dtype == np.dtype(t) and arrays[k].ndim == n
               and arrays[k].flags.c_contiguous for k, (t, n) in _ARRAYS.items()):
        return False
    per_chunk = ("chunk_ids", "book_ids", "vectors", "codes", "lengths")
    lists = len(arrays["radii"])
    return (all(len(arrays[k]) == size for k in per_chunk)
            and len(arrays["centroids"]) == lists and len(arrays["list_offsets"]) == lists + 1
            and arrays["centroids"].shape[1] == arrays["vectors"].shape[1]
            and arrays["vectors"].shape[1] == arrays["codes"].shape[1]
            and len(arrays["offsets"]) == len(arrays["term_hash"]) + 1
            and len(arrays["rows"]) == len(arrays["tf"]))


def _save(path: Path, array: np.ndarray) -> int:
    """Write one array, fsynced; returns the CRC-32 of its data."""
    data = np.ascontiguousarray(array)
    with open(path, "wb") as handle:
        np.save(handle, data, allow_pickle=False)
        handle.flush()
        os.fsync(handle.fileno())
    return zlib.crc32(data.data)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())


def read_manifest(folder: Path) -> Manifest | None:
    """The manifest, or None if missing, unreadable or not of the shape written here (a
    reader then ignores the index; a writer rebuilds it)."""
    try:
        data = json.loads(_regular(folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    segments, seq = data.get("segments"), data.get("seq")
    if not (isinstance(seq, int) and seq >= 0 and isinstance(segments, list)
            and all(map(_entry_ok, segments))):
        return None
    return cast(Manifest, data)


def _entry_ok(entry: object) -> bool:
    """A manifest entry as written here: a segment's name and its dead list's (or None)."""
    if not isinstance(entry, dict):
        return False
    name, dead = entry.get("name"), entry.get("dead")
    return (isinstance(name, str) and SEGMENT_NAME.fullmatch(name) is not None
            and (dead is None or (isinstance(dead, str)
                                  and DEAD_NAME.fullmatch(dead) is not None)))


def manifest_id(folder: Path) -> tuple[int, int, int] | None:
    """A cheap identity of the current manifest file (changes whenever it is replaced)."""
    try:
        st = (folder / MANIFEST).stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def publish(folder: Path, manifest: Manifest) -> None:
    """Atomically replace the manifest (its segments must already be on disk)."""
    tmp = folder / (MANIFEST + ".tmp")
    _write_json(tmp, {**manifest, "format": FORMAT})
    os.replace(tmp, folder / MANIFEST)
    portable.fsync_folder(folder)


def dead_file(folder: Path, segment: str, ids: np.ndarray) -> str:
    """Write the sorted dead chunk ids of a segment; return the file name (in the segment)."""
    name = f"dead-{os.urandom(4).hex()}.npy"
    _save(folder / segment / name, np.unique(ids.astype(np.int64)))
    return name


def load_dead(folder: Path, segment: str, name: str | None) -> np.ndarray:
    """A segment's dead chunk ids (ValueError when the file is not such a list)."""
    if not name:
        return np.zeros(0, dtype=np.int64)
    try:
        dead = np.load(_regular(folder / segment / name), mmap_mode="r")
    except (OSError, EOFError, ValueError) as exc:
        raise ValueError(f"{segment}/{name} cannot be read ({exc})") from exc
    if dead.dtype != np.dtype(np.int64) or dead.ndim != 1:
        raise ValueError(f"{segment}/{name} is not a list of chunk ids")
    return dead
