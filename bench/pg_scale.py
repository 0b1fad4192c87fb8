"""The PostgreSQL library at scale: build, HNSW index build time, search latency, and four
writer processes adding books while searches run.

Run: ``uv run python bench/pg_scale.py --url postgresql://…/postgres [--chunks 100000]
[--queries 100] [--writers 4] [--writer-books 3] [--rebuild]``.

``--url`` names a server with pgvector (any database on it: the bench makes its own,
``gb_scale_<N>``). The library holds ``bench/scale_build.py``'s synthetic books (Zipf text,
random 384-d unit vectors stamped as the embedded MiniLM model), written through the
PostgreSQL engine's own store calls (``insert_book``, then ``mark_embedded`` per batch of 32,
each in its transaction, as an ingest commits), with the HNSW index dropped during the load
and built afterwards (timed). Then, through ``Library.search`` with the real embedded model:

* latency p50/p95 of vector, keyword and hybrid searches (and hybrid with a one-book
  filter) over ``--queries`` Zipf queries, after 10 warm-up queries;
* vector recall@10 of the HNSW arm against an exact scan of the same table (``ORDER BY``
  without the index), with and without a one-book filter;
* the initial load commits a whole book per transaction (the measured writers below commit
  per batch of 32, as an ingest does);
* under load: ``--writers`` processes each add ``--writer-books`` books of 1,000 chunks (per-book
  advisory locks, the same transactions as an ingest) while this process keeps searching
  (hybrid); errors of either side are counted, every book must be there afterwards, and
  ``check`` must be clean.

The 1-minute load average is printed next to every figure (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_build
from scale import make_queries

BATCH = 32  # chunks per embedding transaction, as an ingest's embed_batch_size


def _load() -> float:
    return os.getloadavg()[0]


def _pct(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1,
                                                   round(0.95 * (len(ordered) - 1)))]


def database_url(server: str, name: str, *, fresh: bool) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                               (name,)).fetchone()
        if exists and fresh:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        if not exists or fresh:
            admin.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(server)._replace(path="/" + name).geturl()


def add_books(url: str, first: int, count: int, seed: int, batch: int = BATCH) -> int:
    """Write ``count`` synthetic books (indexes from ``first``) as an ingest would (``batch``
    chunks per embedding transaction); the number of chunks written."""
    from grimoire_beholder.models.embedded import DIMENSION
    from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

    rng = np.random.default_rng(seed)
    words = np.array(scale_build.vocabulary())
    probs = scale_build.zipf_probabilities(len(words))
    engine = PostgresEngine.open(url)
    written = 0
    try:
        for index in range(first, first + count):
            texts = scale_build._chunk_texts(rng, words, probs, scale_build.CHUNKS_PER_BOOK)
            book = scale_build._book(index, texts)
            vecs = rng.standard_normal((len(texts), DIMENSION), dtype=np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            with engine.book_lock("file", book.source_hash, wait=False):
                with engine.transaction():
                    book_id = engine.insert_book(book)
                work = engine.pending_chunks(book_id, "pending")
                for start in range(0, len(work), batch):
                    with engine.transaction():
                        engine.mark_embedded(list(zip(work[start:start + batch],
                                                      vecs[start:start + batch], strict=True)),
                                             scale_build.IDENTITY, DIMENSION)
            written += len(texts)
    finally:
        engine.close()
    return written


def build(url: str, chunks: int) -> tuple[float, float]:
    """Load the library with the HNSW index dropped, then build it: (load s, index s)."""
    import psycopg

    books = chunks // scale_build.CHUNKS_PER_BOOK
    started = time.perf_counter()
    add_books(url, 0, 1, seed=chunks)  # stamps the library and makes the vector table
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS embeddings_hnsw")
    add_books(url, 1, books - 1, seed=chunks + 1, batch=scale_build.CHUNKS_PER_BOOK)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("CREATE INDEX embeddings_hnsw ON embeddings "
                     "USING hnsw (vector vector_cosine_ops)")
        conn.execute("VACUUM ANALYZE")
    return loaded, time.perf_counter() - started


def latency(url: str, queries: list[str]) -> dict[str, tuple[float, float]]:
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library

    config = Config(db_path=url, embedding_backend="embedded", llm_backend="none",
                    record_stats=False)
    out = {}
    with Library.open(config=config, read_only=True) as lib:
        for q in queries[:10]:
            lib.search(q, mode="hybrid")
        for label, mode, book in (("vector", "vector", None), ("keyword", "keyword", None),
                                  ("hybrid", "hybrid", None),
                                  ("hybrid, one book", "hybrid", "book-00003")):
            times = []
            for q in queries:
                started = time.perf_counter()
                lib.search(q, mode=mode, book=book)
                times.append((time.perf_counter() - started) * 1000)
            out[label] = _pct(times)
            print(f"  {label:<18} p50 {out[label][0]:7.1f} ms  p95 {out[label][1]:7.1f} ms  "
                  f"(load {_load():.1f})", flush=True)
    return out


def recall(url: str, trials: int = 20) -> tuple[float, float]:
    """Vector recall@10 of the HNSW arm against an exact scan, all books and one book."""
    from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

    engine = PostgresEngine.open(url, read_only=True)
    rng = np.random.default_rng(1)
    found: dict[int | None, list[float]] = {None: [], 3: []}
    try:
        for _ in range(trials):
            q = rng.standard_normal(384).astype(np.float32)
            q /= np.linalg.norm(q)
            for book in found:
                ids = None if book is None else [book + 1]
                approx = [c for c, _ in engine.nearest(q, 10, ids, None)]
                with engine.transaction():
                    engine.run("SET LOCAL enable_indexscan = off")
                    exact = [r[0] for r in engine.rows(
                        "SELECT chunk_id FROM embeddings WHERE (%s::bigint[] IS NULL OR "
                        "book_id = ANY(%s)) ORDER BY vector <=> %s LIMIT 10", (ids, ids, q))]
                found[book].append(len(set(approx) & set(exact)) / 10)
    finally:
        engine.close()
    return statistics.mean(found[None]), statistics.mean(found[3])


def under_writers(url: str, queries: list[str], writers: int, books: int, first: int) -> None:
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library

    procs = [subprocess.Popen([sys.executable, __file__, "--writer", url,
                               str(first + w * books), str(books)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    started = time.perf_counter()
    config = Config(db_path=url, embedding_backend="embedded", llm_backend="none",
                    record_stats=False)
    times, errors = [], 0
    with Library.open(config=config, read_only=True) as lib:
        i = 0
        while any(p.poll() is None for p in procs):
            t0 = time.perf_counter()
            try:
                lib.search(queries[i % len(queries)], mode="hybrid")
            except Exception as exc:
                errors += 1
                print(f"  search error: {exc}", file=sys.stderr)
            times.append((time.perf_counter() - t0) * 1000)
            i += 1
        failed = [p.communicate()[1] for p in procs if p.wait() != 0]
        took = time.perf_counter() - started
        p50, p95 = _pct(times)
        print(f"  {writers} writers × {books} books of {scale_build.CHUNKS_PER_BOOK} chunks in "
              f"{took:.0f} s ({writers * books * scale_build.CHUNKS_PER_BOOK / took:.0f} "
              f"chunks/s); meanwhile {len(times)} hybrid searches p50 {p50:.1f} ms p95 "
              f"{p95:.1f} ms; errors: {errors} searches, {len(failed)} writers "
              f"(load {_load():.1f})")
        for err in failed:
            print("  writer failed:", err.strip().splitlines()[-1], file=sys.stderr)
    with Library.open(config=config) as lib:
        slugs = {b.slug for b in lib.list_books()}
        wanted = {f"book-{i:05d}" for i in range(first, first + writers * books)}
        result = lib.check()
    print(f"  books added: {len(wanted & slugs)}/{len(wanted)}; check: "
          f"{'ok' if result.ok else result.problems} ({result.figures})")


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--writer":
        _, _, url, first, count = sys.argv
        add_books(url, int(first), int(count), seed=int(first))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="a PostgreSQL server with pgvector")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--writer-books", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    books = args.chunks // scale_build.CHUNKS_PER_BOOK
    name = f"gb_scale_{args.chunks}"
    url = database_url(args.url, name, fresh=args.rebuild)
    import psycopg

    with psycopg.connect(url) as conn:
        have = conn.execute("SELECT to_regclass('books') IS NOT NULL").fetchone()
        found = conn.execute("SELECT count(*) FROM books").fetchone() if have and have[
            0] else None
    present = int(found[0]) if found else 0
    if present < books:
        if present:
            url = database_url(args.url, name, fresh=True)
        print(f"building {args.chunks:,} chunks (load {_load():.1f})", flush=True)
        loaded, indexed = build(url, args.chunks)
        print(f"  loaded in {loaded:.0f} s ({args.chunks / loaded:.0f} chunks/s); HNSW index "
              f"built in {indexed:.0f} s (load {_load():.1f})", flush=True)
    queries = make_queries(args.queries, seed=5)
    print(f"searches over {args.chunks:,} chunks ({args.queries} queries, warm):")
    latency(url, queries)
    full, one = recall(url)
    print(f"  vector recall@10 vs exact: {full:.3f} all books, {one:.3f} one book "
          f"(load {_load():.1f})")
    print("writers and searches at once:")
    under_writers(url, queries, args.writers, args.writer_books, first=books + 1000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
