"""Fit the search confidence model on every dev set and write search/confidence_model.json.

Run: ``uv run python bench/calibrate_confidence.py [--top-k 5] [--dry-run]``.

Questions, from the cached libraries of ``bench/retrieval_eval.py`` (built if missing):

* every question of ``squad``, ``books`` and ``markdown`` (their unanswerable ones included,
  and for ``squad`` the same-topic ones of ``bench/dev-extra/squad-swapped.jsonl``: about an
  article in the library, naming something it never mentions);
* "not in this library" questions: for each set, a copy of its library with every third
  file deleted (``Library.delete``, no re-embedding), asked the questions whose gold file
  was deleted — the library covers the topic's neighbours, not the answer.

Each search is labelled 1 when a hit in the top ``--top-k`` is relevant and 0 otherwise (an
unanswerable or off-library question is always 0). Relevant means, by default (``--label
strict``), that a returned text holds the evidence — what a reader needs — not merely that a
hit cites the right chapter (``--label hit``, the bench's looser rule, ``evaluation.judge``):
a confidence of 0.96 on five passages of the right story none of which holds the answer
would be the opposite of what a user needs.
A logistic model per retrieval setting is fit (``confidence.fit``), each dev set weighted
equally whatever its size, and written to the coefficients module. Flag rates are printed
per set at a few thresholds, so the chosen ``min_confidence`` is judged on questions the
model was not fit on: cross-validated by *document* (five folds of the files, every
question about a file in the same fold: a same-topic question and the answerable one it
was made from are never split), and again with each set scored by a model fit on the other
two (a kind of library the model has never seen). Also printed: how often the top 5 holds
the answer at each level of (cross-validated) confidence, the Brier score, and the largest
threshold that flags at most 3% of every set's answerable questions.

``--question-case lower`` asks every question in lower case as well and scores those
searches by the models fit on the questions as written (the committed model is fit on
those): the same cross-validated and set-held-out tables, for a user who types in lower
case. The model file is then not written.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np

from grimoire_beholder.cli import evaluation
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from grimoire_beholder.search import confidence
from retrieval_eval import (
    OUT,
    QUESTION_CASES,
    ROOT,
    DevSet,
    build_library,
    caching_embedder,
    dev_sets,
    load_questions,
)

MODEL_FILE = ROOT / "src" / "grimoire_beholder" / "search" / "confidence_model.json"
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("hybrid:convex", {"retrieval_mode": "hybrid", "fusion": "convex"}),
    ("hybrid:rrf", {"retrieval_mode": "hybrid", "fusion": "rrf"}),
    ("vector", {"retrieval_mode": "vector"}),
    ("keyword", {"retrieval_mode": "keyword"}),
)
SETS = ("squad", "books", "markdown")
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
LEAVE_OUT_EVERY = 3
KINDS = ("answerable", "unanswerable", "same-topic", "off-library")
SAME_TOPIC = "entity_swapped"  # bench/dev-extra/squad-swapped.jsonl


class Row:
    """One search: its features, label, question set, kind and the file it is about."""

    def __init__(self, feats: dict[str, float], label: int, group: str, kind: str,
                 hit: int | None = None, doc: str = "") -> None:
        self.feats, self.label, self.group, self.kind = feats, label, group, kind
        self.hit = label if hit is None else hit  # the looser label, kept for comparison
        self.doc = doc


def about(question: dict[str, Any]) -> str:
    """The file a question is about (its gold file, or the article a same-topic one was
    made from), else its own id: what cross-validation keeps in one fold. A gold file and
    an article title name one article alike ("Kievan_Rus_.md" and "Kievan Rus'", or
    "Washington_University_in_St._Louis.md" and "Washington University in St. Louis", whose
    ".Louis" is no file suffix)."""
    gold = question.get("gold_file")
    return article_key(Path(str(gold)).stem if gold else
                       question.get("about_doc") or question["id"])


def article_key(name: str) -> str:
    """``name``'s words, lower case, single-spaced: the fold key of :func:`about`."""
    return " ".join(re.findall(r"[^\W_]+", name.casefold()))


def leave_out_library(dev: DevSet, config: Config) -> tuple[Config, set[str]]:
    """A copy of ``dev``'s library without every third file; the names of the left out."""
    target = OUT / f"{config.database_path.stem}-leaveout.db"
    dropped = {p.name for i, p in enumerate(sorted(dev.files)) if i % LEAVE_OUT_EVERY == 1}
    leave_config = config.with_overrides(db_path=target.name)
    if not target.exists():
        partial = target.with_suffix(".partial")
        with sqlite3.connect(config.database_path) as source, sqlite3.connect(partial) as copy:
            source.backup(copy)
        with Library.open(config=leave_config.with_overrides(db_path=partial.name),
                          embedder=caching_embedder(config)) as lib:
            for book in lib.list_books():
                if Path(book.source_path).name in dropped:
                    lib.delete(book.id)
        # Deletions may still sit in the copy's write-ahead log, which is named after the
        # file: fold it in before the rename, or the moved file loses them.
        with sqlite3.connect(partial) as copy:
            copy.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.move(partial, target)
    return leave_config, dropped


