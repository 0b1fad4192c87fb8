"""Which vector index for a big segment: the measurement behind the choice (README table).

Run: ``uv run --with faiss-cpu --with usearch python bench/ann_choice.py [--rows 250000]``
(neither library is a dependency unless chosen; hnswlib has no wheel here and is left out).

One segment's worth of realistic vectors (``scale_vectors.py``: around real MiniLM
embeddings, with clusters and near-copies; ``--rows`` defaults to the largest segment the
index writes) and the real embeddings of the dev-set questions as queries. Each candidate
proposes 50 rows per query, re-scored exactly from the float32 vectors (as the engine does);
recall@10 is against the exact float32 scan, latency is p50 / p95 wall ms per query (one
query at a time, as a search runs), build is wall seconds on this machine, with the load
average next to every row:

* ``float32 scan``: the exact arm (one matrix-vector product + top 50);
* ``int8 scan, bounded``: the persisted index's exact arm (``search/bounded_scan.py``);
* faiss ``IVF-Flat`` (nprobe swept), faiss ``HNSW-Flat`` and ``HNSW-SQ8`` (efSearch swept),
  usearch HNSW (``i8`` and ``f32`` storage, expansion swept).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_vectors
from grimoire_beholder.search import bounded_scan, segment_files

K = 10
POOL = 50


def _load() -> float:
    return os.getloadavg()[0]


def _vectors(rows: int) -> np.ndarray:
    gen = scale_vectors.RealisticVectors(seed=rows)
    return np.concatenate([gen.book(1000) for _ in range(rows // 1000)])


def _run(name: str, data: np.ndarray, queries: np.ndarray, truth: list[set[int]],
         search: Callable[[np.ndarray], np.ndarray], build_s: float,
         proven: list[bool] | None = None) -> dict[str, object]:
    times, recall = [], []
    for q, want in zip(queries, truth, strict=True):
        started = time.perf_counter()
        rows = search(q)
        rows = rows[rows >= 0]
        exact = data[rows] @ q
        top = rows[np.argsort(-exact)[:K]]
        times.append((time.perf_counter() - started) * 1000)
        recall.append(len(set(top.tolist()) & want) / K)
    ordered = sorted(times[10:] or times)
    if proven is not None:
        name = name.replace("{proven}", f"{statistics.mean(proven):.0%}")
    row = {"index": name, "build_s": round(build_s, 1), "recall10": statistics.mean(recall),
           "p50_ms": statistics.median(ordered),
           "p95_ms": ordered[round(0.95 * (len(ordered) - 1))], "load": round(_load(), 1)}
    print(f"| {row['index']} | {row['build_s']} | {row['recall10']:.4f} | "
          f"{row['p50_ms']:.2f} / {row['p95_ms']:.2f} | {row['load']} |", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--shares", default="0.02,0.05,0.1",
                        help="PROBE_SHARE values for this index's lists")
    parser.add_argument("--lists-only", action="store_true",
                        help="skip faiss and usearch (not installed)")
    args = parser.parse_args()
    data = _vectors(args.rows)
    queries = scale_vectors.queries()
    truth = []
    for q in queries:
        scores = data @ q
        truth.append(set(np.argpartition(-scores, K)[:K].tolist()))
    print(f"{args.rows:,} realistic vectors, {len(queries)} real questions, load "
          f"{_load():.1f}\n")
    print("| index | build s | recall@10 | p50 / p95 ms | load |")
    print("| --- | ---: | ---: | ---: | ---: |")
    _run("float32 scan (exact)", data, queries, truth,
         lambda q: np.argpartition(-(data @ q), POOL)[:POOL], 0.0)
    started = time.perf_counter()
    codes, scale = segment_files.quantize(data)
    residual = segment_files.max_residual(data, codes, scale)
    seg = segment_files.Segment("bench", scale, {"codes": codes, "vectors": data,
                                                 "chunk_ids": np.arange(len(data)),
                                                 "radii": np.zeros(0, np.float32)},
                                residual=residual)
    everything = np.ones(len(data), dtype=bool)
    _run("int8 scan, bounded (exact)", data, queries, truth,
         lambda q: np.concatenate([f[0] for f in bounded_scan.bounded_top(
             [(seg, everything)], q, K, np.zeros(0))[0]]), time.perf_counter() - started)
    _lists(data, queries, truth, args.shares)
    if not args.lists_only:
        _faiss(data, queries, truth)
        _usearch(data, queries, truth)


def _lists(data: np.ndarray, queries: np.ndarray, truth: list[set[int]], shares: str) -> None:
    """The persisted index's own lists (``search/index_partition.py``): int8 scan of the
    nearest lists plus every list whose bound reaches the k-th score (up to a budget),
    re-scored exactly; ``proven`` is the share of queries whose result is proven exact."""
    from grimoire_beholder.search import index_partition
    from grimoire_beholder.search.index_writer import MAX_SEGMENT_ROWS

    started = time.perf_counter()
    empty = segment_files.Postings(np.zeros(0, np.int32), np.zeros(0, np.uint64),
                                   np.zeros(0, np.float32))
    parts = []  # as index_writer cuts a big library: segments of MAX_SEGMENT_ROWS rows
    for first in range(0, len(data), MAX_SEGMENT_ROWS):
        ids = np.arange(first, min(first + MAX_SEGMENT_ROWS, len(data)))
        arrays, scale = segment_files.segment_arrays(ids, ids, data[ids],
                                                     np.zeros(len(ids), np.int32), empty)
        seg = segment_files.Segment("lists", scale, arrays, residual=segment_files.max_residual(
            arrays["vectors"], arrays["codes"], scale))
        parts.append((seg, np.ones(len(ids), dtype=bool)))
    built = time.perf_counter() - started
    for share in (float(s) for s in shares.split(",")):
        index_partition.PROBE_SHARE = share
        proven: list[bool] = []

        def search(q: np.ndarray, proven: list[bool] = proven) -> np.ndarray:
            found, exact = bounded_scan.bounded_top(parts, q, K, np.zeros(0))
            proven.append(exact)
            return np.concatenate([f[0] for f in found])  # chunk id = row of ``data``

        _run(f"lists: {len(parts)} segment(s) × {parts[0][0].lists} of "
             f"~{index_partition.ROWS_PER_LIST} rows, nearest {share:.0%} + bound "
             f"(proven {{proven}})", data, queries, truth, search, built, proven)


def _faiss(data: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> None:
    import faiss

    faiss.omp_set_num_threads(1)  # one query at a time: threads only add overhead
    dim = data.shape[1]
    started = time.perf_counter()
    nlist = int(4 * np.sqrt(len(data)))
    quantizer = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    faiss.omp_set_num_threads(2)
    ivf.train(data[np.random.default_rng(0).choice(len(data), min(len(data), 50 * nlist),
                                                   replace=False)])
    ivf.add(data)
    faiss.omp_set_num_threads(1)
    built = time.perf_counter() - started
    for nprobe in (8, 16, 32, 64):
        ivf.nprobe = nprobe
        _run(f"faiss IVF-Flat {nlist} lists, nprobe {nprobe}", data, queries, truth,
             lambda q: ivf.search(q[None, :], POOL)[1][0], built)
    for name, make in (("HNSW-Flat", lambda: faiss.IndexHNSWFlat(dim, 32,
                                                                 faiss.METRIC_INNER_PRODUCT)),
                       ("HNSW-SQ8", lambda: faiss.IndexHNSWSQ(
                           dim, faiss.ScalarQuantizer.QT_8bit, 32,
                           faiss.METRIC_INNER_PRODUCT))):
        index = make()
        index.hnsw.efConstruction = 80
        faiss.omp_set_num_threads(2)
        started = time.perf_counter()
        if not index.is_trained:
            index.train(data[:50_000])
        index.add(data)
        built = time.perf_counter() - started
        faiss.omp_set_num_threads(1)
        for ef in (64, 128, 256):
            index.hnsw.efSearch = ef
            _run(f"faiss {name} M=32, efSearch {ef}", data, queries, truth,
                 lambda q, index=index: index.search(q[None, :], POOL)[1][0], built)


def _usearch(data: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> None:
    from usearch.index import Index

    for dtype in ("i8", "f32"):
        index = Index(ndim=data.shape[1], metric="ip", dtype=dtype, connectivity=16,
                      expansion_add=128)
        started = time.perf_counter()
        index.add(np.arange(len(data)), data, threads=2)
        built = time.perf_counter() - started
        for ef in (64, 128, 256):
            index.expansion_search = ef
            _run(f"usearch HNSW {dtype} M=16, expansion {ef}", data, queries, truth,
                 lambda q, index=index: np.asarray(index.search(q, POOL).keys, np.int64),
                 built)


if __name__ == "__main__":
    main()
