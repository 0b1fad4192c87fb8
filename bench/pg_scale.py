"""The PostgreSQL library at scale: build, HNSW index build time, search latency, and four
writer processes adding books while searches run.

Run: ``uv run python bench/pg_scale.py --url postgresql://…/postgres [--chunks 100000]
[--vectors uniform|realistic] [--text zipf|short] [--queries 100] [--recall-queries 296]
[--sweep] [--hnsw-options 'm = 32, ef_construction = 128'] [--only latency|recall|writers]
[--writers 4] [--writer-books 3] [--rebuild]``.

``--url`` names a server with pgvector (any database on it: the bench makes its own,
``gb_scale_<N>[_realistic][_short]``). The library holds ``bench/scale_build.py``'s synthetic
books (Zipf text; random 384-d unit vectors, or with ``--vectors realistic`` vectors drawn
around real MiniLM embeddings with topic clusters and near-copies, ``scale_vectors.py``),
stamped as the embedded MiniLM model, written through the PostgreSQL engine's own store calls
(``insert_book``, then ``mark_embedded`` per batch of 32, each in its transaction, as an
ingest commits), with the HNSW index dropped during the load and built afterwards (timed).
``--text short`` gives every chunk a three-word text: a vectors-only library that loads
several times faster (the keyword postings dominate the load) for the recall measurements,
which read no text. Then, through ``Library.search`` with the real embedded model:

* latency p50/p95 of vector, keyword and hybrid searches (and hybrid with a one-book
  filter) over ``--queries`` Zipf queries, after 10 warm-up queries;
* vector recall@10 against an exact scan of the same table (``ORDER BY`` without the
  index), asking for 50 rows as a search does, with no filter, a third of the books, the
  book holding the query's true nearest chunk, and a fixed book; the query vectors are the
  dev-set questions' real MiniLM embeddings (realistic) or random ones (uniform). First the
  library's own ``nearest()``, then with ``--sweep`` each ``hnsw.ef_search`` ×
  ``hnsw.iterative_scan`` setting, with the median time and whether the plan used the
  graph at all (realistic: also split [SQuAD questions, answered in the library / the
  others]); ``--ef`` measures chosen ``ef_search`` values only; ``--hnsw-options`` first
  rebuilds the index with other ``m`` / ``ef_construction`` (timed);
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
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_build
from scale import make_queries

if TYPE_CHECKING:
    from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

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


def add_books(url: str, first: int, count: int, seed: int, batch: int = BATCH,
              vectors: str = "uniform", text: str = "zipf") -> int:
    """Write ``count`` synthetic books (indexes from ``first``) as an ingest would (``batch``
    chunks per embedding transaction); the number of chunks written. ``vectors``:
    ``uniform`` random unit vectors or ``realistic`` ones (``scale_vectors.py``); ``text``:
    ``zipf`` chunk texts, or ``short`` ones (three words: a vectors-only library, loaded
    several times faster, for the recall measurements, which read no text)."""
    from grimoire_beholder.models.minilm_files import DIMENSION
    from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

    rng = np.random.default_rng(seed)
    realistic = None
    if vectors == "realistic":
        import scale_vectors

        realistic = scale_vectors.RealisticVectors(seed=seed)
    engine = PostgresEngine.open(url)
    written = 0
    try:
        for index in range(first, first + count):
            texts = (scale_build.chunk_texts(rng, scale_build.CHUNKS_PER_BOOK)
                     if text == "zipf" else
                     [f"passage {index} {i}" for i in range(scale_build.CHUNKS_PER_BOOK)])
            book = scale_build._book(index, texts)
            if realistic is not None:
                vecs = realistic.book(len(texts))
            else:
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


def build(url: str, chunks: int, vectors: str, text: str) -> tuple[float, float]:
    """Load the library with the HNSW index dropped, then build it: (load s, index s)."""
    import psycopg

    from grimoire_beholder.store.postgres import pg_schema

    books = chunks // scale_build.CHUNKS_PER_BOOK
    started = time.perf_counter()
    add_books(url, 0, 1, seed=chunks, vectors=vectors, text=text)  # stamps; vector table
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS embeddings_hnsw")
    add_books(url, 1, books - 1, seed=chunks + 1, batch=scale_build.CHUNKS_PER_BOOK,
              vectors=vectors, text=text)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(pg_schema.HNSW_INDEX)  # the library's own options
        conn.execute("VACUUM ANALYZE")
    return loaded, time.perf_counter() - started


def reindex(url: str, options: str) -> None:
    """Rebuild the HNSW index with ``options`` (pgvector's ``m``, ``ef_construction``)."""
    import psycopg

    if not all(part.strip().split("=")[0].strip() in ("m", "ef_construction")
               and part.split("=")[1].strip().isdigit() for part in options.split(",")):
        raise SystemExit(f"--hnsw-options {options!r}: give m = N, ef_construction = N")
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("DROP INDEX IF EXISTS embeddings_hnsw")
        conn.execute("CREATE INDEX embeddings_hnsw ON embeddings "  # checked digits above
                     f"USING hnsw (vector vector_cosine_ops) WITH ({options})")
    print(f"HNSW index rebuilt WITH ({options}) in {time.perf_counter() - started:.0f} s "
          f"(load {_load():.1f})", flush=True)


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


SWEEP = [(ef, scan) for scan in ("off", "relaxed_order") for ef in (40, 100, 200, 400, 800)]
# The realistic query vectors start with the SQuAD questions, whose answers' paragraphs are
# the library's bases; the books and Markdown questions after them have no answer there.
SQUAD_QUESTIONS = 210


def query_vectors(vectors: str, trials: int) -> np.ndarray:
    """The vectors recall is measured with: the dev-set questions' real MiniLM embeddings
    (realistic), or random unit vectors (uniform)."""
    if vectors == "realistic":
        import scale_vectors

        return scale_vectors.queries()[:trials]
    rng = np.random.default_rng(1)
    q = rng.standard_normal((trials, 384)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _filtered(ids: list[int] | None) -> tuple[str, list[object]]:
    """The WHERE clause and its arguments, as ``nearest`` writes them."""
    return ("" if ids is None else " WHERE book_id = ANY(%s)"), ([] if ids is None else [ids])


def _exact(engine: PostgresEngine, q: np.ndarray, k: int, ids: list[int] | None) -> list[int]:
    where, args = _filtered(ids)
    with engine.transaction():
        engine.run("SET LOCAL enable_indexscan = off")
        return [r[0] for r in engine.rows(
            f"SELECT chunk_id FROM embeddings{where} ORDER BY vector <=> %s, chunk_id LIMIT %s",
            [*args, q, k])]


def _hnsw(engine: PostgresEngine, q: np.ndarray, k: int, ids: list[int] | None, ef: int, scan: str,
          max_tuples: int | None) -> tuple[list[int], bool]:
    """The HNSW scan's top ``k`` at these settings, and whether the plan used the graph."""
    where, args = _filtered(ids)
    sql = f"SELECT chunk_id FROM embeddings{where} ORDER BY vector <=> %s LIMIT %s"
    args += [q, k]
    with engine.transaction():
        engine.run("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
        engine.run("SELECT set_config('hnsw.iterative_scan', %s, true)", (scan,))
        if max_tuples is not None:
            engine.run("SELECT set_config('hnsw.max_scan_tuples', %s, true)",
                       (str(max_tuples),))
        plan = " ".join(str(r[0]) for r in engine.rows(
            "EXPLAIN " + sql, args))
        return ([r[0] for r in engine.rows(sql, args)],
                "embeddings_hnsw" in plan)


def _cell(row: dict[str, float], what: str) -> str:
    """``all books 0.987 (12 ms)``; the share of HNSW plans when not every plan used it."""
    graph = row[f"{what} graph"]
    share = "" if graph == 1 else f", HNSW in {graph:.0%} of plans"
    split = (f" [{row[f'{what} squad']:.3f} / {row[f'{what} other']:.3f}]"
             if f"{what} squad" in row else "")
    return f"{what} {row[what]:.3f}{split} ({row[f'{what} ms']:.0f} ms{share})"


def recall(url: str, vectors: str, trials: int, pool: int = 50,
           sweep: list[tuple[int, str]] | None = None) -> dict[str, dict[str, float]]:
    """Vector recall@10 against an exact scan, for the library's own vector arm
    (``nearest`` asked for ``pool`` rows, as a search asks) and for each (ef_search,
    iterative_scan) of ``sweep``; with no filter, a one-book filter on the book holding the
    query's true nearest chunk, and on a fixed book (``book-00003``)."""
    from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

    engine = PostgresEngine.open(url, read_only=True)
    queries = query_vectors(vectors, trials)
    books = int(engine.execute_one("SELECT count(*) FROM books")[0])
    fixed = int(engine.execute_one("SELECT id FROM books ORDER BY id OFFSET %s LIMIT 1",
                                   (min(3, books - 1),))[0])
    out: dict[str, dict[str, float]] = {}
    try:
        third = [int(r[0]) for r in engine.rows("SELECT id FROM books ORDER BY id LIMIT %s",
                                                (max(1, books // 3),))]
        truth: dict[str, list[tuple[np.ndarray, list[int] | None, list[int]]]] = {
            "all books": [], "a third": [], "its book": [], "a fixed book": []}
        exact_ms: dict[str, list[float]] = {what: [] for what in truth}
        for q in queries:
            t0 = time.perf_counter()
            top = _exact(engine, q, 10, None)
            exact_ms["all books"].append((time.perf_counter() - t0) * 1000)
            book = int(engine.execute_one("SELECT book_id FROM embeddings WHERE chunk_id = %s",
                                          (top[0],))[0])
            truth["all books"].append((q, None, top))
            for what, ids in (("a third", third), ("its book", [book]),
                              ("a fixed book", [fixed])):
                t0 = time.perf_counter()
                truth[what].append((q, ids, _exact(engine, q, 10, ids)))
                exact_ms[what].append((time.perf_counter() - t0) * 1000)
        print(f"  recall@10 vs an exact scan, {len(queries)} {vectors} queries, k={pool} "
              f"(load {_load():.1f}); the exact scan itself: " + ", ".join(
                  f"{what} {statistics.median(ms):.0f} ms" for what, ms in exact_ms.items()),
              flush=True)
        settings: list[tuple[str, int, str, int | None]] = [("library nearest()", 0, "", None)]
        settings += [(f"ef_search {ef:>4}, iterative {scan}", ef, scan, None)
                     for ef, scan in (sweep or [])]
        for label, ef, scan, max_tuples in settings:
            row: dict[str, float] = {}
            for what, cases in truth.items():
                scores, times, graph = [], [], 0
                for q, ids, exact in cases:
                    t0 = time.perf_counter()
                    if not ef:
                        got = [c for c, _ in engine.nearest(q, pool, ids, None)][:10]
                        used = True
                    else:
                        found, used = _hnsw(engine, q, pool, ids, ef, scan, max_tuples)
                        got = found[:10]
                    times.append((time.perf_counter() - t0) * 1000)
                    graph += used
                    scores.append(len(set(got) & set(exact)) / max(1, len(exact)))
                row[what] = statistics.mean(scores)
                if vectors == "realistic" and len(scores) > SQUAD_QUESTIONS:
                    row[f"{what} squad"] = statistics.mean(scores[:SQUAD_QUESTIONS])
                    row[f"{what} other"] = statistics.mean(scores[SQUAD_QUESTIONS:])
                row[what + " ms"] = statistics.median(times)
                row[what + " graph"] = graph / len(cases)
            out[label] = row
            print(f"  {label:<34} " + "  ".join(_cell(row, what) for what in truth)
                  + f"  (load {_load():.1f})", flush=True)
    finally:
        engine.close()
    return out


def under_writers(url: str, queries: list[str], writers: int, books: int, first: int,
                  vectors: str = "uniform") -> None:
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library

    procs = [subprocess.Popen([sys.executable, __file__, "--writer", url,
                               str(first + w * books), str(books), vectors],
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
    if len(sys.argv) == 6 and sys.argv[1] == "--writer":
        _, _, url, first, count, vectors = sys.argv
        add_books(url, int(first), int(count), seed=int(first), vectors=vectors)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="a PostgreSQL server with pgvector")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--vectors", choices=("uniform", "realistic"), default="uniform")
    ap.add_argument("--text", choices=("zipf", "short"), default="zipf",
                    help="short: three-word chunks, a vectors-only library (recall only)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--recall-queries", type=int, default=296,
                    help="query vectors for recall (realistic: at most the 296 dev questions)")
    ap.add_argument("--sweep", action="store_true",
                    help="also measure recall at each ef_search × iterative_scan setting")
    ap.add_argument("--ef", metavar="N,N", default=None,
                    help="instead of --sweep: these ef_search values, iterative relaxed_order")
    ap.add_argument("--only", choices=("latency", "recall", "writers"), action="append",
                    help="run only these parts (repeatable; default: all)")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--writer-books", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--hnsw-options", metavar="WITH", default=None,
                    help="rebuild the HNSW index first WITH these options, e.g. "
                    "'m = 32, ef_construction = 128' (timed)")
    args = ap.parse_args()
    parts = set(args.only or ("latency", "recall", "writers"))
    books = args.chunks // scale_build.CHUNKS_PER_BOOK
    name = (f"gb_scale_{args.chunks}" + ("_realistic" if args.vectors == "realistic" else "")
            + ("_short" if args.text == "short" else ""))
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
        print(f"building {args.chunks:,} chunks, {args.vectors} vectors (load {_load():.1f})",
              flush=True)
        loaded, indexed = build(url, args.chunks, args.vectors, args.text)
        print(f"  loaded in {loaded:.0f} s ({args.chunks / loaded:.0f} chunks/s); HNSW index "
              f"built in {indexed:.0f} s (load {_load():.1f})", flush=True)
    queries = make_queries(args.queries, seed=5)
    if "latency" in parts:
        print(f"searches over {args.chunks:,} chunks ({args.queries} queries, warm):")
        latency(url, queries)
    if args.hnsw_options:
        reindex(url, args.hnsw_options)
    if "recall" in parts:
        sweep = SWEEP if args.sweep else None
        if args.ef:
            sweep = [(int(ef), "relaxed_order") for ef in args.ef.split(",")]
        recall(url, args.vectors, args.recall_queries, sweep=sweep)
    if "writers" in parts:
        print("writers and searches at once:")
        under_writers(url, queries, args.writers, args.writer_books, first=books + 1000,
                      vectors=args.vectors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
