"""Real-book ingest, this checkout against another one side by side, in chunks per CPU-second.

Run: ``uv run python bench/book_ingest.py [--baseline /work/base] [--rounds 3] [--json]
[--also LABEL=CHECKOUT] [--variant LABEL:KEY=VALUE,...]``.

Each book of ``../shared/bench/books`` named by ``--books`` (default: R-intro and the Sherlock
Holmes EPUB) is ingested into a fresh library on the embedded default (MiniLM, extractive
contexts) by a child process of each checkout's own ``.venv`` Python, so the baseline runs
its own code. The child loads the model first (not timed), then times ``Library.ingest``:
wall seconds, CPU seconds of the whole process (onnxruntime's threads included, so the load
of other programs on the machine changes it much less than wall time), the chunks stored and
how many of them were windowed (longer than the model's 256-piece window). Rounds alternate
between the checkouts so both see the same machine; the table shows medians per book, the
CPU seconds per book (what a user waits for, whatever the chunk size) beside the chunks per
CPU-second, and the 1-minute load average. ``--also`` adds other checkouts (e.g. today's
main) and ``--variant`` runs this checkout again with config keys changed (e.g.
``float:embed_int8=false``), so each lever is measured in the same run; every row gets its
ratio to the baseline.

Bytecode: a user's install has its modules' bytecode cached (pip compiles at install, and
Python writes the cache on first import), so the children run without
``PYTHONDONTWRITEBYTECODE`` and every checkout's ``src`` and ``.venv`` are byte-compiled
before the first round. Otherwise, where the environment sets that variable (this project's
machines do), each ingest would compile every module it imports from source, about 1.4
CPU-seconds of an R-intro ingest that no user pays twice.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "bench" / "books"
DEFAULT_BOOKS = ("R-intro.pdf", "arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub")

CHILD = r"""
import json, sys, time
from pathlib import Path
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from grimoire_beholder.models.embedded import EmbeddedEmbedder

from grimoire_beholder.models import make_embedder

book, folder, threads = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
config = Config(db_path=str(Path(folder) / "lib.db"), base_dir=folder, **json.loads(sys.argv[4]))
# A checkout with the int8 setting (8b35d79 has none) keeps it when --threads is given.
precision = {"int8": config.embed_int8} if hasattr(config, "embed_int8") else {}
embedder = (EmbeddedEmbedder(threads=threads, **precision) if threads
            else make_embedder(config))
embedder.check()
with Library.open(config=config, embedder=embedder) as lib:
    wall, cpu = time.perf_counter(), time.process_time()
    report = lib.ingest(book)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    chars = lib.conn.execute("SELECT coalesce(sum(length(text)), 0), "
                             "coalesce(max(length(text)), 0) FROM chunks").fetchone()
print(json.dumps({"chunks": report.chunks, "windowed": report.windowed, "wall": wall,
                  "cpu": cpu, "embed_wall": report.embed_seconds, "chars": chars[0],
                  "max_chars": chars[1]}))
"""


def child_env(checkout: Path) -> dict[str, str]:
    """The environment of ``checkout``'s children: its own ``src`` first (a copy of a checkout
    that shares another's .venv, whose editable install points elsewhere, still runs its own
    code), and bytecode caching on, as in a user's install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(checkout / "src")}


def compile_bytecode(checkout: Path) -> None:
    """Byte-compile ``checkout``'s ``src`` and its ``.venv``'s packages (once: later calls
    find the caches current)."""
    python = str(checkout / ".venv" / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True,
                             env=child_env(checkout)).stdout.strip()
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", str(checkout / "src"),
                    purelib], capture_output=True, check=False, env=child_env(checkout))


def run_child(checkout: Path, book: Path, threads: int,
              overrides: dict[str, object]) -> dict[str, float]:
    """One ingest of ``book`` by ``checkout``'s own interpreter, as a JSON mapping."""
    python = checkout / ".venv" / "bin" / "python"
    env = child_env(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([str(python), "-c", CHILD, str(book), tmp, str(threads),
                               json.dumps(overrides)],
                              cwd=checkout, capture_output=True, text=True, check=False,
                              env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: ingest of {book.name} failed:\n{proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]
    return result


def summarise(runs: list[dict[str, float]]) -> dict[str, float]:
    """Medians of each figure over the rounds (chunk counts do not vary)."""
    keys = runs[0].keys()
    out = {key: statistics.median(run[key] for run in runs) for key in keys}
    out["chunks_per_cpu_s"] = out["chunks"] / out["cpu"]
    out["chunks_per_s"] = out["chunks"] / out["wall"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=Path("/work/base"),
                        help="another checkout with its own .venv (default /work/base)")
    parser.add_argument("--books", default=",".join(DEFAULT_BOOKS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0,
                        help="the embedder's threads (0: its default; today onnxruntime "
                        "calls at once, 8b35d79 intra-op threads of one call)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=CHECKOUT",
                        help="another checkout to run alongside (repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL:KEY=VALUE,…",
                        help="this checkout with config keys changed (repeatable)")
    args = parser.parse_args()
    checkouts: dict[str, tuple[Path, dict[str, object]]] = {
        "baseline": (args.baseline.resolve(), {})}
    for item in args.also:
        label, _, path = item.partition("=")
        checkouts[label] = (Path(path).resolve(), {})
    for item in args.variant:
        label, _, pairs = item.partition(":")
        checkouts[label] = (ROOT, {k: json.loads(v) for k, _, v in
                                   (pair.partition("=") for pair in pairs.split(","))})
    checkouts["this"] = (ROOT, {})
    books = [BOOKS / name for name in args.books.split(",")]
    missing = [str(b) for b in books if not b.is_file()]
    if missing:
        raise SystemExit(f"missing books: {', '.join(missing)}")
    for checkout in {path for path, _ in checkouts.values()}:
        compile_bytecode(checkout)
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for book in books:
            for label, (checkout, overrides) in checkouts.items():
                runs.setdefault((label, book.name), []).append(
                    run_child(checkout, book, args.threads, overrides))
                print(f"  {label} {book.name}: {runs[(label, book.name)][-1]}", file=sys.stderr)
    rows = {key: summarise(value) for key, value in runs.items()}
    if args.json:
        for (label, book), row in rows.items():
            print(json.dumps({"checkout": label, "book": book, **row}))
        return
    print(f"Real-book ingest, medians of {args.rounds} alternating rounds "
          f"(baseline {checkouts['baseline'][0]})\n")
    print("| book | checkout | chunks | windowed | max chars | CPU s | wall s | "
          "chunks per CPU-s | load |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for book in books:
        for label in checkouts:
            r = rows[(label, book.name)]
            print(f"| {book.stem[:24]} | {label} | {r['chunks']:.0f} | {r['windowed']:.0f} | "
                  f"{r['max_chars']:.0f} | {r['cpu']:.1f} | {r['wall']:.1f} | "
                  f"{r['chunks_per_cpu_s']:.1f} | {r['load']:.1f} |")
        base = rows[("baseline", book.name)]
        for label in list(checkouts)[1:]:
            this = rows[(label, book.name)]
            print(f"| {book.stem[:24]} | **{label} / baseline** | | | | "
                  f"{base['cpu'] / this['cpu']:.2f}× less | "
                  f"| {this['chunks_per_cpu_s'] / base['chunks_per_cpu_s']:.2f}× | |")


if __name__ == "__main__":
    main()
