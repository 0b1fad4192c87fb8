"""Fit the search confidence model on the dev sets and write search/confidence_model.py.

Run: ``uv run python bench/calibrate_confidence.py [--variant ctx] [--top-k 5] [--dry-run]``.

For every question of ``squad-dev`` (incl. its unanswerable ones) and ``books-dev`` it
searches the cached dev libraries of ``bench/retrieval_eval.py`` (embedded default; built if
missing) in each retrieval setting, records the confidence features the engine computed,
and labels the search 1 when a hit in the top ``--top-k`` is relevant (the bench's rule,
``evaluation.judge``) and 0 otherwise — an unanswerable question is always 0. A logistic
model per setting is fit (``confidence.fit``) and written to the coefficients module.
Five-fold cross-validated abstention rates at a few thresholds are printed, so the chosen
``min_confidence`` is judged on questions the model was not fit on.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from grimoire_beholder import evaluation
from grimoire_beholder.library import Library
from grimoire_beholder.search import confidence
from retrieval_eval import BENCH, ROOT, build_library

MODEL_FILE = ROOT / "src" / "grimoire_beholder" / "search" / "confidence_model.py"
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("hybrid:convex", {"retrieval_mode": "hybrid", "fusion": "convex"}),
    ("hybrid:rrf", {"retrieval_mode": "hybrid", "fusion": "rrf"}),
    ("vector", {"retrieval_mode": "vector"}),
    ("keyword", {"retrieval_mode": "keyword"}),
)
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)


def collect(lib: Library, questions: list[dict[str, Any]], top_k: int
            ) -> tuple[list[dict[str, float]], list[int], list[bool]]:
    """(features, labels, answerable) for each question."""
    rows, labels, answerable = [], [], []
    for q in questions:
        found = lib.search(q["question"], top_k=top_k)
        records = [evaluation.result_record(h) for h in found.hits]
        ok = q.get("answerable", True) and any(evaluation.judge(q, r)[0] for r in records)
        rows.append(found.features or {})
        labels.append(int(bool(ok)))
        answerable.append(bool(q.get("answerable", True)))
    return rows, labels, answerable


def cross_validated(rows: list[dict[str, float]], labels: list[int], folds: int = 5
                    ) -> np.ndarray:
    """Out-of-fold probabilities (each question scored by a model not fit on it)."""
    out = np.zeros(len(rows))
    index = np.arange(len(rows))
    for fold in range(folds):
        test = index % folds == fold
        model = confidence.fit([r for r, t in zip(rows, test, strict=True) if not t],
                               [y for y, t in zip(labels, test, strict=True) if not t])
        for i in index[test]:
            out[i] = confidence.predict(rows[i], model)
    return out


def table(name: str, probs: np.ndarray, labels: list[int], answerable: list[bool]) -> str:
    """Abstention rates by threshold: unanswerable, answerable, answerable-and-found."""
    lines = [f"### {name}", "", "| min_confidence | unanswerable abstained | answerable "
             "abstained | answerable with the answer found, abstained |",
             "| --- | --- | --- | --- |"]
    ans = np.array(answerable)
    found = np.array(labels, dtype=bool)
    for t in THRESHOLDS:
        low = probs < t
        lines.append(f"| {t} | {low[~ans].sum()}/{(~ans).sum()} | {low[ans].sum()}/{ans.sum()} "
                     f"({low[ans].mean():.1%}) | {low[found].sum()}/{found.sum()} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="ctx", help="cached library variant to use")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--dry-run", action="store_true", help="print, do not write the model")
    args = ap.parse_args()
    suffix = f"-{args.variant}" if args.variant else ""
    squad = sorted((BENCH / "squad-dev" / "corpus").glob("*.md"))
    dev = sorted((BENCH / "books-dev").glob("*.pdf")) + sorted(
        (BENCH / "books-dev").glob("*.epub"))
    extra = sorted(p for p in (BENCH / "books").iterdir() if p.suffix in (".pdf", ".epub"))
    sets = [(build_library("squad" + suffix, squad, {}),
             evaluation.load_questions(BENCH / "squad-dev" / "questions.jsonl")),
            (build_library("books" + suffix, dev + extra, {}),
             evaluation.load_questions(BENCH / "books-dev" / "questions.jsonl"))]
    models: dict[str, Any] = {}
    report = []
    for key, overrides in SETTINGS:
        rows: list[dict[str, float]] = []
        labels: list[int] = []
        answerable: list[bool] = []
        for config, questions in sets:
            cfg = config.with_overrides(record_stats=False, **overrides)
            with Library.open(config=cfg, read_only=True) as lib:
                r, y, a = collect(lib, questions, args.top_k)
            rows += r
            labels += y
            answerable += a
        model = confidence.fit(rows, labels)
        model["fit"] = {"questions": len(rows), "positives": sum(labels),
                        "top_k": args.top_k, "variant": args.variant}
        models[key] = model
        report.append(table(f"{key} (5-fold cross-validated)",
                            cross_validated(rows, labels), labels, answerable))
        print(report[-1], file=sys.stderr)
    print("\n\n".join(report))
    if not args.dry_run:
        body = json.dumps(models, indent=4)
        MODEL_FILE.write_text(
            '"""Coefficients of the confidence model (see confidence.py), written by\n'
            '``bench/calibrate_confidence.py``; edit by rerunning the script, not by hand."""'
            "\n\nfrom __future__ import annotations\n\nfrom typing import Any\n\n"
            f"MODELS: dict[str, dict[str, Any]] = {body}\n", encoding="utf-8")
        print(f"wrote {MODEL_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
