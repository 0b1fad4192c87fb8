#!/usr/bin/env python3
"""Build and verify ``markdown-hatch.jsonl`` from ``hatch_questions.py`` (standard library).

usage: build_hatch_questions.py [--check]

Fetches the docs if needed (fetch_hatch_docs.py, into ``$GRIMOIRE_BENCH_OUT/hatch-docs`` or
``bench/out/hatch-docs``) and runs the checks of build_fastify_questions.py on them: the shared
bench's Markdown builder (evidence 6-15 words occurring exactly once in the 72 pages and in the
gold file, ``gold_line``, top heading and heading path), every answer in the gold section, no
UNANSWERABLE_TERMS word in the docs. One difference: Hatch's pages share basenames
(``plugins/*/reference.md``, ``config/build.md`` and ``build.md`` ...), and score.py matches files
by basename, so a gold file may share its basename only with pages that score.py cannot
mistake for it: none holds the evidence or 60% of its words, none has the same top heading.
``--check`` re-verifies the JSONL instead of writing it. Exit 1 on any problem.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    spec = importlib.util.spec_from_file_location("build_fastify_questions",
                                                  HERE / "build_fastify_questions.py")
    assert spec is not None and spec.loader is not None
    shared = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = shared  # dataclasses look their module up by name
    spec.loader.exec_module(shared)
    hatch = shared.MarkdownSet(HERE / "fetch_hatch_docs.py", HERE / "hatch_questions.py",
                               HERE / "markdown-hatch.jsonl", "Hatch 1.18.2 docs", "md-x-hatch",
                               "hatch-docs", unique_basenames=False)
    return int(shared.run(hatch, "--check" in sys.argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
