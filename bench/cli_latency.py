"""Cold CLI wall and CPU times (``--help``, ``list``, ``query``, Claude Code's ``hook prompt``,
and ``serve-mcp`` refusing to start), side by side with another checkout, and the slowest
imports.

Run: ``uv run python bench/cli_latency.py [--runs 5] [--baseline /work/base] [--db PATH]``.

Each command runs as a fresh subprocess of the checkout's installed ``grimoire-beholder``
script, ``--runs`` times;
the table shows the median and the best wall time and the median CPU time (user + system of
the child, onnxruntime's threads included). "Cold" means a new interpreter each time (no warm
process); the OS page cache is warm after the first run, as it is for a user typing commands
one after another, and Python may write its bytecode cache as it would in a user's install
(``PYTHONDONTWRITEBYTECODE`` is dropped for the children). The embedded model's graph cache
(``GRIMOIRE_BEHOLDER_CACHE``) starts empty in a temporary folder: the first ``query`` after
install is shown on its own row, the median is of the later ones.

The two ``serve-mcp`` rows time a server that cannot start (``--http nonsense``; a
``--library`` folder holding no library): the one error line and its exit.

``query`` and ``hook prompt`` (given a prompt payload on stdin) run against a small library:
the README's sample, ingested on the embedded default by each checkout's own CLI (``--db``
names another library for this checkout only). With ``--baseline`` another checkout (its own
``.venv``) runs the same commands, alternating run by run with this one so both see the
same machine, and the ratio of the medians is printed.

Then ``python -X importtime`` lists the top cumulative imports of ``--help`` and of
``query``, and the bench checks that numpy is not imported by ``--help`` or ``list``.
The 1-minute load average is printed with each row: on a shared 2-core machine it explains
most of the spread.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "lighthouse-keepers-handbook.md"


PAYLOAD = '{"prompt": "how far can a lighthouse beam reach at night?"}'


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None, *,
         refused: bool = False) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``cmd`` (a hook gets the prompt payload on stdin); one
    that must fail (``refused``) may exit non-zero, any other must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=not refused, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, input=PAYLOAD.encode() if "hook" in cmd else b"")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _small_library(checkout: Path, folder: Path, env: dict[str, str]) -> dict[str, str]:
    """The sample ingested by ``checkout``'s own CLI into ``folder``; the environment that
    points its commands there."""
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        '[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "embedded"\n'
        'llm_backend = "none"\n', encoding="utf-8")
    env = {**env, "GRIMOIRE_BEHOLDER_CONFIG": str(folder / "config.toml")}
    subprocess.run([*_cli(checkout), "ingest", str(SAMPLE), "-q"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return env


def _cli(checkout: Path) -> list[str]:
    """The checkout's installed ``grimoire-beholder`` script, run by its own interpreter."""
    venv = checkout / ".venv" / "bin"
    return [str(venv / "python"), str(venv / "grimoire-beholder")]


def _importtime(cmd: list[str], env: dict[str, str], top: int) -> list[tuple[float, str]]:
    """The ``top`` imports by cumulative time (seconds), from ``-X importtime``."""
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=env,
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
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=env,
                          capture_output=True, text=True, check=False,
                          input=PAYLOAD if "hook" in cmd else "")
    return any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "numpy"
               for line in proc.stderr.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--db", type=Path, help="library for list/query (default: the sample)")
    parser.add_argument("--baseline", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    checkouts = {"this": ROOT}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        envs: dict[str, dict[str, str]] = {}
        for label, checkout in checkouts.items():
            env = {**base_env, "GRIMOIRE_BEHOLDER_CACHE": str(Path(tmp) / label / "cache")}
            if args.db and label == "this":
                config = Path(tmp) / "config.toml"
                config.write_text(f'db_path = "{args.db}"\n', encoding="utf-8")
                envs[label] = {**env, "GRIMOIRE_BEHOLDER_CONFIG": str(config)}
            else:
                envs[label] = _small_library(checkout, Path(tmp) / label / "library", env)
            shutil.rmtree(Path(tmp) / label / "cache", ignore_errors=True)  # a fresh install
        commands = {
            "--help": ["--help"],
            "list": ["list"],
            "query": ["query", "how far can a lighthouse beam reach?"],
            "hook prompt": ["hook", "prompt"],
            # a server that cannot start: told in one line, before the MCP SDK is imported
            "serve-mcp --http nonsense": ["serve-mcp", "--http", "nonsense"],
            "serve-mcp, no library": ["serve-mcp", "--library", str(Path(tmp) / "none")],
        }
        refused = {"serve-mcp --http nonsense", "serve-mcp, no library"}
        library = args.db.name if args.db else "the README sample, embedded"
        print(f"Cold CLI, {args.runs} runs each after one first run, alternating checkouts "
              f"(library: {library})\n")
        print("| command | checkout | first run | median wall | best wall | median CPU | "
              "numpy imported | load avg |")
        print("| --- | --- | ---: | ---: | ---: | ---: | :---: | ---: |")
        medians: dict[tuple[str, str], float] = {}
        for name, tail in commands.items():
            firsts = {label: _run([*_cli(c), *tail], envs[label], refused=name in refused)
                      for label, c in checkouts.items()}
            runs: dict[str, list[tuple[float, float]]] = {label: [] for label in checkouts}
            load = os.getloadavg()[0]
            for _ in range(args.runs):
                for label, checkout in checkouts.items():
                    runs[label].append(_run([*_cli(checkout), *tail], envs[label],
                                            refused=name in refused))
            for label, checkout in checkouts.items():
                walls = [w for w, _ in runs[label]]
                cpu = statistics.median(c for _, c in runs[label])
                medians[(name, label)] = statistics.median(walls)
                numpy = "yes" if _imports_numpy([*_cli(checkout), *tail], envs[label]) else "no"
                print(f"| `{name}` | {label} | {firsts[label][0] * 1000:.0f} ms | "
                      f"{medians[(name, label)] * 1000:.0f} ms | {min(walls) * 1000:.0f} ms | "
                      f"{cpu * 1000:.0f} ms | {numpy} | {load:.1f} |")
            if "baseline" in checkouts:
                ratio = medians[(name, "this")] / medians[(name, "baseline")]
                print(f"| `{name}` | **this / baseline** | | **{ratio:.2f}×** | | | | |")
        wall, cpu = _run([sys.executable, "-c", "pass"], base_env)
        print(f"| `python -c pass` | | | {wall * 1000:.0f} ms | | {cpu * 1000:.0f} ms | no | "
              f"{os.getloadavg()[0]:.1f} |")
        for name in ("--help", "list", "query"):
            print(f"\nTop cumulative imports of `{name}` (`-X importtime`, this checkout)\n")
            print("| module | cumulative |")
            print("| --- | ---: |")
            for seconds, module in _importtime([*_cli(ROOT), *commands[name]], envs["this"],
                                               args.top):
                print(f"| `{module}` | {seconds * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
