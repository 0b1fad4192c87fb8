"""How search cost grows with the library: latency, open time, memory and disk vs chunk count.

Run: ``uv run python bench/scale.py [--sizes 10000,100000] [--queries 120] [--with-1m]
[--exact] [--vectors uniform|realistic] [--json]``.

Libraries of N synthetic chunks (``bench/scale_build.py``: Zipf text, random 384-d unit
vectors, written through the store layer; cached in ``bench/out/`` or
``$GRIMOIRE_BEHOLDER_SCALE_DIR``) get their persisted search index (``search/index_writer``:
built once, timed, as a writing command would) and are measured one per subprocess, so each
starts from a clean heap and its RSS delta means something. In that process, warm (after 10
warm-up queries per mode), through ``Library.search`` exactly as the CLI and MCP server
call it:

* open: ``Library.open`` (read-only) and the first index load; ``first answer``: from
  before ``Library.open`` to the first hybrid answer, model load included, in a process of
  its own (warm disk cache);
* memory: RSS before/after the index load, and at the end minus the embedding model's own
  RSS, vs the raw float32 matrix (N × 384 × 4 bytes);
* before measuring, the library and its index are read once (a warm page cache, as on a
  machine that has been serving the library; the exact scan is timed on vectors in memory);
* latency p50/p95 of vector, keyword and hybrid searches over ``--queries`` queries, without
  and with a one-book filter (1 % of the library at 100 books). Hybrid includes embedding the
  query with the real embedded MiniLM model (its share is reported as ``embed``);
* ``keyword-common``: queries made only of the most frequent content words — the worst case
  for an OR-ed FTS5 query, since every matching chunk gets a BM25 score;
* exactness: vector recall@10 against the exact float32 scan (all books, and one book): a
  hit counts when its exact cosine reaches the scan's 10th best (within ``TIE``), so among
  identical vectors (a text ingested twice) either copy counts, whichever float rounding
  put first (``recall10_strict`` counts only the scan's own ten chunks); and
  the share of queries whose keyword top 10 is FTS5's own ``bm25()`` top 10 (tie order
  aside: chunks with equal scores may swap), over every bench query.

``--exact`` measures without the persisted index (the exact arms a small library uses).

``--vectors realistic`` builds the libraries' vectors around real MiniLM embeddings with
clusters and near-copies (``scale_vectors.py``) and searches with the real embeddings of
the dev-set questions (paired with the Zipf query texts for the keyword arm); ``hybrid`` is
then the search given the query's vector, and the real model's query embedding is timed on
its own (``embed_p50_ms``) and in ``hybrid-model`` (the same searches with every query
embedded by the model, as a person's search runs). ``--json`` prints one JSON object per
size instead of the tables: ``chunks``, ``hybrid_p50_ms``/``hybrid_p95_ms``,
``exact_scan_ms`` (the median of one float32 matrix-vector product + top 50 over the same
vectors, in the same process), ``p50_over_scan``, ``recall10``/``recall10_book`` (vector
recall@10 against that scan without/with a one-book filter), ``hybrid_model_p50_ms``,
``overhead_p50_ms`` (the wall time of a hybrid search not spent in its two arms, which run
at once) and ``load``.

The 2-core machine this runs on is often shared, so the 1-minute load average is printed
next to every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_build
from scale_exactness import exactness

MODES = ("vector", "keyword", "hybrid")


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _load() -> float:
    return os.getloadavg()[0]


def make_queries(count: int, seed: int, common: bool = False) -> list[str]:
    """Question-like word bags drawn from the corpus distribution (stop words included).

    ``common``: only the 40 most frequent content words, the keyword arm's worst case.
    """
    rng = np.random.default_rng(seed)
    words = scale_build.vocabulary()
    probs = scale_build.zipf_probabilities(len(words))
    first = len(set(scale_build.STOP))
    if common:
        pool = np.arange(first, first + 40)
        return [" ".join(words[i] for i in rng.choice(pool, 5, replace=False))
                for _ in range(count)]
    out = []
    for _ in range(count):
        ids = rng.choice(len(words), int(rng.integers(5, 10)), p=probs)
        out.append("what " + " ".join(words[i] for i in ids) + "?")
    return out


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def _index_mb(path: Path) -> float:
    from grimoire_beholder.search.segment_files import folder_for

    folder = folder_for(path)
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20 \
        if folder.is_dir() else 0.0


class QueryVectors:
    """The real embedder, except that the bench's query texts embed to the real vectors of
    dev-set questions (``--vectors realistic``): keyword arm on the text, vector arm on a
    real question's embedding."""

    def __init__(self, inner: Any, texts: list[str], vectors: np.ndarray) -> None:
        self.inner = inner
        self.known = {t: vectors[i % len(vectors)] for i, t in enumerate(texts)}
        self.use_model = False  # True: every query goes through the real model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_query(self, text: str) -> np.ndarray:
        known = None if self.use_model else self.known.get(text)
        return known if known is not None else self.inner.embed_query(text)


