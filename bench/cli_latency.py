"""Cold CLI wall times (``--help``, ``list``, ``query``) and the slowest imports.

Run: ``uv run python bench/cli_latency.py [--runs 7] [--db PATH]``.

Each command runs as a fresh ``python -m grimoire_beholder.cli.entry`` subprocess (the installed
``grimoire-beholder`` script is the same entry point plus a tiny launcher), ``--runs`` times;
the table shows the median and the best run. "Cold" here means a new interpreter each time
(no warm process, no cached model session); the OS page cache is warm after the first run,
as it is for a user typing commands one after another. ``query`` runs against the scale
bench's 10k-chunk library (``bench/scale_build.py``) unless ``--db`` names another, so it
loads the vector matrix and the embedded model like a real query does.

Then ``python -X importtime`` lists the top cumulative imports of ``--help`` and of
``query``, and the bench checks that numpy is not imported by ``--help`` or ``list``.
The 1-minute load average is printed with each row: on a shared 2-core machine it explains
most of the spread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_build

CLI = [sys.executable, "-m", "grimoire_beholder.cli.entry"]


def _time(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, float, float]:
    """(median s, best s, load average) of ``runs`` runs of ``cmd``."""
    times = []
    load = os.getloadavg()[0]
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times), load


def _importtime(cmd: list[str], env: dict[str, str], top: int) -> list[tuple[float, str]]:
    """The ``top`` imports by cumulative time (seconds), from ``-X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], env=env,
                          capture_output=True, text=True, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line[12:].split("|", 2))
        rows.append((int(cumulative) / 1e6, name))
    # Keep top-level-ish modules: a package's cumulative time already includes its children.
    rows.sort(reverse=True)
    seen: list[tuple[float, str]] = []
    for seconds, name in rows:
        if not any(name.strip().startswith(other.strip() + ".") for _, other in seen):
            seen.append((seconds, name.strip()))
        if len(seen) >= top:
            break
    return seen


def _imports_numpy(cmd: list[str], env: dict[str, str]) -> bool:
    proc = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], env=env,
                          capture_output=True, text=True, check=False)
    return any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "numpy"
               for line in proc.stderr.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--db", type=Path, help="library for list/query (default: scale 10k)")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    db = args.db or scale_build.build(10_000)[0]
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(f'db_path = "{db}"\n', encoding="utf-8")
        env = {**os.environ, "GRIMOIRE_BEHOLDER_CONFIG": str(config)}
        commands = {
            "--help": [*CLI, "--help"],
            "list": [*CLI, "list"],
            "query": [*CLI, "query", "what piorbe nara yaluriko"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        print(f"Cold CLI wall time, {args.runs} runs each (library: {db.name})\n")
        print("| command | median | best | numpy imported | load avg |")
        print("| --- | ---: | ---: | :---: | ---: |")
        for name, cmd in commands.items():
            median, best, load = _time(cmd, env, args.runs)
            numpy = "yes" if _imports_numpy(cmd, env) else "no"
            print(f"| `{name}` | {median * 1000:.0f} ms | {best * 1000:.0f} ms | {numpy} | "
                  f"{load:.1f} |")
        for name in ("--help", "list", "query"):
            print(f"\nTop cumulative imports of `{name}` (`-X importtime`)\n")
            print("| module | cumulative |")
            print("| --- | ---: |")
            for seconds, module in _importtime(commands[name], env, args.top):
                print(f"| `{module}` | {seconds * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
