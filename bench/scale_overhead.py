"""What a search costs past its two arms, stage by stage, in CPU and wall ms per query — and
whether a change left every result as it was.

Run: ``uv run python bench/scale_overhead.py [--size 100000] [--vectors realistic]
[--queries 60] [--rounds 5] [--dev squad,books,markdown] [--save F | --against F]
[--profile]``.

Targets: the scale bench's library of ``--size`` chunks (``scale_build``; its hybrid
searches as ``bench/scale.py`` runs them: Zipf query texts, the real embeddings of dev-set
questions with ``--vectors realistic``, ``top_k`` 5), and with ``--dev`` the dev-set libraries
of ``bench/retrieval_eval.py`` (built and cached as it builds them; every dev question in
hybrid, vector and keyword mode, ``top_k`` 10, as the eval asks them).

Each target's searches run once through ``Library.search`` with their real arms: that
pass records what every search returned (hits, order, scores, passages and their pages or
lines, confidence and its features) and the overhead as ``bench/scale.py`` counts it (wall
time minus the keyword arm and the part of the vector arm it did not hide). Then the arms
are replayed — each arm returns the list it returned before, at no cost — for ``--rounds``
rounds, and everything else a search does is timed per stage (thread CPU and wall ms of the
functions the engine calls, ``other`` being the rest: filters' bookkeeping, the snapshot, the
hand-off to the vector arm's worker). Per stage it prints the mean over queries of each
query's median over the rounds (means add up to the total), and the total's p50.

``--save F`` writes every result of the real pass to ``F`` (JSON); ``--against F`` compares
them with a saved file (e.g. from the code before a change: run this file with
``PYTHONPATH`` set to that code's ``src``) and exits 1 if any search returned anything else.
``--profile`` prints a cProfile of one replay round in CPU time (the 25 heaviest functions).

On a shared machine CPU ms inflate much less than wall ms; the load average is printed
beside every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

Case = tuple[str, str | None, int]  # (query, mode, top_k)
STAGES: dict[str, list[tuple[str, str]]] = {  # stage → (module or Module.Class, attribute)
    "filters": [("grimoire_beholder.store.hit_queries", "resolve_books"),
                ("grimoire_beholder.store.hit_queries", "library_state"),
                ("grimoire_beholder.search.engine.SearchEngine", "_follow_data")],
    "refresh": [("grimoire_beholder.search.index.SearchIndex", "refresh")],
    "fill": [("grimoire_beholder.search.engine.SearchEngine", "_cosines_missed"),
             ("grimoire_beholder.search.candidate_arms", "cosines_missed")],
    "fusion": [("grimoire_beholder.search.engine.SearchEngine", "_fuse"),
               ("grimoire_beholder.search.candidate_arms", "fuse")],
    "facts": [("grimoire_beholder.store.text_spans", "candidate_facts")],
    "ranking": [("grimoire_beholder.search.ranking", "adjust"),
                ("grimoire_beholder.search.ranking", "index_lifts"),
                ("grimoire_beholder.search.ranking", "proximity_head"),
                ("grimoire_beholder.search.ranking", "ceiling")],
    "positions": [("grimoire_beholder.store.hit_queries", "chunk_positions")],
    "passages": [("grimoire_beholder.search.passages", "select"),
                 ("grimoire_beholder.search.passages", "apply")],
    "rows": [("grimoire_beholder.store.hit_queries", "hit_rows"),
             ("grimoire_beholder.search.hits.SearchHit", "from_row")],
    "confidence": [("grimoire_beholder.search.engine.SearchEngine", "_assess")],
}


def _load() -> float:
    return os.getloadavg()[0]


def _owner(path: str) -> Any:
    """The module or class ``path`` names; None where this version of the code has none."""
    import importlib

    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name, None)


def vector_arm_owner() -> tuple[Any, str]:
    """Where this version of the code keeps the vector arm, as (owner, attribute):
    ``search.candidate_arms.vector_arm``, or ``SearchEngine._vector_arm`` before it moved."""
    from grimoire_beholder.search import engine

    arms = _owner("grimoire_beholder.search.candidate_arms")
    return (engine.SearchEngine, "_vector_arm") if arms is None else (arms, "vector_arm")


class Timers:
    """Thread CPU and wall seconds per stage, added up by wrappers around the functions."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.depth = 0  # only the outermost timed call counts (a stage may call another)

    def wrap(self, stage: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.depth:
                return func(*args, **kwargs)
            self.depth += 1
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                self.depth -= 1
                self.cpu[stage] = self.cpu.get(stage, 0.0) + time.thread_time() - cpu
                self.wall[stage] = self.wall.get(stage, 0.0) + time.perf_counter() - wall
        return timed

    def reset(self) -> None:
        self.cpu.clear()
        self.wall.clear()


@contextmanager
def patched(owner: Any, name: str, value: Any) -> Any:
    """``owner.name`` set to ``value`` for the block (a class attribute keeps its kind)."""
    old = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    new = (classmethod(value) if isinstance(old, classmethod) else
           staticmethod(value) if isinstance(old, staticmethod) else value)
    setattr(owner, name, new)
    try:
        yield
    finally:
        setattr(owner, name, old)


def _stage_wrappers(stack: ExitStack, timers: Timers) -> None:
    for stage, targets in STAGES.items():
        for path, name in targets:
            owner = _owner(path)
            if not hasattr(owner, name):
                continue  # not in this version of the code
            raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
            stack.enter_context(patched(owner, name, timers.wrap(stage, func)))


def fingerprint(result: Any) -> dict[str, Any]:
    """Everything a search returned that a change to the per-query work must not change."""
    def digest(text: str | None) -> str | None:
        return None if text is None else hashlib.sha1(text.encode()).hexdigest()[:16]

    return {"mode": result.mode, "note": result.note, "confidence": result.confidence,
            "low": result.low_confidence,
            "features": {k: repr(v) for k, v in sorted((result.features or {}).items())},
            "hits": [[h.chunk_id, repr(h.score), h.ranks, digest(h.text), digest(h.context),
                      h.section, h.page_start, h.page_end, h.line_start, h.line_end, h.role]
                     for h in result.hits]}


def run_target(name: str, lib: Any, cases: list[Case], rounds: int, profile: bool
               ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Real pass (results, scale.py's overhead), then the replayed rounds: the figures."""
    from grimoire_beholder.search import keyword

    captured: list[dict[str, Any]] = []
    results, real_over, real_cpu = [], [], []
    arm_owner, arm_name = vector_arm_owner()
    search_kw, vector_arm = keyword.search, getattr(arm_owner, arm_name)

    def keyword_rec(*args: Any, **kwargs: Any) -> Any:
        captured[-1]["keyword"] = search_kw(*args, **kwargs)
        return captured[-1]["keyword"]

    def vector_rec(*args: Any, **kwargs: Any) -> Any:  # (the engine first, when a method)
        captured[-1]["vector"] = vector_arm(*args, **kwargs)
        return captured[-1]["vector"]

    for query, mode, k in cases[:5]:  # warm-up: page cache, prepared statements
        lib.search(query, mode=mode, top_k=k)
    with patched(keyword, "search", keyword_rec), \
            patched(arm_owner, arm_name, vector_rec):
        for query, mode, k in cases:
            captured.append({})
            wall, cpu = time.perf_counter(), time.process_time()
            found = lib.search(query, mode=mode, top_k=k)
            real_cpu.append(time.process_time() - cpu)
            wall = time.perf_counter() - wall
            t = found.timings_ms
            real_over.append(wall * 1000 - t.get("keyword", 0.0) - t.get("vector_wait", 0.0))
            results.append(fingerprint(found))
    load_real = _load()
    at = [0]

    def keyword_replay(*args: Any, **kwargs: Any) -> Any:
        return list(captured[at[0]]["keyword"])

    def vector_replay(*args: Any, **kwargs: Any) -> Any:
        hits, _, vec = captured[at[0]]["vector"]
        return list(hits), {"embed": 0.0, "vector": 0.0}, vec

    timers = Timers()
    per_query: list[list[dict[str, float]]] = [[] for _ in cases]
    load_replay = _load()
    with ExitStack() as stack:
        stack.enter_context(patched(keyword, "search", keyword_replay))
        stack.enter_context(patched(arm_owner, arm_name, vector_replay))
        _stage_wrappers(stack, timers)
        for _ in range(rounds):
            for i, (query, mode, k) in enumerate(cases):
                at[0] = i
                timers.reset()
                wall, cpu = time.perf_counter(), time.process_time()
                lib.search(query, mode=mode, top_k=k)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                row = {f"cpu:{s}": v for s, v in timers.cpu.items()}
                row.update({f"wall:{s}": v for s, v in timers.wall.items()})
                row["cpu:other"] = cpu - sum(timers.cpu.values())
                row["wall:other"] = wall - sum(timers.wall.values())
                row["cpu:total"], row["wall:total"] = cpu, wall
                per_query[i].append(row)
        if profile:
            profiler = cProfile.Profile(time.process_time)  # CPU: wall is mostly the queue
            profiler.enable()
            for i, (query, mode, k) in enumerate(cases):
                at[0] = i
                lib.search(query, mode=mode, top_k=k)
            profiler.disable()
            print(f"\n{name}: one replayed round under cProfile", file=sys.stderr)
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(25)
            stats.sort_stats("cumulative").print_stats("grimoire_beholder", 45)
    load_end = _load()
    keys = sorted({key for rows in per_query for row in rows for key in row})
    medians = [{key: statistics.median(row.get(key, 0.0) for row in rows) * 1000
                for key in keys} for rows in per_query]
    figures = {"target": name, "searches": len(cases), "rounds": rounds,
               "real_overhead_p50_ms": statistics.median(real_over),
               "real_cpu_p50_ms": statistics.median(real_cpu) * 1000,
               "load": [round(load_real, 1), round(load_replay, 1), round(load_end, 1)],
               "mean_ms": {k: sum(m[k] for m in medians) / len(medians) for k in keys},
               "p50_ms": {k: statistics.median(m[k] for m in medians) for k in keys}}
    return figures, results


def scale_target(size: int, vectors: str, queries: int) -> tuple[Any, list[Case]]:
    import scale
    import scale_build
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library
    from grimoire_beholder.models.embedded import EmbeddedEmbedder

    path = scale_build.library_path(size, vectors)
    if not path.exists():
        raise SystemExit(f"no library at {path}: build it with bench/scale.py first")
    texts = scale.make_queries(queries, seed=1)
    embedder = None
    if vectors == "realistic":
        import scale_vectors

        embedder = scale.QueryVectors(EmbeddedEmbedder(), texts, scale_vectors.queries())
    lib = Library.open(config=Config(db_path=str(path), record_stats=False), read_only=True,
                       embedder=embedder)
    return lib, [(t, "hybrid", 5) for t in texts]


def dev_targets(names: list[str]) -> list[tuple[str, Any, list[Case]]]:
    import retrieval_eval
    from grimoire_beholder.library import Library

    out = []
    known = retrieval_eval.dev_sets()
    for name in names:
        config = retrieval_eval.build_library(known[name], {})
        lib = Library.open(config=config, read_only=True,
                           embedder=retrieval_eval.caching_embedder(config))
        questions = [q["question"] for q in retrieval_eval.load_questions(known[name])]
        out.append((name, lib, [(q, mode, 10) for mode in ("hybrid", "vector", "keyword")
                                for q in questions]))
    return out


def print_figures(f: dict[str, Any]) -> None:
    print(f"\n{f['target']}: {f['searches']} searches, {f['rounds']} replayed rounds; load "
          f"{f['load'][0]} (real pass) / {f['load'][1]} / {f['load'][2]} (replay); real pass: "
          f"overhead p50 {f['real_overhead_p50_ms']:.2f} wall ms, search CPU p50 "
          f"{f['real_cpu_p50_ms']:.2f} ms")
    print("| stage | CPU ms (mean) | wall ms (mean) |")
    print("| --- | ---: | ---: |")
    stages = [*STAGES, "other", "total"]
    for stage in stages:
        cpu, wall = f["mean_ms"].get(f"cpu:{stage}"), f["mean_ms"].get(f"wall:{stage}")
        if cpu is not None:
            print(f"| {stage} | {cpu:.3f} | {wall:.3f} |")
    print(f"| total, p50 | {f['p50_ms']['cpu:total']:.3f} | {f['p50_ms']['wall:total']:.3f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="0: no scale library")
    ap.add_argument("--vectors", choices=("uniform", "realistic"), default="realistic")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dev", default="", help="comma-separated dev sets: squad, books, markdown")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    print(f"load average at start: {_load():.1f} (2 cores)")
    targets = []
    if args.size:
        lib, cases = scale_target(args.size, args.vectors, args.queries)
        targets.append((f"scale-{args.size}-{args.vectors}", lib, cases))
    targets += dev_targets([s.strip() for s in args.dev.split(",") if s.strip()])
    saved: dict[str, Any] = {}
    for name, lib, cases in targets:
        figures, results = run_target(name, lib, cases, args.rounds, args.profile)
        print_figures(figures)
        saved[name] = json.loads(json.dumps(results))
        lib.close()
    if args.save:
        args.save.write_text(json.dumps(saved))
    if args.against:
        before = json.loads(args.against.read_text())
        changed = 0
        for name, results in saved.items():
            old = before.get(name)
            if old is None:
                print(f"{name}: not in {args.against}")
                continue
            moved = [i for i, (a, b) in enumerate(zip(old, results, strict=True)) if a != b]
            changed += len(moved)
            print(f"{name}: {len(results) - len(moved)} of {len(results)} searches returned "
                  f"the same" + (f"; first changed: {moved[:5]}" if moved else ""))
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
