"""What keeping the persisted search index current costs a writing command.

Run: ``uv run python bench/index_update.py [--chunks 100000] [--books 3]
[--vectors uniform|realistic]``.

On a copy of the scale bench's library (``bench/scale_build.py``, with its index), books of
1,000 synthetic chunks are written through the store layer exactly as an ingest's embedding
stage writes them, and after each one ``index_writer.update`` folds it into the index, as
``ingest`` does after each book; then one book is deleted and folded away. Each update is
timed (wall and process CPU) and set against what the embedded model needs for the same
1,000 chunks, measured in the same run (100 chunks embedded, scaled), so both see the same
machine load: that ratio is the index's share of ingest time. CPU seconds are the steadier
figure on a shared machine (onnxruntime's threads suffer most from contention).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_build
from grimoire_beholder.search import index_writer
from grimoire_beholder.search.segment_files import folder_for, read_manifest
from grimoire_beholder.store import book_rows, chunk_progress
from grimoire_beholder.store.db import connect
from grimoire_beholder.store.transactions import transaction


def _embed_seconds_per_book(rng: np.random.Generator) -> tuple[float, float]:
    """(wall, CPU) seconds the embedded model takes for one book's chunks (100, scaled)."""
    from grimoire_beholder.models.embedded import EmbeddedEmbedder

    texts = scale_build.chunk_texts(rng, 100)
    embedder = EmbeddedEmbedder()
    embedder.embed_documents(texts[:8])  # load and warm up
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 32):
        embedder.embed_documents(texts[start:start + 32])
    scale = scale_build.CHUNKS_PER_BOOK / len(texts)
    return (time.perf_counter() - started) * scale, (time.process_time() - cpu) * scale


def _add_book(conn: sqlite3.Connection, index: int, rng: np.random.Generator) -> float:
    texts = scale_build.chunk_texts(rng, scale_build.CHUNKS_PER_BOOK)
    vecs = rng.standard_normal((scale_build.CHUNKS_PER_BOOK, 384), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    started = time.perf_counter()
    with transaction(conn):
        book_id = book_rows.insert_book(conn, scale_build._book(index, texts))
        work = chunk_progress.pending_chunks(conn, book_id)
        chunk_progress.mark_embedded(conn, list(zip(work, vecs, strict=True)),
                                  scale_build.IDENTITY, 384)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--books", type=int, default=3)
    parser.add_argument("--vectors", choices=("uniform", "realistic"), default="uniform")
    args = parser.parse_args()
    source, _ = scale_build.build(args.chunks, vectors=args.vectors)
    with tempfile.TemporaryDirectory(dir=os.environ.get("GRIMOIRE_BEHOLDER_SCALE_DIR")) as tmp:
        db = Path(tmp) / "library.db"
        shutil.copyfile(source, db)
        if folder_for(source).is_dir():
            shutil.copytree(folder_for(source), folder_for(db))
        conn = connect(db)
        started = time.perf_counter()
        print(f"load average {os.getloadavg()[0]:.1f}; {args.chunks:,} chunks; initial "
              f"index: {index_writer.update(conn, db)} in {time.perf_counter() - started:.1f} s")
        if os.environ.get("PROFILE_FOLD"):
            import cProfile
            _add_book(conn, 10**6, np.random.default_rng(1))
            cProfile.runctx("index_writer.update(conn, db)", globals(), locals(),
                            os.environ["PROFILE_FOLD"])
        rng = np.random.default_rng(99)
        embed_wall, embed_cpu = _embed_seconds_per_book(rng)
        print(f"embedding one book ({scale_build.CHUNKS_PER_BOOK} chunks): {embed_wall:.0f} s, "
              f"{embed_cpu:.0f} CPU-s")
        first = args.chunks // scale_build.CHUNKS_PER_BOOK
        for n in range(args.books):
            write = _add_book(conn, first + n, rng)
            started, cpu = time.perf_counter(), time.process_time()
            result = index_writer.update(conn, db)
            fold, fold_cpu = time.perf_counter() - started, time.process_time() - cpu
            segments = len((read_manifest(folder_for(db)) or {}).get("segments", []))
            print(f"book {n + 1}: store write {write:.2f} s, index {result} in {fold:.2f} s "
                  f"({fold / embed_wall:.1%} of embedding it), {fold_cpu:.2f} CPU-s "
                  f"({fold_cpu / embed_cpu:.1%}), {segments} segments")
        with transaction(conn):
            book_rows.delete_book(conn, 1)
        started = time.perf_counter()
        result = index_writer.update(conn, db)
        print(f"delete a book: index {result} in {time.perf_counter() - started:.2f} s")
        conn.close()


if __name__ == "__main__":
    main()