def measure(chunks: int, n_queries: int, vectors: str = "uniform") -> dict[str, Any]:
    """Everything for one library size, in this (fresh) process."""
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library
    from grimoire_beholder.models.embedded import EmbeddedEmbedder

    path = scale_build.library_path(chunks, vectors)
    fields = set(Config.__dataclass_fields__)
    extra = {"record_stats": False} if "record_stats" in fields else {}
    config = Config(db_path=str(path), **extra)
    out: dict[str, Any] = {"chunks": chunks, "vectors": vectors,
                           "db_mb": path.stat().st_size / 2**20, "index_mb": _index_mb(path)}
    queries = make_queries(n_queries, seed=1)
    common = make_queries(n_queries, seed=2, common=True)
    embedder: Any = None
    if vectors == "realistic":
        import scale_vectors

        embedder = QueryVectors(EmbeddedEmbedder(), queries + common, scale_vectors.queries())
    rss0 = _rss_mb()
    started = time.perf_counter()
    lib = Library.open(config=config, read_only=True, embedder=embedder)
    out["open_ms"] = (time.perf_counter() - started) * 1000
    engine = lib._search_engine()
    loading = time.perf_counter()
    out["refresh"] = engine.vector_index.refresh(lib.conn)
    out["load_ms"] = (time.perf_counter() - loading) * 1000
    out["open_load"] = (out["open_ms"] + out["load_ms"], _load())
    index = engine.vector_index
    out["matrix_mb"] = index.size * index.dimension * 4 / 2**20
    out["rss_delta_mb"] = _rss_mb() - rss0
    out["rss_search_mb"] = _exercise(lib, queries + common) - rss0
    rss_model = _rss_mb()
    loading = time.perf_counter()
    lib.embedder.check()  # type: ignore[attr-defined]
    out["model_load_ms"] = (time.perf_counter() - loading) * 1000
    out["model_rss_mb"] = _rss_mb() - rss_model
    book = f"book-{chunks // scale_build.CHUNKS_PER_BOOK // 2:05d}"
    if embedder is not None:  # the real model's query embedding, timed on its own
        timed = []
        for q in queries[:33]:
            begun = time.perf_counter()
            embedder.inner.embed_query(q)
            timed.append((time.perf_counter() - begun) * 1000)
        out["embed_p50_ms"] = statistics.median(timed[3:])
    for mode in MODES:  # warm-up: page cache, numpy/BLAS threads, FTS5 statements
        for q in queries[:10]:
            lib.search(q, mode=mode)
    rows: dict[str, Any] = {}
    cases = [(m, f, queries) for m in MODES for f in (None, book)]
    cases += [("keyword-common", None, common), ("hybrid-common", None, common)]
    if embedder is not None:  # hybrid as a person runs it: the query embedded by the model
        cases.append(("hybrid-model", None, queries))
    for mode, book_filter, qs in cases:
        real_mode = mode.split("-")[0]
        if embedder is not None:
            embedder.use_model = mode == "hybrid-model"
        times, cpu, stages, overhead = [], [], [], []
        load = _load()
        for q in qs:
            started, cpu0 = time.perf_counter(), time.process_time()
            res = lib.search(q, mode=real_mode, book=book_filter)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu0) * 1000)
            stages.append(res.timings_ms)
            # the arms run at once (vector on a worker): the wall they take is the keyword
            # arm's plus what of the vector arm it did not hide; everything else is overhead
            arms = res.timings_ms.get("keyword", 0.0) + res.timings_ms.get("vector_wait", 0.0)
            overhead.append(times[-1] - arms)
        p50, p95 = _percentiles(times)
        rows[f"{mode}{' +book' if book_filter else ''}"] = {
            "p50": p50, "p95": p95, "cpu_p50": statistics.median(cpu), "load": load,
            "overhead_p50": statistics.median(overhead),
            "embed_p50": statistics.median(t.get("embed", 0.0) for t in stages),
            "stages": {k: statistics.median(t.get(k, 0.0) for t in stages)
                       for k in ("embed", "vector", "keyword", "vector_wait", "fusion",
                                 "ranking", "passages", "fetch")}}
    if embedder is not None:
        embedder.use_model = False
    out["latency"] = rows
    out["rss_end_mb"] = _rss_mb() - rss0
    out["exactness"] = exactness(lib, queries + common, book)
    lib.close()
    return out


