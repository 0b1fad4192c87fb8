"""Two versions of the code, one process, search by search: what a change did to the work
past the arms, with the machine's load falling on both alike.

Run: ``uv run python bench/scale_interleave.py --before ../other-checkout/src [--size 100000]
[--vectors realistic] [--queries 60] [--rounds 5] [--dev squad,books,markdown]
[--against F]``.

The targets and stages are ``bench/scale_overhead.py``'s. Each target is opened under the
code in ``--before`` (another checkout's ``src``) and under this checkout's, each runs its
real pass (recording what every search returned and its arms), then every search is
replayed under one version and at once under the other (the order alternating), for
``--rounds`` rounds. Per stage it prints the mean over searches of each search's median CPU
ms over the rounds, before and after. On a shared machine, separate runs of the two
versions minutes apart differ by up to 1.5x in every stage, changed or not; interleaved,
the stages a change did not touch agree within a few per cent. The price: the two copies
of the code and their data share the CPU caches, so every stage costs more than in
``scale_overhead.py`` — read the ratio, not the level.

Exits 1 when a search returned anything else under the two versions (hits, order, scores,
passages, confidence and features), or, with ``--against F`` (a ``scale_overhead.py --save``
file), anything else than ``F`` holds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_overhead as so

PACKAGE = "grimoire_beholder"
VERSIONS = ("before", "after")


class Versions:
    """Which copy of the package ``import`` finds: the modules of each version are kept
    aside and put back in ``sys.modules`` when it is made current."""

    def __init__(self, before_src: str) -> None:
        self.src = before_src
        self.modules: dict[str, dict[str, Any]] = {}

    def use(self, version: str) -> None:
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        if self.src in sys.path:
            sys.path.remove(self.src)
        if version == "before":
            sys.path.insert(0, self.src)
        sys.modules.update(self.modules.get(version, {}))

    def keep(self, version: str) -> None:
        self.modules[version] = {n: m for n, m in sys.modules.items()
                                 if n == PACKAGE or n.startswith(PACKAGE + ".")}


class Replay:
    """One target under the current version: its real pass, then its arms replayed and
    every stage timed (``scale_overhead.run_target``'s patches, kept on ``stack``)."""

    def __init__(self, lib: Any, cases: list[so.Case], stack: ExitStack) -> None:
        from grimoire_beholder.search import keyword

        self.lib, self.cases, self.at = lib, cases, 0
        arms: list[dict[str, Any]] = []
        arm_owner, arm_name = so.vector_arm_owner()
        search_kw, vector_arm = keyword.search, getattr(arm_owner, arm_name)

        def keyword_rec(*args: Any, **kwargs: Any) -> Any:
            arms[-1]["keyword"] = search_kw(*args, **kwargs)
            return arms[-1]["keyword"]

        def vector_rec(*args: Any, **kwargs: Any) -> Any:  # (the engine first, when a method)
            arms[-1]["vector"] = vector_arm(*args, **kwargs)
            return arms[-1]["vector"]

        for query, mode, k in cases[:5]:  # warm-up
            lib.search(query, mode=mode, top_k=k)
        self.results = []
        with so.patched(keyword, "search", keyword_rec), \
                so.patched(arm_owner, arm_name, vector_rec):
            for query, mode, k in cases:
                arms.append({})
                self.results.append(so.fingerprint(lib.search(query, mode=mode, top_k=k)))

        def keyword_replay(*args: Any, **kwargs: Any) -> Any:
            return list(arms[self.at]["keyword"])

        def vector_replay(*args: Any, **kwargs: Any) -> Any:
            hits, _, vec = arms[self.at]["vector"]
            return list(hits), {"embed": 0.0, "vector": 0.0}, vec

        self.timers = so.Timers()
        stack.enter_context(so.patched(keyword, "search", keyword_replay))
        stack.enter_context(so.patched(arm_owner, arm_name, vector_replay))
        so._stage_wrappers(stack, self.timers)

    def one(self, i: int) -> dict[str, float]:
        """Search ``i`` replayed: CPU seconds per stage, ``other`` and ``total``."""
        query, mode, k = self.cases[i]
        self.at = i
        self.timers.reset()
        cpu = time.process_time()
        self.lib.search(query, mode=mode, top_k=k)
        cpu = time.process_time() - cpu
        row = dict(self.timers.cpu)
        row["other"] = cpu - sum(self.timers.cpu.values())
        row["total"] = cpu
        return row


def _open(target: str, args: argparse.Namespace) -> tuple[str, Any, list[so.Case]]:
    if target == "scale":
        lib, cases = so.scale_target(args.size, args.vectors, args.queries)
        return f"scale-{args.size}-{args.vectors}", lib, cases
    ((name, lib, cases),) = so.dev_targets([target])
    return name, lib, cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other checkout's src folder")
    ap.add_argument("--size", type=int, default=100_000, help="0: no scale library")
    ap.add_argument("--vectors", choices=("uniform", "realistic"), default="realistic")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dev", default="", help="comma-separated dev sets: squad, books, markdown")
    ap.add_argument("--against", type=Path)
    args = ap.parse_args()
    versions = Versions(str(Path(args.before).resolve()))
    saved = json.loads(args.against.read_text()) if args.against else {}
    targets = (["scale"] if args.size else []) + [s.strip() for s in args.dev.split(",")
                                                   if s.strip()]
    print(f"load average at start: {so._load():.1f} (2 cores)")
    changed = 0
    for target in targets:
        with ExitStack() as stack:
            replays: dict[str, Replay] = {}
            for version in VERSIONS:
                versions.use(version)
                name, lib, cases = _open(target, args)
                stack.callback(lib.close)
                replays[version] = Replay(lib, cases, stack)
                versions.keep(version)
            results = [replays[v].results for v in VERSIONS]
            moved = [i for i, (a, b) in enumerate(zip(*results, strict=True)) if a != b]
            if name in saved:
                moved += [i for i, (a, b) in enumerate(zip(saved[name], results[1], strict=True))
                          if a != b and i not in moved]
            changed += len(moved)
            rows: dict[str, list[list[dict[str, float]]]] = {v: [[] for _ in cases]
                                                             for v in VERSIONS}
            loads = [so._load()]
            for r in range(args.rounds):
                for i in range(len(cases)):
                    for version in VERSIONS if (i + r) % 2 == 0 else VERSIONS[::-1]:
                        versions.use(version)
                        rows[version][i].append(replays[version].one(i))
                loads.append(so._load())
            versions.use("after")
            print(f"\n{name}: {len(cases)} searches x {args.rounds} rounds, interleaved; load "
                  f"{min(loads):.1f}-{max(loads):.1f}; "
                  + (f"{len(moved)} returned something else: {moved[:5]}" if moved else
                     "every search returned the same" + (" (and as --against)"
                                                        if name in saved else "")))
            print("| stage | before CPU ms | after CPU ms |")
            print("| --- | ---: | ---: |")
            for stage in [*so.STAGES, "other", "total"]:
                means = [sum(statistics.median(x.get(stage, 0.0) for x in per)
                             for per in rows[v]) / len(cases) * 1000 for v in VERSIONS]
                if any(means):
                    print(f"| {stage} | {means[0]:.3f} | {means[1]:.3f} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
