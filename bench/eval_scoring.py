"""Scoring and printing for ``retrieval_eval.py``: each run checked against the bench's
``score.py``, the per-question moves of ``--against``, and the Markdown table of metrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from eval_sets import BENCH, OUT, DevSet
from grimoire_beholder.cli import evaluation

KS = (1, 3, 5, 10)
SCORER_KEYS = {"recall@1": "hit_recall@1", "recall@5": "hit_recall@5",
               "recall@10": "hit_recall@10", "mrr@10": "hit_mrr@10",
               "strict_recall@5": "strict_recall@5"}



def official_score(questions: tuple[Path, ...], run_path: Path) -> dict[str, Any]:
    """The bench scorer's JSON output for a run file."""
    done = subprocess.run([sys.executable, str(BENCH / "score.py"), *map(str, questions),
                           "--run", str(run_path), "--json"],
                          capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def text_per_hit(questions: list[dict[str, Any]], run: list[dict[str, Any]]) -> float:
    """Mean characters of text per returned hit in the top 5, over answerable questions."""
    answerable = {q["id"] for q in questions if q.get("answerable", True)}
    sizes = [len(r.get("text") or "") for record in run if record["id"] in answerable
             for r in record["results"][:5]]
    return sum(sizes) / len(sizes) if sizes else 0.0


def back_matter_share(questions: list[dict[str, Any]], run: list[dict[str, Any]]) -> float:
    """Share of the top-5 hits of answerable questions that are not body text."""
    answerable = {q["id"] for q in questions if q.get("answerable", True)}
    roles = [r.get("role", "body") for record in run if record["id"] in answerable
             for r in record["results"][:5]]
    return sum(role != "body" for role in roles) / len(roles) if roles else 0.0


def score(dev: DevSet, label: str, questions: list[dict[str, Any]],
          run: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Metrics per question group ("all" first), checked against score.py."""
    runs_dir = OUT / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    run_path = runs_dir / f"{label}.jsonl"
    run_path.write_text("".join(json.dumps(r) + "\n" for r in run), encoding="utf-8")
    ours = evaluation.score_run(questions, run, KS)
    theirs = official_score(dev.questions, run_path)
    groups = {"all": ours, **ours["groups"]} if len(ours["groups"]) > 1 else {"all": ours}
    for group, metrics in groups.items():
        for key, their_key in SCORER_KEYS.items():
            if metrics[key] != theirs[group][their_key]:
                print(f"MISMATCH {label}/{group} {key}: ours {metrics[key]} "
                      f"score.py {theirs[group][their_key]}", file=sys.stderr)
        members = [q for q in questions if group == "all" or q["id"].startswith(group + "-")]
        ids = {q["id"] for q in members}
        metrics["chars"] = text_per_hit(members, [r for r in run if r["id"] in ids])
        metrics["back"] = back_matter_share(members, [r for r in run if r["id"] in ids])
        metrics["abstention"] = evaluation.abstention(members, [r for r in run if r["id"] in ids])
    return groups


def first_ranks(questions: list[dict[str, Any]], run: list[dict[str, Any]]
                ) -> dict[str, tuple[int | None, int | None, bool]]:
    """Per answerable question: the 1-based rank of its first hit and of its first strict
    hit (None: not in the run), and whether the search flagged it."""
    by_id = {record["id"]: record for record in run}
    out = {}
    for q in questions:
        if not q.get("answerable", True) or q["id"] not in by_id:
            continue
        results = by_id[q["id"]]["results"]
        judged = [evaluation.judge(q, r) for r in results]
        out[q["id"]] = (next((i + 1 for i, (h, _) in enumerate(judged) if h), None),
                        next((i + 1 for i, (_, s) in enumerate(judged) if s), None),
                        bool(by_id[q["id"]].get("abstained")))
    return out


def print_changes(label: str, questions: list[dict[str, Any]], run: list[dict[str, Any]],
                  earlier: Path) -> None:
    """The questions whose first hit, first strict hit or flag differ from an earlier run
    file (``--against``), as ``id  hit/strict[F]  →  hit/strict[F]  question``."""
    if not earlier.is_file():
        print(f"[{label}] no earlier run {earlier}", file=sys.stderr)
        return
    before = first_ranks(questions, [json.loads(line) for line in
                                     earlier.read_text(encoding="utf-8").splitlines()])
    after = first_ranks(questions, run)
    text = {q["id"]: q["question"] for q in questions}

    def cell(ranks: tuple[int | None, int | None, bool] | None) -> str:
        if ranks is None:
            return "absent"
        hit, strict, flagged = ranks
        return f"{hit or '-'}/{strict or '-'}{'F' if flagged else ''}"

    for qid in after:
        if before.get(qid) != after[qid]:
            print(f"{label}  {qid}  {cell(before.get(qid))}  →  {cell(after[qid])}  "
                  f"{text[qid][:70]}")



def _rate(abstention: dict[str, Any], kind: str) -> str:
    total = abstention[kind]
    return f"{abstention[kind + '_abstained']}/{total}" if total else "-"


def _f(value: float | None, digits: int = 3) -> str:
    """A metric, or "-" for a group without answerable questions (e.g. same-topic ones)."""
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[tuple[str, str, str, dict[str, Any]]]) -> str:
    lines = ["| set | mode | questions | R@1 | R@5 | R@10 | MRR@10 | strict R@5 | strict MRR "
             "| chars/hit | back matter | flagged answerable | flagged unanswerable |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, mode, group, m in rows:
        lines.append(f"| {label} | {mode} | {group} | {_f(m['recall@1'])} | "
                     f"{_f(m['recall@5'])} | {_f(m['recall@10'])} | {_f(m['mrr@10'])} | "
                     f"{_f(m['strict_recall@5'])} | {_f(m['strict_mrr@10'])} | "
                     f"{_f(m['chars'], 0)} | {m['back']:.1%} | "
                     f"{_rate(m['abstention'], 'answerable')} | "
                     f"{_rate(m['abstention'], 'unanswerable')} |")
    return "\n".join(lines)