def collect(config: Config, questions: list[dict[str, Any]], group: str, kind: str,
            top_k: int, label: str = "strict") -> list[Row]:
    rows = []
    with Library.open(config=config, read_only=True,
                      embedder=caching_embedder(config)) as lib:
        for q in questions:
            found = lib.search(q["question"], top_k=top_k)
            records = [evaluation.result_record(h) for h in found.hits]
            judged = [evaluation.judge(q, r) for r in records] if kind == "answerable" else []
            hit = any(h for h, _ in judged)
            strict = any(s for _, s in judged)
            rows.append(Row(found.features or {}, int(strict if label == "strict" else hit),
                            group, kind, int(hit), about(q)))
    return rows


def gather(setting: dict[str, Any], top_k: int, label: str = "strict",
           case: str = "as-written") -> list[Row]:
    rows: list[Row] = []
    for name in SETS:
        dev = dev_sets()[name]
        config = build_library(dev, {}).with_overrides(record_stats=False, **setting)
        questions = load_questions(dev, case)
        answerable = [q for q in questions if q.get("answerable", True)]
        unanswerable = [q for q in questions if not q.get("answerable", True)
                        and q.get("unanswerable_reason") != SAME_TOPIC]
        same_topic = [q for q in questions if q.get("unanswerable_reason") == SAME_TOPIC]
        rows += collect(config, answerable, name, "answerable", top_k, label)
        rows += collect(config, unanswerable, name, "unanswerable", top_k)
        rows += collect(config, same_topic, name, "same-topic", top_k)
        left, dropped = leave_out_library(dev, config)
        off = [q for q in answerable if Path(q["gold_file"]).name in dropped]
        rows += collect(left.with_overrides(**setting), off, name, "off-library", top_k)
    return rows


def _weights(rows: list[Row]) -> list[float]:
    """Every set counts the same, however many questions it has."""
    sizes = {g: sum(r.group == g for r in rows) for g in {r.group for r in rows}}
    return [len(rows) / (len(sizes) * sizes[r.group]) for r in rows]


def cross_validated(rows: list[Row], names: tuple[str, ...], folds: int = 5,
                    seed: int = 0, scored: list[Row] | None = None) -> np.ndarray:
    """Out-of-fold probabilities: each question scored by a model fit on no question about
    its file (the files dealt to ``folds`` folds in an order shuffled by ``seed``). With
    ``scored`` (the same searches asked otherwise, row for row), those are scored instead
    by the models fit on ``rows``."""
    scored = rows if scored is None else scored
    keys = [(r.group, article_key(r.doc)) for r in rows]
    docs = sorted(set(keys))
    np.random.default_rng(seed).shuffle(docs)
    fold_of = {doc: i % folds for i, doc in enumerate(docs)}
    out = np.zeros(len(rows))
    weights = _weights(rows)
    for fold in range(folds):
        train = [i for i, key in enumerate(keys) if fold_of[key] != fold]
        model = confidence.fit([rows[i].feats for i in train], [rows[i].label for i in train],
                               names, weights=[weights[i] for i in train])
        for i in range(len(rows)):
            if fold_of[keys[i]] == fold:
                out[i] = confidence.predict(scored[i].feats, model)
    return out


def set_held_out(rows: list[Row], names: tuple[str, ...],
                 scored: list[Row] | None = None) -> np.ndarray:
    """Probabilities for each set from a model fit on the *other* sets only: how the model
    does on a kind of library it has never seen (a new corpus shifts every score); with
    ``scored``, those searches scored instead (as :func:`cross_validated`)."""
    scored = rows if scored is None else scored
    out = np.zeros(len(rows))
    for group in {r.group for r in rows}:
        train = [r for r in rows if r.group != group]
        model = confidence.fit([r.feats for r in train], [r.label for r in train], names,
                               weights=_weights(train))
        for i, r in enumerate(rows):
            if r.group == group:
                out[i] = confidence.predict(scored[i].feats, model)
    return out


def operating_point(rows: list[Row], runs: list[np.ndarray], share: float = 0.03) -> float:
    """The largest threshold (in steps of 0.005) that flags at most ``share`` of every set's
    answerable questions in every run."""
    best = 0.0
    for t in np.arange(0.005, 1.0, 0.005):
        for group in SETS:
            idx = [i for i, r in enumerate(rows) if r.group == group and r.kind == "answerable"]
            if any(sum(probs[i] < t for i in idx) > share * len(idx) for probs in runs):
                return round(best, 3)
        best = float(t)
    return round(best, 3)


def brier(rows: list[Row], probs: np.ndarray) -> float:
    """Mean squared gap between each search's probability and its label (0 is perfect)."""
    return float(np.mean((probs - np.array([r.label for r in rows])) ** 2))


