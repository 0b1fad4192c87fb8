"""Would a smaller vector dtype (float16, int8) keep recall, and would it be faster?

Run: ``uv run python bench/vector_precision.py [--db bench/out/squad-<hash>.db]``.

Recall: the SQuAD-dev library cached by ``bench/retrieval_eval.py`` is opened read-only and
the 210 dev questions are searched (vector and hybrid, top 10) with the float32 matrix, then
again after rounding the in-memory matrix through float16, and through int8 with one scale
per row (what a quantised store would hold), scored with ``grimoire_beholder.cli.evaluation``.

Speed: numpy has no float16 or int8 matrix-vector kernel in BLAS, so a quantised matrix has
to be scanned by numpy's generic loops or upcast block by block; both are timed on a random
100k × 384 matrix against the float32 BLAS scan.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from grimoire_beholder.cli import evaluation
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT.parent / "shared" / "bench" / "squad-dev" / "questions.jsonl"


def _int8_roundtrip(matrix: np.ndarray) -> np.ndarray:
    scale = np.abs(matrix).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    return np.asarray((np.round(matrix / scale).astype(np.int8) * scale).astype(np.float32))


def recall(db: Path) -> None:
    questions = evaluation.load_questions(QUESTIONS)
    config = Config(db_path=str(db))
    fields = set(Config.__dataclass_fields__)
    if "record_stats" in fields:
        config = config.with_overrides(record_stats=False)
    print(f"Recall on SQuAD-dev ({len(questions)} questions, {db.name})\n")
    print("| dtype | mode | R@1 | R@5 | R@10 | MRR@10 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    with Library.open(config=config, read_only=True) as lib:
        lib.search("warm up", mode="vector")
        index = lib._search_engine().vector_index
        original = index._matrix.copy()
        for name, convert in (("float32", lambda m: m),
                              ("float16", lambda m: m.astype(np.float16).astype(np.float32)),
                              ("int8 (per-row scale)", _int8_roundtrip)):
            index._matrix = convert(original)
            for mode in ("vector", "hybrid"):
                run = evaluation.run_questions(lib, questions, mode=mode, top_k=10)
                m = evaluation.score_run(questions, run, (1, 5, 10))
                print(f"| {name} | {mode} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
                      f"{m['recall@10']:.3f} | {m['mrr@10']:.3f} |")


def speed(rows: int = 100_000, dim: int = 384) -> None:
    rng = np.random.default_rng(0)
    m32 = rng.standard_normal((rows, dim), dtype=np.float32)
    m16 = m32.astype(np.float16)
    q = m32[7].copy()

    def blocked(m: np.ndarray) -> np.ndarray:
        out = np.empty(m.shape[0], dtype=np.float32)
        for start in range(0, m.shape[0], 8192):
            out[start:start + 8192] = m[start:start + 8192].astype(np.float32) @ q
        return out

    cases = {"float32 BLAS": lambda: m32 @ q, "float16 numpy loop": lambda: m16 @ q.astype(
        np.float16), "float16 upcast per 8k-row block": lambda: blocked(m16)}
    print(f"\nScan of {rows:,} × {dim} (load avg {os.getloadavg()[0]:.1f})\n")
    print("| kernel | memory | p50 ms |")
    print("| --- | ---: | ---: |")
    for name, fn in cases.items():
        fn()
        times = []
        for _ in range(15):
            started = time.perf_counter()
            fn()
            times.append((time.perf_counter() - started) * 1000)
        nbytes = m32.nbytes if name.startswith("float32") else m16.nbytes
        print(f"| {name} | {nbytes / 2**20:.0f} MB | {statistics.median(times):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    db = args.db or next(iter(sorted((ROOT / "bench" / "out").glob("squad-[0-9a-f]*.db"))))
    recall(db)
    speed()


if __name__ == "__main__":
    main()
