"""The fast test tier's reach: its share of the suite, and every module of the package run.

Run: ``uv run python bench/fast_tier.py [-n N]`` (N: xdist workers, default ``auto``).

1. Collects the whole suite and the fast tier (``-m "not slow"``) and counts both: the fast
   tier must hold at least half of the tests.
2. Runs the fast tier under coverage (pytest-cov, in-process code only: a CLI started as a
   subprocess is not measured) and lists every module of ``src/grimoire_beholder`` that no
   fast test reached. A module counts as reached when one of its functions ran (for a module
   that defines no function: when it was imported). Exit status 1 when the tier holds under
   half of the tests or leaves a module unreached.

Prints the wall time of the coverage run and the 1-minute load average beside it; the tier's
own time (without coverage) is `time uv run pytest -m "not slow"` (README "Tests").
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "grimoire_beholder"
# Run only as `python -m grimoire_beholder`: importing it would start the CLI.
NOT_IMPORTABLE = {"__main__.py"}


def _count(marker: str | None) -> int:
    """How many tests pytest collects (with ``-m marker`` when given)."""
    args = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n0", "-p",
            "no:cacheprovider"]
    if marker:
        args += ["-m", marker]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    # addopts has -q already: `-q -q` prints one "tests/file.py: N" line per file
    return sum(int(line.rsplit(": ", 1)[1]) for line in proc.stdout.splitlines()
               if line.startswith("tests/") and line.rsplit(": ", 1)[-1].isdigit())


def _is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only a docstring and ``...`` (a Protocol's method): nothing to run."""
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
               for s in node.body)


def _has_functions(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_stub(node)
               for node in ast.walk(tree))


def _unreached(report: dict[str, object]) -> list[str]:
    """Modules of the package (paths relative to it) no fast test ran."""
    files: dict[str, dict[str, object]] = {
        str((ROOT / name).resolve()): data
        for name, data in report["files"].items()}  # type: ignore[attr-defined]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in NOT_IMPORTABLE:
            continue
        data = files.get(str(path.resolve()))
        if data is None:
            missing.append(str(path.relative_to(PACKAGE)))
            continue
        if _has_functions(path):
            functions = data.get("functions", {})  # type: ignore[union-attr]
            ran = any(f["executed_lines"] for name, f in functions.items() if name)
            if not ran:
                missing.append(f"{path.relative_to(PACKAGE)} (imported, no function ran)")
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", default="auto", help="pytest-xdist workers (default: auto)")
    args = parser.parse_args()
    total, fast = _count(None), _count("not slow")
    print(f"tests: {total}; fast tier (-m 'not slow'): {fast} ({fast / max(total, 1):.0%})")
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "coverage.json"
        load = os.getloadavg()[0]
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "not slow", "-n", args.n, "-q",
             "-p", "no:cacheprovider", "--cov=grimoire_beholder", "--cov-report=",
             f"--cov-report=json:{report_path}"],
            cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        tail = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print(f"fast tier under coverage: {seconds:.0f} s (load average {load:.1f}); "
              f"{tail[0]}")
        if not report_path.exists():
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
            return 1
        report = json.loads(report_path.read_text(encoding="utf-8"))
    print(f"line coverage of the package by the fast tier: "
          f"{report['totals']['percent_covered']:.0f}%")
    missing = _unreached(report)
    for name in missing:
        print(f"not reached by a fast test: {name}")
    if not missing:
        print("every module of the package is reached by a fast test")
    return 1 if missing or fast * 2 < total or proc.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
