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

    uv run python bench/mcp_latency.py --huge-line 5

``--huge-line N`` times what one huge request line costs a running server (stdio, the
README sample, fake embedder), N fresh servers per size: a ``search_book`` whose question
fills a line just under the wire's limit (read, then refused for its length) or 16 MB
(over the limit: skipped unkept), followed on the same write by a short search. From the
write to both answers: wall time, the server's CPU time (Linux) and its read system calls
(Linux: reading a byte a call made them millions). tests/test_mcp_wire.py checks that the
line is refused and the server goes on; the time is measured here.
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


def _process_counts(pid: int) -> tuple[float, int] | None:
    """(CPU seconds, read system calls) of a running process so far (Linux), else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        io = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    reads = next(int(line.split()[1]) for line in io.splitlines() if line.startswith("syscr:"))
    return cpu, reads


def _one_huge_line(directory: Path, pad: int) -> tuple[float, float | None, int | None]:
    """A fresh ``serve-mcp`` in ``directory``, initialized, sent a search whose question is
    ``pad`` bytes and a short search in one write: (wall seconds to both answers, the
    server's CPU seconds and read calls over that time, or None where not counted)."""
    from grimoire_beholder.mcp_server.stdio_lines import MAX_LINE_BYTES

    proc = subprocess.Popen([sys.executable, "-m", "grimoire_beholder.cli.entry", "serve-mcp"],
                            cwd=directory, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                     "params": {"protocolVersion": "2025-06-18",
                                                "capabilities": {}, "clientInfo": {
                                                    "name": "bench", "version": "0"}}}
                                    ).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())

        def search(request_id: int, question: str) -> bytes:
            return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                               "params": {"name": "search_book",
                                          "arguments": {"question": question}}}).encode()

        data = search(1, "x" * pad) + b"\n" + search(2, "lighthouse beam") + b"\n"
        before = _process_counts(proc.pid)
        started = time.perf_counter()
        proc.stdin.write(data)
        proc.stdin.flush()
        answered = {json.loads(proc.stdout.readline()).get("id") for _ in range(2)}
        wall = time.perf_counter() - started
        after = _process_counts(proc.pid)
        over = pad > MAX_LINE_BYTES
        if answered != {1, 2}:
            raise RuntimeError(f"serve-mcp answered {answered} to a {pad:,}-byte line"
                               f"{' (over the limit)' if over else ''} and a short one")
    finally:
        proc.kill()
        proc.communicate()
    if before is None or after is None:
        return wall, None, None
    return wall, after[0] - before[0], after[1] - before[1]


def huge_line(runs: int, directory: Path) -> None:
    """Print the ``--huge-line`` table (see the module docstring)."""
    from grimoire_beholder.mcp_server.stdio_lines import MAX_LINE_BYTES

    build_library(directory, "fake", (SAMPLE,))
    sizes = {"just under the limit": MAX_LINE_BYTES - 200, "16 MB, over the limit": 16_000_000}
    _one_huge_line(directory, 10)  # page cache and bytecode, as a running server has them
    loads = [os.getloadavg()[0]]
    rows = {label: [_one_huge_line(directory, pad) for _ in range(runs)]
            for label, pad in sizes.items()}
    loads.append(os.getloadavg()[0])
    print(f"One huge request line and a short search after it, sent to a running serve-mcp "
          f"(stdio, README sample, fake embedder), {runs} fresh servers each; medians\n")
    print("| line | bytes | wall to both answers (max) | server CPU | read calls | load avg |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, pad in sizes.items():
        walls = [r[0] for r in rows[label]]
        cpus = [r[1] for r in rows[label] if r[1] is not None]
        reads = [r[2] for r in rows[label] if r[2] is not None]
        cpu = f"{statistics.median(cpus):.2f} s" if cpus else "–"
        calls = f"{statistics.median(reads):,.0f}" if reads else "–"
        print(f"| {label} | {pad:,} | {statistics.median(walls):.2f} s ({max(walls):.2f} s) "
              f"| {cpu} | {calls} | {loads[0]:.1f}–{loads[1]:.1f} |")


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
    parser.add_argument("--huge-line", type=int, metavar="N",
                        help="time N servers reading one huge request line each (see above)")
    args = parser.parse_args()
    if args.cold:
        cold(args.cold, args.baseline)
        return
    if args.huge_line:
        huge_line(args.huge_line, args.dir / "fake-small")
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
