"""Retrieval quality on the shared dev set: recall@k and MRR@10 per search mode.

Run: ``uv run python bench/retrieval_eval.py [--distractors] [--books] [--variant NAME]
[--modes hybrid,vector,keyword] [--set key=value ...]``.

* SQuAD-dev: the 40 articles of ``squad-dev/corpus`` (``--distractors``: a second library
  that also holds the 60 ``squad-distractors``), 210 questions.
* ``--books``: ``books-dev`` (R-data.pdf, the calibre EPUB) plus every PDF/EPUB in
  ``books/`` as distractors, 50 questions, reported per book.

Libraries are built on the embedded default (MiniLM, extractive contexts) and cached under
``bench/out/``: a library's file name carries a fingerprint of the ingest-time settings and
the input files, so a rerun with the same settings reuses it and other settings build a new
one. Code changes are not detected: measure one with ``--variant NAME`` (its own libraries)
or ``--rebuild``. ``--set`` overrides config keys (query-time keys such as
``fusion`` or ``rrf_k`` reuse the cached library). Every run is written to
``bench/out/runs/`` and scored twice — by the bench's ``score.py`` (a subprocess) and by
``grimoire_beholder.evaluation.score_run`` — and any disagreement is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from grimoire_beholder import evaluation
from grimoire_beholder.config import Config, config_from_mapping
from grimoire_beholder.library import Library

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "bench"
OUT = ROOT / "bench" / "out"
# Settings and sources that change what is stored and indexed (not how it is searched).
INGEST_KEYS = ("embedding_backend", "embedding_model", "llm_backend", "llm_model",
               "chunk_size", "chunk_overlap", "section_split_tokens", "chunk_mode",
               "window_size", "window_overlap")
KS = (1, 3, 5, 10)
SCORER_KEYS = {"recall@1": "hit_recall@1", "recall@5": "hit_recall@5",
               "recall@10": "hit_recall@10", "mrr@10": "hit_mrr@10"}


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` strings → typed values (int, then float, else the raw string)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set wants key=value, got {pair!r}")
        value: Any = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        out[key.strip()] = value
    return out


def fingerprint(config: Config, files: list[Path]) -> str:
    """A short hash of the ingest-time settings and the input files.

    Code changes are not hashed (other work in the tree would force needless rebuilds):
    use ``--variant`` to keep a library per code variant, or ``--rebuild``.
    """
    digest = hashlib.sha256()
    for key in INGEST_KEYS:
        digest.update(f"{key}={getattr(config, key, None)!r}\n".encode())
    for path in files:
        digest.update(f"{path.name}:{path.stat().st_size}\n".encode())
    return digest.hexdigest()[:12]


def build_library(name: str, files: list[Path], overrides: dict[str, Any],
                  base: Path | None = None, base_files: list[Path] | None = None,
                  rebuild: bool = False) -> Config:
    """A cached library of ``files``; built from a copy of ``base`` when that is given.

    Copying the dev library before adding the distractors saves embedding it twice.
    """
    OUT.mkdir(parents=True, exist_ok=True)
    probe = config_from_mapping({"embedding_backend": "embedded", "llm_backend": "none",
                                 **overrides}, base_dir=str(OUT))
    db_name = f"{name}-{fingerprint(probe, files)}.db"
    config = probe.with_overrides(db_path=db_name)
    if rebuild:
        for old in OUT.glob(db_name + "*"):
            old.unlink()
    if config.database_path.exists():
        print(f"[{name}] reusing {config.database_path.name}", file=sys.stderr)
        return config
    # An interrupted build is resumed (ingest is idempotent and resumable), not restarted.
    partial = config.database_path.with_suffix(".partial")
    if base is not None and base.exists() and not partial.exists():
        # SQLite's backup API copies committed pages, including any still in the WAL.
        with sqlite3.connect(base) as source, sqlite3.connect(partial) as target:
            source.backup(target)
    started = time.perf_counter()
    with Library.open(config=config.with_overrides(db_path=partial.name)) as lib:
        already = {Path(b.source_path).name for b in lib.list_books()}
        for path in files:
            if path.name in already and base_files is not None and path in base_files:
                continue
            report = lib.ingest(path)
            print(f"[{name}] {path.name}: {report}"[:160], file=sys.stderr)
    partial.rename(config.database_path)
    print(f"[{name}] built in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return config


def official_score(questions: Path, run_path: Path) -> dict[str, Any]:
    """The bench scorer's JSON output for a run file."""
    done = subprocess.run([sys.executable, str(BENCH / "score.py"), str(questions),
                           "--run", str(run_path), "--json"],
                          capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def evaluate(label: str, config: Config, questions_path: Path, modes: list[str],
             overrides: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Run and score every mode; rows of (label, mode, group, metrics)."""
    questions = evaluation.load_questions(questions_path)
    query_config = config.with_overrides(**{k: v for k, v in overrides.items()
                                           if k not in INGEST_KEYS})
    rows = []
    runs_dir = OUT / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    # Not read-only: opening read-write applies any schema migration to a cached library.
    with Library.open(config=query_config) as lib:
        for mode in modes:
            started = time.perf_counter()
            run = evaluation.run_questions(lib, questions, mode=mode, top_k=10)
            seconds = time.perf_counter() - started
            run_path = runs_dir / f"{label}-{mode}.jsonl"
            run_path.write_text("".join(json.dumps(r) + "\n" for r in run), encoding="utf-8")
            ours = evaluation.score_run(questions, run, KS)
            theirs = official_score(questions_path, run_path)
            groups = {"all": ours, **ours["groups"]} if len(ours["groups"]) > 1 else {"all": ours}
            for group, metrics in groups.items():
                for key, their_key in SCORER_KEYS.items():
                    if metrics[key] != theirs[group][their_key]:
                        print(f"MISMATCH {label}/{mode}/{group} {key}: ours {metrics[key]} "
                              f"score.py {theirs[group][their_key]}", file=sys.stderr)
                rows.append((label, mode, group, metrics))
            print(f"[{label}] {mode}: {len(questions)} questions in {seconds:.1f}s",
                  file=sys.stderr)
    return rows


def table(rows: list[tuple[str, str, str, dict[str, Any]]]) -> str:
    lines = ["| library | mode | questions | R@1 | R@5 | R@10 | MRR@10 |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for label, mode, group, m in rows:
        lines.append(f"| {label} | {mode} | {group} | {m['recall@1']:.3f} | "
                     f"{m['recall@5']:.3f} | {m['recall@10']:.3f} | {m['mrr@10']:.3f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--distractors", action="store_true",
                    help="also score a library padded with squad-distractors")
    ap.add_argument("--books", action="store_true", help="score books-dev instead of SQuAD")
    ap.add_argument("--modes", default="hybrid,vector,keyword")
    ap.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="KEY=VALUE", help="override a config key (repeatable)")
    ap.add_argument("--variant", default="",
                    help="name of a code variant: its own cached libraries and run files")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached libraries")
    args = ap.parse_args()
    if not (BENCH / "score.py").is_file():
        print(f"skipped: the shared bench is not at {BENCH}")
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    overrides = parse_overrides(args.overrides)
    suffix = f"-{args.variant}" if args.variant else ""
    rows = []
    if args.books:
        dev = sorted((BENCH / "books-dev").glob("*.pdf")) + sorted(
            (BENCH / "books-dev").glob("*.epub"))
        extra = sorted(p for p in (BENCH / "books").iterdir() if p.suffix in (".pdf", ".epub"))
        config = build_library("books" + suffix, dev + extra, overrides,
                               rebuild=args.rebuild)
        rows += evaluate("books" + suffix, config, BENCH / "books-dev" / "questions.jsonl",
                         modes, overrides)
    else:
        corpus = sorted((BENCH / "squad-dev" / "corpus").glob("*.md"))
        questions = BENCH / "squad-dev" / "questions.jsonl"
        config = build_library("squad" + suffix, corpus, overrides, rebuild=args.rebuild)
        rows += evaluate("squad" + suffix, config, questions, modes, overrides)
        if args.distractors:
            padding = sorted((BENCH / "squad-distractors").glob("*.md"))
            padded = build_library("squad-distractors" + suffix, corpus + padding, overrides,
                                   base=config.database_path, base_files=corpus,
                                   rebuild=args.rebuild)
            rows += evaluate("squad+distractors" + suffix, padded, questions, modes, overrides)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
