"""Warm ``search_book`` latency through the MCP protocol (stdio), as an assistant sees it.

Builds (or reuses) a library of the SQuAD dev corpus plus its distractors (100 Markdown
articles, ~2,000 chunks at the default chunk size), starts ``grimoire-beholder serve-mcp`` as a
subprocess, and times ``tools/call search_book`` round trips with the SDK's client, after a
few warm-up calls. Prints a markdown table.

    uv run python bench/mcp_latency.py                      # fake embedder: fast to build
    uv run python bench/mcp_latency.py --embedding embedded # the real default model

The fake embedder makes the build take seconds; the search path (vector matrix, FTS5, fusion,
the protocol round trip) is the same, except the embedded model's query encoding (~ms).

    uv run python bench/mcp_latency.py --embedding embedded --small --queries 20

``--small`` serves the README's sample (8 chunks) instead: what start-up costs on its own.
"Start-up to ready" is from launching ``serve-mcp`` to the end of the MCP handshake; "to
first answer" adds the first ``search_book`` round trip. Both are wall times; the 1-minute
load average is printed.

    uv run python bench/mcp_latency.py --cold 5 [--baseline /work/base]

``--cold N`` measures start-up alone, N fresh servers on the README sample (embedded model),
spoken to in raw JSON-RPC lines: wall time from launch to the ``initialize`` answer, to the
``tools/list`` answer and to the first ``search_book`` answer, and the server's CPU time
(user + system, all its threads) from launch to its exit right after that answer. With
``--baseline`` another checkout (its own ``.venv``, its own copy of the sample ingested by
its own CLI) starts as many servers, alternating with this one, and the ratios of the
medians are printed. On a machine shared with other work the CPU time is the figure that
load does not inflate much; on a quiet machine the wall time to the first answer is close
to it, since the start-up runs on one thread at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
CORPORA = (BENCH / "squad-dev" / "corpus", BENCH / "squad-distractors")
SAMPLE = Path(__file__).resolve().parents[1] / "samples"
QUESTIONS = BENCH / "squad-dev" / "questions.jsonl"


def build_library(directory: Path, embedding: str,
                  corpora: tuple[Path, ...] = CORPORA) -> tuple[int, int]:
    """Ingest every corpus file once (a re-run reuses the library); (documents, chunks)."""
    from grimoire_beholder.library import Library

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.toml"
    config.write_text(f'[grimoire-beholder]\ndb_path = "book.db"\n'
                      f'embedding_backend = "{embedding}"\nllm_backend = "none"\n',
                      encoding="utf-8")
    with Library.open(config) as lib:
        have = {b.source_path for b in lib.list_books() if b.chunks == b.status.get("embedded")}
        files = sorted(p for corpus in corpora for p in corpus.glob("*.md"))
        started = time.perf_counter()
        for path in files:
            if str(path.resolve()) not in have:
                lib.ingest(path)
        if len(have) < len(files):
            print(f"ingested {len(files) - len(have)} files in "
                  f"{time.perf_counter() - started:.1f}s", file=sys.stderr)
        return len(files), int(lib.status().chunks["embedded"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


async def measure(directory: Path, questions: list[str], top_k: int) -> dict[str, object]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "grimoire_beholder.cli.entry", "serve-mcp"],
        cwd=str(directory),  # bytecode may be cached, as in a user's install
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - started
        await client.call_tool("search_book", {"question": questions[0], "top_k": top_k})
        first = time.perf_counter() - started
        for q in questions[:3]:  # warm-up: first calls pay for lazy imports and page cache
            await client.call_tool("search_book", {"question": q, "top_k": top_k})
        timings, sizes = [], []
        for q in questions:
            t0 = time.perf_counter()
            result = await client.call_tool("search_book", {"question": q, "top_k": top_k})
            timings.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error, result.content
            sizes.append(len(json.dumps(result.model_dump(mode="json", by_alias=True))))
    return {"ready_s": ready, "first_s": first, "timings": timings, "sizes": sizes}


def _cold_start(python: Path, library: Path, env: dict[str, str], question: str
                ) -> tuple[float, float, float, float]:
    """One fresh ``serve-mcp`` (the installed script, run by ``python``) in ``library``: wall
    seconds to the ``initialize``, ``tools/list`` and first ``search_book`` answers, and its
    CPU seconds."""
    started = time.perf_counter()
    proc = subprocess.Popen([str(python), str(python.with_name("grimoire-beholder")),
                             "serve-mcp"],
                            cwd=library, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    marks = []
    messages = [
        {"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}},
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/list"},
        {"id": 3, "method": "tools/call", "params": {
            "name": "search_book", "arguments": {"question": question, "top_k": 5}}},
    ]
    for message in messages:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()
        if "id" not in message:
            continue
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"serve-mcp of {python} closed stdout early")
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                break
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise RuntimeError(f"serve-mcp of {python}: {line[:300]}")
        marks.append(time.perf_counter() - started)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above
    return marks[0], marks[1], marks[2], usage.ru_utime + usage.ru_stime


def _sample_library(python: Path, folder: Path, env: dict[str, str]) -> None:
    """The README sample ingested on the embedded model by ``python``'s own CLI."""
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        '[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "embedded"\n'
        'llm_backend = "none"\n', encoding="utf-8")
    for path in sorted(SAMPLE.glob("*.md")):
        subprocess.run([str(python), str(python.with_name("grimoire-beholder")), "ingest",
                        str(path), "-q"], cwd=folder, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cold(runs: int, baseline: Path | None) -> None:
    """Print the ``--cold`` table (see the module docstring)."""
    checkouts = {"this": Path(__file__).resolve().parents[1]}
    if baseline is not None:
        checkouts["baseline"] = baseline.resolve()
    question = "how far can a lighthouse beam reach?"
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("PYTHONDONTWRITEBYTECODE", "GRIMOIRE_BEHOLDER_CONFIG",
                             "GRIMOIRE_BEHOLDER_LIBRARY")}
    with tempfile.TemporaryDirectory() as tmp:
        envs, folders, pythons = {}, {}, {}
        for label, checkout in checkouts.items():
            pythons[label] = checkout / ".venv" / "bin" / "python"
            envs[label] = {**base_env, "GRIMOIRE_BEHOLDER_CACHE": str(Path(tmp) / label)}
            folders[label] = Path(tmp) / label / "library"
            _sample_library(pythons[label], folders[label], envs[label])
            _cold_start(pythons[label], folders[label], envs[label], question)  # graph cache
        rows: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in checkouts}
        loads = [os.getloadavg()[0]]
        for _ in range(runs):
            for label in checkouts:
                rows[label].append(_cold_start(pythons[label], folders[label], envs[label],
                                               question))
        loads.append(os.getloadavg()[0])
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"Cold serve-mcp on the README sample (embedded model, graph cached), {runs} "
          f"starts each, alternating checkouts; medians\n")
    print("| checkout | to initialize | to tools/list | to first search_book | CPU to exit "
          "| load avg |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    medians = {}
    for label in checkouts:
        medians[label] = [statistics.median(r[i] for r in rows[label]) for i in range(4)]
        init, listed, first, cpu = medians[label]
        print(f"| {label} | {init:.2f} s | {listed:.2f} s | {first:.2f} s | {cpu:.2f} s "
              f"| {loads[0]:.1f}–{loads[1]:.1f} |")
    if baseline is not None:
        ratio = [a / b for a, b in zip(medians["this"], medians["baseline"], strict=True)]
        print(f"| **this / baseline** | {ratio[0]:.2f}× | {ratio[1]:.2f}× | {ratio[2]:.2f}× "
              f"| {ratio[3]:.2f}× | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/grimoire-bench-mcp"),
                        help="where the library is built (reused when present)")
    parser.add_argument("--embedding", choices=("fake", "embedded"), default="fake")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="serve the README sample only")
    parser.add_argument("--cold", type=int, metavar="N",
                        help="measure N cold starts instead (see the module docstring)")
    parser.add_argument("--baseline", type=Path, help="with --cold: another checkout")
    args = parser.parse_args()
    if args.cold:
        cold(args.cold, args.baseline)
        return

    directory = args.dir / (args.embedding + ("-small" if args.small else ""))
    docs, chunks = build_library(directory, args.embedding,
                                 (SAMPLE,) if args.small else CORPORA)
    load = os.getloadavg()[0]
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    questions = [r["question"] for r in rows][: args.queries]
    out = anyio.run(measure, directory, questions, args.top_k)
    timings: list[float] = out["timings"]  # type: ignore[assignment]
    sizes: list[int] = out["sizes"]  # type: ignore[assignment]
    print(f"| library | embedder | queries | top_k | start-up to ready | to first answer | p50 "
          f"| p95 | mean | max | max response | load avg |\n"
          f"|---|---|---|---|---|---|---|---|---|---|---|---|\n"
          f"| {chunks} chunks, {docs} docs | {args.embedding} | {len(timings)} | {args.top_k} "
          f"| {out['ready_s']:.2f} s | {out['first_s']:.2f} s | {percentile(timings, 50):.1f} ms "
          f"| {percentile(timings, 95):.1f} ms | {statistics.mean(timings):.1f} ms "
          f"| {max(timings):.1f} ms | {max(sizes):,} chars | {load:.1f} |")


if __name__ == "__main__":
    main()
