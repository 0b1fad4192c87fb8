"""Retrieval quality on the shared dev sets: recall@k, MRR@10, strict recall, text per hit.

Run: ``uv run python bench/retrieval_eval.py [--sets squad,books,markdown,distractors]
[--variant NAME] [--modes hybrid,vector,keyword] [--set key=value ...] [--out DIR]
[--postgres URL] [--against DIR]``.

``--postgres postgresql://…`` builds and queries the libraries in that PostgreSQL server
instead (one database per library, named like the SQLite file; the ``postgres`` extra and a
server with pgvector), so the two engines' figures compare on the same questions.

* ``squad``: the 40 articles of ``squad-dev/corpus``, 210 questions;
  ``distractors``: the same plus the 60 ``squad-distractors`` (built from a copy of squad).
* ``books``: ``books-dev`` (R-data.pdf, the calibre EPUB) plus every PDF/EPUB in ``books/``,
  the 50 ``books-dev`` questions and ours in ``bench/dev-extra`` on Sherlock Holmes, The Art
  of War and R-intro: 55 in ``books-extra.jsonl`` (groups ``bk-x-…``) and a harder 120 drawn
  at random and written blind, 60 in ``books-extra-2.jsonl`` (groups ``bk-y-…``) and 60 in
  ``books-extra-3.jsonl`` (groups ``bk-z-…``), reported per book.
* ``markdown``: ``markdown-dev`` (14 Node.js API pages and the npm docs), 36 questions.
* ``fastify``: the 41 Markdown pages of the Fastify 5.12.8 docs alone, fetched into
  ``OUT/fastify-docs`` on first use (``bench/dev-extra/fetch_fastify_docs.py``), and the 35
  questions of ``bench/dev-extra/markdown-fastify.jsonl``, written blind (see its README).
* ``hatch``: the 72 Markdown pages of the Hatch 1.18.2 docs alone (PyPI sdist, fetched into
  ``OUT/hatch-docs`` by ``bench/dev-extra/fetch_hatch_docs.py``), and the 35 questions of
  ``bench/dev-extra/markdown-hatch.jsonl``, drawn at random and written blind.
* ``pymdown``: the 45 Markdown pages of the PyMdown Extensions 13.1.2 docs alone (PyPI sdist,
  fetched into ``OUT/pymdown-docs`` by ``bench/dev-extra/fetch_pymdown_docs.py``), and the 35
  questions of ``bench/dev-extra/markdown-pymdown.jsonl``, drawn at random and written blind.

Per set and mode it prints hit recall@1/5/10 and MRR@10 (the bench's rule: the text holds
the evidence or the hit cites the gold location), *strict* recall@5 and MRR@10 (the text
alone), the mean characters returned per hit in the top 5, and how often the search
flagged answerable and unanswerable questions as "probably not in the library".

Libraries are built on the embedded default (MiniLM, extractive contexts) and cached in
``--out`` (default ``$GRIMOIRE_BENCH_OUT`` or ``bench/out``): a library's file name carries a
fingerprint of the ingest-time settings, the input files and the ingest-side source code
(parse, structure, ingest, store schema), so changing any of them builds a new library. Every
vector goes through a text → vector cache in the same folder (``embed_cache.py``), so a
rebuild only embeds chunk texts never seen before. ``--set`` overrides config keys (query-time
keys such as ``fusion`` reuse the cached library). Every run is written to ``OUT/runs/`` and
scored twice — by the bench's ``score.py`` and by ``grimoire_beholder.cli.evaluation`` — and any
disagreement is printed. ``--against DIR`` (a copy of an earlier ``OUT/runs``) prints every
question whose first hit, first strict hit or "not in the library" flag moved: which
questions a change won or lost, not only how many. ``--question-case lower`` asks every
question in lower case, as people often type in a terminal (run files get a ``-lower``
suffix): the confidence should not depend on the case of the typing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval_scoring import (
    KS,
    SCORER_KEYS,
    back_matter_share,
    first_ranks,
    official_score,
    print_changes,
    score,
    table,
    text_per_hit,
)
from eval_sets import (
    BENCH,
    INGEST_CODE,
    INGEST_KEYS,
    OUT,
    QUESTION_CASES,
    ROOT,
    SOURCE,
    DevSet,
    build_library,
    build_server_library,
    caching_embedder,
    dev_sets,
    fastify_docs,
    fetched_docs,
    fingerprint,
    hatch_docs,
    load_questions,
    pymdown_docs,
)
from grimoire_beholder.cli import evaluation
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library

# What other bench scripts import from here (the sets and libraries live in eval_sets.py,
# the scoring and the table in eval_scoring.py).
__all__ = [
    "BENCH", "INGEST_CODE", "INGEST_KEYS", "KS", "OUT", "QUESTION_CASES", "ROOT", "SCORER_KEYS",
    "SOURCE", "DevSet", "apply_tunes", "back_matter_share", "build_library",
    "build_server_library", "caching_embedder", "dev_sets", "evaluate", "fastify_docs",
    "fetched_docs", "fingerprint", "first_ranks", "hatch_docs", "load_questions", "main",
    "official_score", "parse_overrides", "print_changes", "pymdown_docs", "score", "table",
    "text_per_hit",
]


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
        if raw in ("true", "false"):
            value = raw == "true"
        out[key.strip()] = value
    return out


def apply_tunes(pairs: list[str]) -> None:
    """``module.NAME=JSON`` → set a module constant for this run (query-time experiments
    on ranking constants without editing the code; ingest-time constants need --variant)."""
    for pair in pairs:
        target, sep, raw = pair.partition("=")
        module_name, _, attr = target.rpartition(".")
        if not sep or not module_name:
            raise SystemExit(f"--tune wants module.NAME=JSON, got {pair!r}")
        module = importlib.import_module(module_name)
        if not hasattr(module, attr):
            raise SystemExit(f"{module_name} has no {attr}")
        setattr(module, attr, json.loads(raw))



def evaluate(dev: DevSet, config: Config, modes: list[str], overrides: dict[str, Any],
             suffix: str, against: Path | None = None, case: str = "as-written"
             ) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Run and score every mode; rows of (set, mode, group, metrics)."""
    questions = load_questions(dev, case)
    query_config = config.with_overrides(**{k: v for k, v in overrides.items()
                                           if k not in INGEST_KEYS})
    rows = []
    # Not read-only: opening read-write applies any schema migration to a cached library.
    with Library.open(config=query_config, embedder=caching_embedder(config)) as lib:
        for mode in modes:
            started = time.perf_counter()
            run = evaluation.run_questions(lib, questions, mode=mode, top_k=10)
            seconds = time.perf_counter() - started
            label = f"{dev.name}{suffix}-{mode}" + ("-lower" if case == "lower" else "")
            if against is not None:
                print_changes(label, questions, run, against / f"{label}.jsonl")
            for group, metrics in score(dev, label, questions, run).items():
                rows.append((dev.name + suffix + ("-lower" if case == "lower" else ""),
                             mode, group, metrics))
            print(f"[{label}] {len(questions)} questions in {seconds:.1f}s", file=sys.stderr)
    return rows