def first_answer(chunks: int, vectors: str = "uniform") -> dict[str, float]:
    """From before ``Library.open`` to the first hybrid answer (model load included), in a
    fresh process with a warm disk cache: wall and CPU ms."""
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library

    config = Config(db_path=str(scale_build.library_path(chunks, vectors)),
                    record_stats=False)
    started, cpu = time.perf_counter(), time.process_time()
    lib = Library.open(config=config, read_only=True)
    lib.search(make_queries(1, seed=1)[0], mode="hybrid")
    out = {"first_answer_ms": (time.perf_counter() - started) * 1000,
           "first_answer_cpu_ms": (time.process_time() - cpu) * 1000}
    lib.close()
    return out


def _exercise(lib: Any, queries: list[str]) -> float:
    """RSS after every vector (random unit queries: no model loaded yet) and keyword search
    of the bench — what the search structures hold resident once used."""
    index = lib._search_engine().vector_index
    rng = np.random.default_rng(5)
    for q in queries:
        vec = rng.standard_normal(index.dimension).astype(np.float32)
        index.search(vec, 50)
        lib.search(q, mode="keyword")
    return _rss_mb()


def _prepare_index(n: int, exact: bool, vectors: str = "uniform") -> dict[str, Any]:
    """Build or update the persisted index (or remove it, for ``--exact``), timed: what
    was done, wall and CPU seconds, load."""
    import shutil

    from grimoire_beholder.search import index_writer
    from grimoire_beholder.search.segment_files import folder_for
    from grimoire_beholder.store.db import connect

    path = scale_build.library_path(n, vectors)
    if exact:
        shutil.rmtree(folder_for(path), ignore_errors=True)
        return {}
    conn = connect(path)  # read-write: migrates a library built by an older version
    try:
        started, cpu = time.perf_counter(), time.process_time()
        result = index_writer.update(conn, path)
        out = {"index": result, "index_s": round(time.perf_counter() - started, 1),
               "index_cpu_s": round(time.process_time() - cpu, 1), "index_load": _load()}
        print(f"index for {n:,} chunks: {result} in {out['index_s']} s, "
              f"{out['index_cpu_s']} CPU-s (load {_load():.1f})", file=sys.stderr)
        return out
    finally:
        conn.close()


def _warm(path: Path) -> None:
    """Read the library and its index once, so the page cache holds them (as on a machine
    that has been serving this library; the exact scan is measured on vectors in memory)."""
    from grimoire_beholder.search.segment_files import folder_for

    started = time.perf_counter()
    folder = folder_for(path)
    files = [path, *(sorted(folder.rglob("*")) if folder.is_dir() else [])]
    for file in (f for f in files if f.is_file()):
        with open(file, "rb", buffering=0) as handle:
            while handle.read(16 * 2**20):
                pass
    print(f"read {path.name} and its index once in {time.perf_counter() - started:.0f} s "
          f"(load {_load():.1f})", file=sys.stderr)


def _run_sizes(sizes: list[int], n_queries: int, exact: bool, vectors: str = "uniform",
               summary: bool = False) -> list[dict[str, Any]]:
    results = []
    for n in sizes:
        _, seconds = scale_build.build(n, vectors=vectors)
        if seconds:
            print(f"built {n} chunks in {seconds:.0f} s (load {_load():.1f})", file=sys.stderr)
        result: dict[str, Any] = {"index_build": _prepare_index(n, exact, vectors)}
        _warm(scale_build.library_path(n, vectors))
        for flag, extra in (("--first", []), ("--measure", ["--queries", str(n_queries)])):
            proc = subprocess.run([sys.executable, __file__, flag, str(n), "--vectors", vectors,
                                   *extra], capture_output=True, text=True, check=True)
            result.update(json.loads(proc.stdout.strip().splitlines()[-1]))
        results.append(result)
        if summary:
            print(json.dumps(summarise(result)), flush=True)
    return results


def summarise(r: dict[str, Any]) -> dict[str, Any]:
    """The one JSON object per size of ``--json``."""
    hybrid, book = r["latency"]["hybrid"], r["latency"].get(
        next(k for k in r["latency"] if k.startswith("hybrid +book")), {})
    model = r["latency"].get("hybrid-model", {})
    stages = hybrid["stages"]
    e = r.get("exactness", {})
    return {"chunks": r["chunks"], "vectors": r["vectors"],
            "hybrid_p50_ms": round(hybrid["p50"], 2), "hybrid_p95_ms": round(hybrid["p95"], 2),
            "hybrid_book_p50_ms": round(book.get("p50", float("nan")), 2),
            "hybrid_book_p95_ms": round(book.get("p95", float("nan")), 2),
            "hybrid_model_p50_ms": round(model.get("p50", float("nan")), 2),
            "hybrid_model_p95_ms": round(model.get("p95", float("nan")), 2),
            "hybrid_cpu_p50_ms": round(hybrid["cpu_p50"], 2),
            "exact_scan_ms": round(e.get("exact_scan_ms", float("nan")), 2),
            "recall10": e.get("recall_all"), "recall10_book": e.get("recall_book"),
            "recall10_strict": e.get("recall_all_strict"),
            "proven_exact": e.get("proven_exact"),
            "vector_p50_ms": round(r["latency"]["vector"]["p50"], 2),
            "keyword_p50_ms": round(r["latency"]["keyword"]["p50"], 2),
            "stages_p50_ms": {k: round(v, 2) for k, v in stages.items()},
            "overhead_p50_ms": round(hybrid["overhead_p50"], 2),
            "p50_over_scan": round(hybrid["p50"] / e["exact_scan_ms"], 3)
            if e.get("exact_scan_ms") else None,
            "embed_p50_ms": round(r.get("embed_p50_ms", stages["embed"]), 2),
            "index_build": r.get("index_build"), "load": round(hybrid["load"], 2)}


