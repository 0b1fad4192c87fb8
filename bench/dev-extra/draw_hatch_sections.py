#!/usr/bin/env python3
"""The seeded random draw of sections the ``hatch`` questions were written on (stdlib only).

usage: draw_hatch_sections.py     (prints, per share, its first five draws: file, line, heading)

A section is the text from one heading (outside fenced code) to the next. Its *prose* is its
lines outside fenced code blocks that are not headings or table rows (``|``) and hold at least
four words besides links (the line counted with its link targets ``](…)`` dropped). A section is
kept when it has at least 200 characters of prose, so tables of links, sections that are only a
TOML example and most of the list of users drop out. The kept sections of all 72 pages, in path
order, are laid end to end by prose length and cut into 30 equal shares; in each share a
character is drawn uniformly at random (seed 20261203) and the section holding it is the draw:
one section per share, weighted by length, so long pages get more questions. A share's later
draws (printed after the first) are for when the first has nothing a developer could ask,
repeats an earlier share's section or has its answer elsewhere in the docs too; README.md says
which shares used them.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_fastify_questions import load  # a sibling script: this folder is no package

HERE = Path(__file__).resolve().parent
BUILDER = HERE.parents[2] / "shared" / "bench" / "markdown-dev" / "tools" / "build_md_questions.py"
SHARES = 30
MIN_PROSE = 200
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
LINK = re.compile(r"\[[^\]]*\]")


def prose_lines(lines: list[str]) -> list[str]:
    """Per line: its prose (link targets dropped), or "" for fences, code, headings, tables and
    lines of fewer than four words besides links."""
    out, fence = [], None
    for line in lines:
        mark = FENCE.match(line)
        if mark:
            if fence is None:
                fence = mark.group(1)[0] * 3
            elif mark.group(1).startswith(fence):
                fence = None
            out.append("")
            continue
        text = LINK_TARGET.sub("]", line.strip())
        words = LINK.sub(" ", text).split()
        keep = fence is None and len(words) >= 4 and not text.startswith(("#", "|"))
        out.append(text if keep else "")
    return out


def sections(builder, docs: Path, rel: str,  # type: ignore[no-untyped-def]
             min_prose: int = MIN_PROSE) -> list[tuple[str, int, str, int]]:
    """[(file, heading line, heading, prose characters)] of the kept sections of a page."""
    lines = (docs / rel).read_text(encoding="utf-8").split("\n")
    prose = prose_lines(lines)
    marks = [(1, 0, "(top of page)"), *builder.headings(lines), (len(lines) + 1, 0, "END")]
    out = []
    for (start, _, title), (end, _, _) in itertools.pairwise(marks):
        size = sum(len(prose[i - 1]) for i in range(start, end))
        if size >= min_prose and end > start:
            out.append((rel, start, title, size))
    return out


def draw(fetch_script: Path, seed: int, shares: int = SHARES, min_prose: int = MIN_PROSE,
         tries: int = 5) -> None:
    """Print the draw for the docs ``fetch_script`` fetches: the pool's size, then per share its
    first ``tries`` draws (share, attempt, file, heading line, heading, prose characters).
    draw_pymdown_sections.py draws the same way on another corpus."""
    builder = load("build_md_questions", BUILDER)
    docs = load(fetch_script.stem, fetch_script).fetch()
    pool = [s for rel in sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
            for s in sections(builder, docs, rel, min_prose)]
    total = sum(s[3] for s in pool)
    ends, acc = [], 0
    for s in pool:
        acc += s[3]
        ends.append(acc)
    rng = random.Random(seed)
    print(f"{len(pool)} sections, {total} characters of prose, {shares} shares")
    for share in range(shares):
        low, high = total * share // shares, total * (share + 1) // shares
        for attempt in range(tries):
            at = rng.randrange(low, high)
            rel, line, title, size = pool[next(i for i, end in enumerate(ends) if end > at)]
            print(share + 1, attempt + 1, rel, line, title, size, sep="\t")


def main() -> None:
    draw(HERE / "fetch_hatch_docs.py", 20261203)


if __name__ == "__main__":
    main()
