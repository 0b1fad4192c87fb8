"""Markdown whose constructs multiply into tokens: memory stays a small multiple of the file.

A 5 MB table of 5,000 columns used to take 1.4 GB (12.5 MB: 3.5 GB, then a MemoryError): the
parser built an object for every cell, list item, line break and emphasis mark. Each case
below is a few MB of one such construct, parsed and shaped into chunks in a subprocess under
a 3 GB address-space cap, which reports its own peak RSS. The bound is a constant times the
file's size (plus the interpreter's own churn) over its resident size before parsing — at
most ~35× in practice, where the old parser reached 300–1,400× — and a sentinel sentence
after the construct proves nothing was dropped.
One case goes through the real ``ingest`` command end to end.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,  # MB-sized files parsed in capped subprocesses
    pytest.mark.skipif(not Path("/proc/self/status").exists(),
                       reason="peak memory is read from Linux's /proc"),
]
MEMORY_LIMIT = 3 * 1024**3
PER_BYTE = 60  # peak RSS growth allowed per byte of input…
SLACK = 64 * 1024**2  # …over the interpreter's own churn
SENTINEL = "The lighthouse keeper wrote zanzibarquill in the last line."


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _wide_table(cols: int = 5000, rows: int = 200) -> str:
    return ("|" + "|".join(f"col{i}" for i in range(cols)) + "|\n"
            + "|" + "|".join("-" for _ in range(cols)) + "|\n"
            + "".join("|" + "|".join(f"v{r}" for _ in range(cols)) + "|\n"
                      for r in range(rows)))


def _short_rows(cols: int = 5000, rows: int = 1_200_000) -> str:
    """A wide header, then rows of one cell: each used to be padded to 5,000 cells."""
    return _wide_table(cols, 0) + "a\n" * rows


# name → text of about 2–3 MB (the sentinel paragraph is appended after it)
CONSTRUCTS: dict[str, Callable[[], str]] = {
    "wide table": _wide_table,
    "short rows under a wide header": _short_rows,
    "many small tables": lambda: "| a | b |\n|---|---|\n| 1 | 2 |\n\n" * 80_000,
    "bullet list of one-letter items": lambda: "- a\n" * 600_000,
    "numbered list": lambda: "1. a\n" * 500_000,
    "blockquote paragraphs": lambda: "> a\n\n" * 500_000,
    "quotes nested a thousand deep": lambda: ("> " * 1000 + "a\n") * 1200,
    "lists indented ever deeper": lambda: "".join("  " * (i % 300) + "- a\n"
                                                  for i in range(12_000)),
    "one-letter lines": lambda: "a\n" * 1_200_000,
    "hard line breaks": lambda: "a  \n" * 600_000,
    "empty headings": lambda: "#\n" * 1_000_000,
    "headings of every level": lambda: "".join("#" * (1 + i % 6) + " h\n"
                                               for i in range(400_000)),
    "emphasis marks on one line": lambda: "*a " * 800_000,
    "unclosed emphasis runs": lambda: "*" * 1_000_000 + "a" + "_" * 1_000_000,
    "inline links": lambda: "[a](b) " * 350_000,
    "reference links and definitions": lambda: (
        "".join(f"[r{i}]: http://x/{i}\n" for i in range(100_000))
        + "".join(f"[r{i}] " for i in range(100_000))),
    "code spans": lambda: "`a` " * 600_000,
    "entities": lambda: "&amp; " * 400_000,
    "autolinks": lambda: "<http://a> " * 200_000,
    "small fences": lambda: "```\na\n```\n" * 250_000,
    "one huge unclosed fence": lambda: "```\n" + "x = 1\n" * 400_000,
    "html blocks": lambda: "<div>\na\n</div>\n\n" * 150_000,
    "link labels left open": lambda: "[" * 2_000_000,
}

# Peak and current resident size from /proc: ru_maxrss would also count the pytest process
# this one was forked from before its exec (Linux keeps the larger of the two).
MEMORY = """
def memory(field):
    with open("/proc/self/status") as status:
        line = next(ln for ln in status if ln.startswith(field + ":"))
    return int(line.split()[1]) * 1024
"""

PARSE_AND_SHAPE = MEMORY + """
import json, sys
from pathlib import Path
from grimoire_beholder.config import Config
from grimoire_beholder.ingest.build import build_book, file_info
from grimoire_beholder.parse import parse_file
base = memory("VmRSS")  # resident now, not the high-water mark the imports reached
path = Path(sys.argv[1])
parsed = parse_file(path)
config = Config(base_dir=str(path.parent))
book = build_book(parsed, slug="x", name="x", info=file_info(path), config=config)
text = "\\n".join(c.text for ch in book.chapters for s in ch.sections for c in s.chunks)
print(json.dumps({"base": base, "peak": memory("VmHWM"),
                  "sentinel": text.count("zanzibarquill"),
                  "warnings": parsed.warnings}))
"""


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_memory_stays_proportional_to_the_file(tmp_path: Path, construct: str) -> None:
    path = tmp_path / "hostile.md"
    path.write_text(CONSTRUCTS[construct]() + "\n\n" + SENTINEL + "\n", encoding="utf-8")
    size = path.stat().st_size
    proc = subprocess.run([sys.executable, "-c", PARSE_AND_SHAPE, str(path)],
                          capture_output=True, text=True, timeout=600,
                          preexec_fn=_limit_memory)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    growth = report["peak"] - report["base"]
    assert growth <= PER_BYTE * size + SLACK, (
        f"{construct}: {growth / 1e6:.0f} MB for a {size / 1e6:.1f} MB file")
    assert report["sentinel"] >= 1  # the text after the construct is kept


def test_a_wide_table_ingests_through_the_cli_within_bounds(tmp_path: Path) -> None:
    """The reported case, end to end: 5,000 columns × 200 rows through ``ingest``."""
    (tmp_path / "config.toml").write_text(
        '[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
        'llm_backend = "none"\n'
        "chunk_size = 400\nchunk_overlap = 40\n")
    path = tmp_path / "wide.md"
    path.write_text(_wide_table(5000, 200) + "\n\n" + SENTINEL + "\n", encoding="utf-8")
    code = MEMORY + (
        "import atexit, sys; atexit.register(lambda: print('peak', memory('VmHWM'), "
        "file=sys.stderr)); sys.argv = ['grimoire-beholder', *sys.argv[1:]]; "
        "from grimoire_beholder.cli.entry import main; main()")
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    proc = subprocess.run([sys.executable, "-c", code, "ingest", str(path), "-q", "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
                          preexec_fn=_limit_memory)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["chunks"] > 100
    peak = int(proc.stderr.split("peak")[-1].split()[0])
    assert peak <= 200 * 1024**2 + SLACK + PER_BYTE * path.stat().st_size, peak
    found = subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", "query",
                            "zanzibarquill", "--mode", "keyword", "--json"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0 and "zanzibarquill" in found.stdout, found.stderr
