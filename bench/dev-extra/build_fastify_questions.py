#!/usr/bin/env python3
"""Build and verify ``markdown-fastify.jsonl`` from ``fastify_questions.py`` (standard library).

usage: build_fastify_questions.py [--check]

Fetches the docs if needed (fetch_fastify_docs.py, into ``$GRIMOIRE_BENCH_OUT/fastify-docs`` or
``bench/out/fastify-docs``), then runs the shared bench's Markdown question builder
(``../shared/bench/markdown-dev/tools/build_md_questions.py``) with its ROOT set to the folder
that holds ``fastify-docs/``, so ``gold_file`` reads ``fastify-docs/Reference/Hooks.md``. That
builder checks each evidence phrase occurs exactly once in the 41 pages (after textnorm.norm) and
in the gold file, computes ``gold_line`` and checks chapter and heading path. On top of it this
checks: gold files' basenames are unique in the corpus (score.py matches basenames), every answer
occurs in the gold section (the text from the heading above ``gold_line`` to the next heading),
and no UNANSWERABLE_TERMS word occurs in the docs. ``--check`` re-verifies the JSONL instead of
writing it. Exit 1 on any problem, each printed on one line.
"""

from __future__ import annotations

import importlib.util
import json
import re
import runpy
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[2] / "shared" / "bench"
SPECS = HERE / "fastify_questions.py"
OUT_JSONL = HERE / "markdown-fastify.jsonl"
DOC_TITLE = "Fastify 5.12.8 docs"
PREFIX = "md-x-fastify"
CORPUS = "fastify-docs"


def load(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extra_checks(builder, records: list[dict], terms: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """Basename uniqueness of gold files, answers in the gold section, absent unanswerable terms."""
    problems = []
    files = builder.corpus_files(CORPUS)
    names = Counter(Path(f).name for f in files)
    everything = "\n".join(Path(builder.ROOT, f).read_text(encoding="utf-8") for f in files)
    for q in records:
        if not q["answerable"]:
            continue
        if names[Path(q["gold_file"]).name] != 1:
            problems.append(f"{q['id']}: basename of {q['gold_file']} is not unique in the corpus")
        if q["gold_line"] is None:
            continue
        lines = builder.read_lines(q["gold_file"])
        starts = [n for n, _, _ in builder.headings(lines)]
        first = max((n for n in starts if n <= q["gold_line"]), default=1)
        last = min((n for n in starts if n > q["gold_line"]), default=len(lines) + 1)
        section = builder.norm("\n".join(lines[first - 1:last - 1]))
        for answer in q["answers"]:
            if builder.norm(answer) not in section:
                problems.append(f"{q['id']}: answer {answer!r} is not in the gold section")
    for term in terms:
        if re.search(rf"\b{re.escape(term)}\b", everything, re.IGNORECASE):
            problems.append(f"unanswerable term {term!r} occurs in the docs")
    return problems


def main() -> int:
    fetcher = load("fetch_fastify_docs", HERE / "fetch_fastify_docs.py")
    docs = fetcher.fetch()
    builder = load("build_md_questions", BENCH / "markdown-dev" / "tools" / "build_md_questions.py")
    builder.ROOT = str(docs.parent)
    specs = runpy.run_path(str(SPECS))
    if "--check" in sys.argv[1:]:
        records = [json.loads(line) for line in OUT_JSONL.read_text(encoding="utf-8").splitlines()
                   if line.strip()]
        corpus, texts = builder.load_corpus(CORPUS)
        problems = [f"{q['id']}: {p}" for q in records if q["answerable"]
                    for p in builder.verify(q, corpus, texts)[0]]
    else:
        bad = builder.build(str(SPECS), CORPUS, DOC_TITLE, PREFIX, str(OUT_JSONL))
        records = [json.loads(line) for line in OUT_JSONL.read_text(encoding="utf-8").splitlines()]
        problems = [f"{bad} question(s) failed the builder's checks"] if bad else []
    problems += extra_checks(builder, records, specs.get("UNANSWERABLE_TERMS", []))
    print("\n".join(problems) if problems else
          f"OK: {len(records)} questions verify against {docs}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
