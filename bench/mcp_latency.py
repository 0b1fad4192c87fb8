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
"Start-up to ready" is from launching ``serve-mcp`` to the end of the MCP handshake (the
server loads the model and the vectors before it answers it); "to first answer" adds the
first ``search_book`` round trip. Both are wall times; the 1-minute load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/grimoire-bench-mcp"),
                        help="where the library is built (reused when present)")
    parser.add_argument("--embedding", choices=("fake", "embedded"), default="fake")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="serve the README sample only")
    args = parser.parse_args()

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