def reliability(rows: list[Row], probs: np.ndarray) -> str:
    """How often the top 5 holds the answer, by confidence (every question of every kind)."""
    lines = ["| confidence | searches | top 5 holds the answer |", "| --- | --- | --- |"]
    edges = (0.0, 0.15, 0.3, 0.5, 0.7, 0.9, 1.01)
    for low, high in itertools.pairwise(edges):
        idx = [i for i in range(len(rows)) if low <= probs[i] < high]
        right = sum(rows[i].label for i in idx)
        lines.append(f"| {low:.2f}–{min(high, 1.0):.2f} | {len(idx)} | "
                     + (f"{right} ({right / len(idx):.0%}) |" if idx else "- |"))
    return "\n".join(lines)


def table(name: str, rows: list[Row], runs: list[np.ndarray],
          how: str = "cross-validated by document, 5 folds") -> str:
    """Flag rates by threshold and set: answerable, unanswerable, off-library; with several
    ``runs`` (fold assignments) the mean count, and for answerable questions the most."""
    lines = [f"### {name} ({how})", "",
             "| set | min_confidence | answerable flagged | unanswerable flagged | "
             "same-topic flagged | off-library flagged |", "| --- | --- | --- | --- | --- | --- |"]
    for group in SETS:
        for t in THRESHOLDS:
            cells = []
            for kind in KINDS:
                idx = [i for i, r in enumerate(rows) if r.group == group and r.kind == kind]
                counts = [sum(probs[i] < t for i in idx) for probs in runs]
                low = sum(counts) / len(runs)
                most = f", most {max(counts)}" if kind == "answerable" and len(runs) > 1 else ""
                cells.append(f"{low:.3g}/{len(idx)} ({low / len(idx):.0%}{most})" if idx else "-")
            lines.append(f"| {group} | {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--dry-run", action="store_true", help="print, do not write the model")
    ap.add_argument("--repeats", type=int, default=8,
                    help="fold assignments the cross-validated table averages over")
    ap.add_argument("--label", choices=("strict", "hit"), default="strict",
                    help="what counts as answered: a text holding the evidence, or any hit")
    ap.add_argument("--reuse", action="store_true",
                    help="fit on the searches saved by the last run (no new searches)")
    ap.add_argument("--question-case", choices=QUESTION_CASES, default="as-written",
                    help="score the questions asked in lower case by the models fit on "
                         "them as written (implies --dry-run)")
    args = ap.parse_args()
    models: dict[str, Any] = {}
    report = []
    for key, setting in SETTINGS:
        saved = OUT / f"calibration-{key.replace(':', '-')}-top{args.top_k}-{args.label}.json"
        if args.reuse and saved.exists():
            rows = [Row(**r) for r in json.loads(saved.read_text(encoding="utf-8"))]
        else:
            rows = gather(setting, args.top_k, args.label)
            saved.write_text(json.dumps([vars(r) for r in rows]), encoding="utf-8")
        names = confidence.feature_names(key)
        model = confidence.fit([r.feats for r in rows], [r.label for r in rows], names,
                               weights=_weights(rows))
        model["fit"] = {"questions": len(rows), "positives": sum(r.label for r in rows),
                        "top_k": args.top_k, "label": args.label, "sets": list(SETS)}
        models[key] = model
        scored, how = rows, ""
        if args.question_case == "lower":
            lower = saved.with_name(saved.stem + "-lower.json")
            if args.reuse and lower.exists():
                scored = [Row(**r) for r in json.loads(lower.read_text(encoding="utf-8"))]
            else:
                scored = gather(setting, args.top_k, args.label, "lower")
                lower.write_text(json.dumps([vars(r) for r in scored]), encoding="utf-8")
            how = "; asked in lower case, scored by models fit as written"
        runs = [cross_validated(rows, names, seed=seed, scored=scored)
                for seed in range(args.repeats)]
        folded = runs[0]
        report.append(table(key, scored, runs, f"cross-validated by document, 5 folds, mean "
                            f"of {args.repeats} fold assignments{how}"))
        report.append(f"largest threshold flagging <= 3% of every set's answerable "
                      f"questions (every fold assignment): {operating_point(scored, runs)}\n\n"
                      + reliability(scored, folded))
        held_out = set_held_out(rows, names, scored)
        report.append(f"Brier score (mean squared error of the confidence against 'the top "
                      f"{args.top_k} holds the answer'): cross-validated "
                      f"{np.mean([brier(scored, probs) for probs in runs]):.3f} (mean of "
                      f"{args.repeats}), each set scored by a model fit on the others "
                      f"{brier(scored, held_out):.3f}")
        report.append(table(key, scored, [held_out],
                            f"each set scored by a model fit on the other sets{how}"))
        print(report[-1], file=sys.stderr)
    print("\n\n".join(report))
    if not args.dry_run and args.question_case == "as-written":
        MODEL_FILE.write_text(json.dumps(models, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