def print_tables(results: list[dict[str, Any]]) -> None:
    print("| chunks | DB on disk | index on disk | open + load index | open to first hybrid "
          "answer | raw vectors | RSS after load | RSS after searching | model load |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        total, load = r["open_load"]
        raw = r["matrix_mb"] or float("nan")
        print(f"| {r['chunks']:,} | {r['db_mb']:,.0f} MB | {r['index_mb']:,.0f} MB | "
              f"{total:,.0f} ms (open {r['open_ms']:.0f} + load {r['load_ms']:,.0f}, "
              f"{r['refresh']}; load avg {load:.1f}) | {r['first_answer_ms']:,.0f} ms "
              f"({r['first_answer_cpu_ms']:,.0f} CPU-ms) | "
              f"{r['matrix_mb']:,.0f} MB | {r['rss_delta_mb']:,.0f} MB | "
              f"{r['rss_search_mb']:,.0f} MB ({r['rss_search_mb'] / raw:.2f}x raw) | "
              f"{r['model_load_ms']:,.0f} ms |")
    print()
    exact = [r for r in results if r.get("exactness")]
    if exact:
        print("| chunks | vector recall@10 vs exact | same, one-book filter | keyword top-10 = "
              "FTS5 bm25 (queries) |")
        print("| ---: | ---: | ---: | ---: |")
        for r in exact:
            e = r["exactness"]
            print(f"| {r['chunks']:,} | {e['recall_all']:.4f} | {e['recall_book']:.4f} | "
                  f"{e['keyword_same']:.1%} ({e['queries']}) |")
        print()
    print()
    print("| case | " + " | ".join(f"{r['chunks']:,} p50 / p95 (ms)" for r in results)
          + " | load avg |")
    print("| --- |" + " ---: |" * (len(results) + 1))
    for case in results[0]["latency"]:
        cells = []
        for r in results:
            row = r["latency"][case]
            embed = f" (embed {row['embed_p50']:.0f})" if row["embed_p50"] else ""
            cells.append(f"{row['p50']:.1f} / {row['p95']:.1f}{embed}")
        loads = "/".join(f"{r['latency'][case]['load']:.1f}" for r in results)
        print(f"| {case} | " + " | ".join(cells) + f" | {loads} |")
    print()
    print("Median per-stage wall ms (engine timings) and process CPU ms per query, which "
          "load inflates much less than wall time:\n")
    print("| case | chunks | embed | vector | keyword | fusion | ranking | passages | fetch "
          "| CPU ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in results[0]["latency"]:
        for r in results:
            row = r["latency"][case]
            st = row["stages"]
            print(f"| {case} | {r['chunks']:,} | {st['embed']:.1f} | {st['vector']:.1f} | "
                  f"{st['keyword']:.1f} | {st['fusion']:.1f} | {st['ranking']:.1f} | "
                  f"{st['passages']:.1f} | {st['fetch']:.1f} | "
                  f"{row['cpu_p50']:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--with-1m", action="store_true",
                        help="also 1,000,000 chunks (~12 GB on disk, ~20+ min to build)")
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--exact", action="store_true",
                        help="measure without the persisted index (exact arms only)")
    parser.add_argument("--vectors", choices=("uniform", "realistic"), default="uniform",
                        help="random unit vectors, or drawn around real MiniLM embeddings")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per size (see the module docstring)")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.queries, args.vectors)))
        return
    if args.first:
        print(json.dumps(first_answer(args.first, args.vectors)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.with_1m and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    if args.json:
        print(f"load average at start: {_load():.1f} (2 cores)", file=sys.stderr)
        _run_sizes(sizes, args.queries, args.exact, args.vectors, summary=True)
        return
    print(f"load average at start: {_load():.1f} (2 cores)\n")
    print_tables(_run_sizes(sizes, args.queries, args.exact, args.vectors))


if __name__ == "__main__":
    main()
