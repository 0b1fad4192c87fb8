#!/usr/bin/env python3
"""The seeded random draw of sections the ``fastify`` questions were written on (stdlib only).

usage: draw_fastify_sections.py     (prints one drawn section a line: file, line, level, heading)

A section is the text from one heading (outside fenced code) to the next, kept when it has at
least 300 characters of prose (lines not starting a fence, an indent, a table or a list). Draw:
Reference/ Server.md 3, Reply.md, Hooks.md, Routes.md, TypeScript.md and
Validation-and-Serialization.md 2 each, 7 other Reference pages and 10 Guides at random (no
Index.md: the two share a basename). Then the re-draws README.md lists: Server.md's
`querystringParser` (its text is in the page twice) and TypeScript.md's preParsing handler (its
note repeats Hooks.md) were re-drawn with seeds 2 and 3 from the same page.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILDER = HERE.parents[2] / "shared" / "bench" / "markdown-dev" / "tools" / "build_md_questions.py"
LONG = (["Server.md"] * 3 + ["Reply.md"] * 2 + ["Hooks.md"] * 2 + ["Routes.md"] * 2
        + ["TypeScript.md"] * 2 + ["Validation-and-Serialization.md"] * 2)


def sections(builder, path: Path) -> list[tuple[int, int, str]]:  # type: ignore[no-untyped-def]
    """[(line, level, heading)] of the sections with at least 300 characters of prose."""
    lines = path.read_text(encoding="utf-8").split("\n")
    marks = [*builder.headings(lines), (len(lines) + 1, 0, "END")]
    out = []
    for (start, level, title), (end, _, _) in itertools.pairwise(marks):
        prose = sum(len(line) for line in lines[start:end - 1]
                    if line.strip() and not line.startswith(("```", "  ", "|", "-", "*")))
        if prose >= 300:
            out.append((start, level, title))
    return out


def main() -> None:
    spec = importlib.util.spec_from_file_location("build_md_questions", BUILDER)
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    fetch_spec = importlib.util.spec_from_file_location("fetch", HERE / "fetch_fastify_docs.py")
    assert fetch_spec is not None and fetch_spec.loader is not None
    fetcher = importlib.util.module_from_spec(fetch_spec)
    fetch_spec.loader.exec_module(fetcher)
    docs = fetcher.fetch()
    rng = random.Random(20261203)
    others = sorted(p.name for p in (docs / "Reference").glob("*.md")
                    if p.name != "Index.md" and p.name not in LONG)
    guides = sorted(p.name for p in (docs / "Guides").glob("*.md") if p.name != "Index.md")
    picks = (["Reference/" + f for f in LONG] + ["Reference/" + f for f in rng.sample(others, 7)]
             + ["Guides/" + f for f in rng.sample(guides, 10)])
    used: set[tuple[str, int]] = set()
    for rel in picks:
        choice = rng.choice([s for s in sections(builder, docs / rel) if (rel, s[0]) not in used])
        used.add((rel, choice[0]))
        print(rel, *choice, sep="\t")
    server = [s for s in sections(builder, docs / "Reference/Server.md")
              if s[0] not in (1847, 1208, 742, 699)]
    print("Reference/Server.md", *random.Random(2).choice(server), "(re-draw)", sep="\t")
    types = [s for s in sections(builder, docs / "Reference/TypeScript.md")
             if s[0] not in (1587, 1173) and "HookHandler" not in s[2]]
    print("Reference/TypeScript.md", *random.Random(3).choice(types), "(re-draw)", sep="\t")


if __name__ == "__main__":
    main()