def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="squad",
                    help="comma-separated: squad, distractors, books, markdown, fastify, hatch, "
                         "pymdown")
    ap.add_argument("--modes", default="hybrid,vector,keyword")
    ap.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="KEY=VALUE", help="override a config key (repeatable)")
    ap.add_argument("--tune", action="append", default=[], metavar="MODULE.NAME=JSON",
                    help="set a module constant for this run (repeatable)")
    ap.add_argument("--variant", default="",
                    help="name of a variant: its own cached libraries and run files")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached libraries")
    ap.add_argument("--postgres", metavar="URL", default=None,
                    help="build and query the libraries in this PostgreSQL server")
    ap.add_argument("--against", metavar="DIR", type=Path, default=None,
                    help="print each question whose first hit or strict hit or flag moved "
                         "from the run file of the same name in DIR (e.g. a copy of OUT/runs)")
    ap.add_argument("--question-case", choices=QUESTION_CASES, default="as-written",
                    help="ask the questions as written or in lower case")
    args = ap.parse_args()
    if not (BENCH / "score.py").is_file():
        print(f"skipped: the shared bench is not at {BENCH}")
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    overrides = parse_overrides(args.overrides)
    apply_tunes(args.tune)
    suffix = f"-{args.variant}" if args.variant else ""
    known = dev_sets()
    rows = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in known:
            raise SystemExit(f"unknown set {name!r}; use {', '.join(known)}")
        if known[name].fetch is not None:
            known[name] = replace(known[name], files=known[name].fetch())
        if args.postgres:
            config = build_server_library(known[name], overrides, suffix, args.postgres)
            rows += evaluate(known[name], config, modes, overrides, suffix + "-postgres",
                             args.against, args.question_case)
        else:
            config = build_library(known[name], overrides, suffix, rebuild=args.rebuild)
            rows += evaluate(known[name], config, modes, overrides, suffix, args.against,
                             args.question_case)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
