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
writing it. Exit 1 on any problem, each printed on one line. ``run(MarkdownSet, check)`` does
the same for another fetched Markdown set (build_hatch_questions.py).
"""

from __future__ import annotations

import importlib.util
import json
import re
import runpy
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[2] / "shared" / "bench"


@dataclass(frozen=True)
class MarkdownSet:
    """One fetched Markdown corpus and its hand-written questions."""

    fetch_script: Path  # a fetch_*_docs.py whose fetch() returns the docs folder
    specs: Path  # Q, UNANSWERABLE, UNANSWERABLE_TERMS
    out_jsonl: Path
    doc_title: str
    prefix: str
    corpus: str  # the docs folder's name, the first part of every gold_file
    # False: a gold file may share its basename with another page, as long as score.py cannot
    # mistake that page's hits for the gold's (see shared_basename_problems)
    unique_basenames: bool = True


FASTIFY = MarkdownSet(HERE / "fetch_fastify_docs.py", HERE / "fastify_questions.py",
                      HERE / "markdown-fastify.jsonl", "Fastify 5.12.8 docs", "md-x-fastify",
                      "fastify-docs")


def load(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_basename_problems(builder, q: dict, others: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """Why score.py could credit a hit in ``others`` (pages with the gold's basename) to ``q``.

    It matches files by basename, then accepts a hit by text (the evidence, or its first or last
    60% of words) or by location (the chapter, i.e. top heading, and section)."""
    problems = []
    words = builder.norm(q["evidence"]).split()
    n = max(3, round(len(words) * 0.6))
    pieces = [" ".join(words)] + ([" ".join(words[:n]), " ".join(words[-n:])]
                                  if len(words) > n else [])
    for other in others:
        lines = builder.read_lines(other)
        text = builder.norm("\n".join(lines))
        if any(piece in text for piece in pieces):
            problems.append(f"{q['id']}: its evidence (or 60% of it) is also in {other}")
        top = next((t for _, level, t in builder.headings(lines) if level == 1), None)
        if q["gold_chapter"] is not None and top is not None \
                and builder.norm(top) == builder.norm(q["gold_chapter"]):
            problems.append(f"{q['id']}: {other} has the same top heading as {q['gold_file']}")
    return problems


def extra_checks(builder, md: MarkdownSet, records: list[dict], terms: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """Basenames of gold files, answers in the gold section, absent unanswerable terms."""
    problems = []
    files = builder.corpus_files(md.corpus)
    names = Counter(Path(f).name for f in files)
    everything = "\n".join(Path(builder.ROOT, f).read_text(encoding="utf-8") for f in files)
    for q in records:
        if not q["answerable"]:
            continue
        if names[Path(q["gold_file"]).name] != 1:
            if md.unique_basenames:
                problems.append(f"{q['id']}: basename of {q['gold_file']} is not unique in the "
                                "corpus")
            else:
                others = [f for f in files if f != q["gold_file"]
                          and Path(f).name == Path(q["gold_file"]).name]
                problems += shared_basename_problems(builder, q, others)
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


def run(md: MarkdownSet, check: bool) -> int:
    """Build (or with ``check`` re-verify) ``md``'s JSONL; print the problems; -> exit status."""
    fetcher = load(md.fetch_script.stem, md.fetch_script)
    docs = fetcher.fetch()
    builder = load("build_md_questions", BENCH / "markdown-dev" / "tools" / "build_md_questions.py")
    builder.ROOT = str(docs.parent)
    specs = runpy.run_path(str(md.specs))
    if check:
        records = [json.loads(line) for line in md.out_jsonl.read_text(encoding="utf-8")
                   .splitlines() if line.strip()]
        corpus, texts = builder.load_corpus(md.corpus)
        problems = [f"{q['id']}: {p}" for q in records if q["answerable"]
                    for p in builder.verify(q, corpus, texts)[0]]
    else:
        bad = builder.build(str(md.specs), md.corpus, md.doc_title, md.prefix, str(md.out_jsonl))
        records = [json.loads(line)
                   for line in md.out_jsonl.read_text(encoding="utf-8").splitlines()]
        problems = [f"{bad} question(s) failed the builder's checks"] if bad else []
    problems += extra_checks(builder, md, records, specs.get("UNANSWERABLE_TERMS", []))
    print("\n".join(problems) if problems else
          f"OK: {len(records)} questions verify against {docs}")
    return 1 if problems else 0


def main() -> int:
    return run(FASTIFY, "--check" in sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
