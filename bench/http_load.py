"""Many assistants at once on one library served over HTTP (``serve-mcp --http``).

Builds (or reuses) a library of the two books-dev books, makes a read-only token, starts
``grimoire-beholder serve-mcp --http 127.0.0.1:0`` as a subprocess and first times one client
alone (its searches one after another: the unloaded latency), then CLIENTS clients at once,
each opening its own MCP session with the SDK's Streamable HTTP client and asking SEARCHES
dev-set questions in turn. Every ``search_book`` call is timed from the client's side; a
call that fails, returns a tool error or no hit counts as an error. Prints a markdown table:
p50/p95/p99 per search, session set-up, throughput, errors, and the load average before and
after (the machine is shared: read latencies next to it).

    uv run python bench/http_load.py                                 # 50 × 20, fake embedder
    uv run python bench/http_load.py --embedding embedded            # the real default model
    uv run python bench/http_load.py --clients 10 --searches 5       # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio

from web_latency import QUESTIONS, build_library

LISTENING = re.compile(r" on (https?://\S+/mcp) ")


def new_token(config: Path) -> str:
    """A fresh read-only token (the previous run's is revoked first)."""
    from grimoire_beholder.access import create_token, list_tokens, revoke_token
    from grimoire_beholder.library import Library

    with Library.open(config, create=False) as lib:
        if any(t.name == "bench" for t in list_tokens(lib)):
            revoke_token(lib, "bench")
        return create_token(lib, "bench")[1]


def start_server(config: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "grimoire_beholder", "serve-mcp", "--http",
                             "127.0.0.1:0", "--config", str(config)],
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            match = LISTENING.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
            elif not match:
                sys.stderr.write("server: " + line)
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(120)
    if not found:
        proc.kill()
        raise SystemExit("the server did not start")
    return proc, found[0]


async def client_run(url: str, token: str, questions: list[str], times: list[float],
                     setups: list[float], errors: list[str]) -> None:
    """One client: a session of its own, then its questions one after another."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    started = time.perf_counter()
    try:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=300) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            setups.append(time.perf_counter() - started)
            for question in questions:
                begun = time.perf_counter()
                try:
                    result = await client.call_tool("search_book", {"question": question})
                except Exception as exc:  # a failed call is an error, the client goes on
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                times.append(time.perf_counter() - begun)
                content = result.structured_content or {}
                if result.is_error or not content.get("results"):
                    errors.append("tool error or no hit")
    except Exception as exc:  # the session itself failed
        errors.append(f"session: {type(exc).__name__}: {exc}")


async def wait_ready(url: str, token: str) -> None:
    """Until one search answers (the server has warmed the model)."""
    deadline = time.monotonic() + 120
    while True:
        errors: list[str] = []
        await client_run(url, token, ["warm up"], [], [], errors)
        if not errors:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the server never answered: {errors[0]}")
        await anyio.sleep(0.5)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def run(url: str, token: str, questions: list[str], clients: int,
              searches: int) -> dict[str, object]:
    await wait_ready(url, token)
    alone: list[float] = []
    await client_run(url, token, questions[:searches], alone, [], [])
    times: list[float] = []
    setups: list[float] = []
    errors: list[str] = []
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(clients):
            asked = [questions[(i * searches + k) % len(questions)] for k in range(searches)]
            tg.start_soon(client_run, url, token, asked, times, setups, errors)
    wall = time.perf_counter() - started
    return {"alone": alone, "times": times, "setups": setups, "errors": errors, "wall": wall,
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--searches", type=int, default=20, help="per client")
    parser.add_argument("--embedding", default="fake", choices=["fake", "embedded"])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/grimoire-http-bench"))
    args = parser.parse_args()
    config = build_library(args.dir / args.embedding, args.embedding)
    token = new_token(config)
    questions = [json.loads(line)["question"] for line in
                 QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    server, url = start_server(config)
    try:
        result = anyio.run(run, url, token, questions, args.clients, args.searches)
    finally:
        server.terminate()
        server.wait(timeout=30)
    times, alone = result["times"], result["alone"]
    setups, errors = result["setups"], result["errors"]
    assert isinstance(times, list) and isinstance(alone, list) and isinstance(setups, list)
    assert isinstance(errors, list)
    wall = float(str(result["wall"]))
    print(f"{args.clients} clients × {args.searches} searches over HTTP on loopback, "
          f"{args.embedding} embedder, load average {result['load_before']:.2f} before, "
          f"{result['load_after']:.2f} after; {os.cpu_count()} CPUs")
    print("| what | p50 ms | p95 ms | p99 ms |\n| --- | --- | --- | --- |")
    print(f"| one client alone, a search | {percentile(alone, .5):.1f} | "
          f"{percentile(alone, .95):.1f} | {percentile(alone, .99):.1f} |")
    print(f"| {args.clients} at once, a search | {percentile(times, .5):.1f} | "
          f"{percentile(times, .95):.1f} | {percentile(times, .99):.1f} |")
    print(f"| {args.clients} at once, opening a session | {percentile(setups, .5):.1f} | "
          f"{percentile(setups, .95):.1f} | {percentile(setups, .99):.1f} |")
    print(f"\n{len(times)} searches answered of {args.clients * args.searches} in {wall:.1f} s "
          f"({len(times) / wall:.1f}/s; one client alone: "
          f"{1 / statistics.mean(alone):.1f}/s); errors: {len(errors)}"
          + (f" — first: {errors[0]}" if errors else ""))
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
