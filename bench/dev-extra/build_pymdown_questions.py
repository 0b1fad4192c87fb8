#!/usr/bin/env python3
"""Build and verify ``markdown-pymdown.jsonl`` from ``pymdown_questions.py`` (standard library).

usage: build_pymdown_questions.py [--check]

Fetches the docs if needed (fetch_pymdown_docs.py, into ``$GRIMOIRE_BENCH_OUT/pymdown-docs`` or
``bench/out/pymdown-docs``) and runs the checks of build_fastify_questions.py on them: the shared
bench's Markdown builder (evidence 6-15 words occurring exactly once in the 45 pages and in the
gold file, ``gold_line``, top heading and heading path), every answer in the gold section, no
UNANSWERABLE_TERMS word in the docs. As for Hatch, a gold file may share its basename
(``index.md`` and ``extensions/blocks/index.md``, the two ``details.md``) with pages that
score.py cannot mistake for it: none holds the evidence or 60% of its words, none has the same
top heading. ``--check`` re-verifies the JSONL instead of writing it. Exit 1 on any problem.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_fastify_questions as shared  # a sibling script: this folder is no package

HERE = Path(__file__).resolve().parent


def main() -> int:
    pymdown = shared.MarkdownSet(HERE / "fetch_pymdown_docs.py", HERE / "pymdown_questions.py",
                                 HERE / "markdown-pymdown.jsonl", "PyMdown Extensions 13.1.2 docs",
                                 "md-x-pymdown", "pymdown-docs", unique_basenames=False)
    return int(shared.run(pymdown, "--check" in sys.argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
