#!/usr/bin/env python3
"""The seeded random draw of sections the ``pymdown`` questions were written on (stdlib only).

usage: draw_pymdown_sections.py     (prints, per share, its first five draws: file, line, heading)

The Hatch set's draw (draw_hatch_sections.py, whose rules it reuses) on the 45 pages of the
PyMdown Extensions 13.1.2 docs, with seed 20261205: the sections with at least 200 characters of
prose (lines outside fenced code, not headings or table rows, of at least four words besides
links), laid end to end in path order by prose length and cut into 30 equal shares; one
uniformly random character per share picks its section. A share's later draws are for when the
first has nothing a developer could ask, repeats an earlier share's section or has its answer
elsewhere in the docs too; README.md says which shares used them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_hatch_sections import draw  # a sibling script: this folder is no package

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    draw(HERE / "fetch_pymdown_docs.py", 20261205)
