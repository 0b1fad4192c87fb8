"""Ingest throughput on the embedded default vs the embedder alone, and context concurrency.

Run: ``uv run python bench/ingest_throughput.py [--files N] [--skip-concurrency]``.

1. **Pipeline overhead.** The SQuAD dev corpus (``/work/shared/bench/squad-dev/corpus``, 40
   Markdown articles) is ingested into a fresh library on the embedded default (MiniLM,
   extractive contexts), with an embedder that is already loaded, so model load time is not
   counted. Then the *same* texts the pipeline embedded (context + chunk, read back from the
   library) go through ``embed_documents`` directly, in batches of ``embed_batch_size``. The
   overhead is how much longer the ingest took than the raw embedding: parsing, chunking,
   extractive summaries, SQLite writes, FTS5 indexing. The raw pass runs twice right after
   the ingest and the mean is used; CPU seconds of this process are shown as well, being
   much less sensitive than wall time to other load on a shared machine.
2. **Context concurrency.** ``tests/fake_ollama.py``'s FakeOllama answers every request after
   an artificial delay (``set_delay``), as a slow LLM would. One Markdown file is ingested
   with ``llm_backend = "ollama"`` at ``context_concurrency`` 1, 2, 4, 8, and the contexts
   stage is timed (from its ``stage`` progress event to the next one): N requests in flight
   should give close to N× the throughput of one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from grimoire_beholder.config import Config
from grimoire_beholder.ingest.pipeline import embedding_texts
from grimoire_beholder.library import Library
from grimoire_beholder.models.embedded import EmbeddedEmbedder
from grimoire_beholder.store import chunk_progress

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "bench" / "squad-dev" / "corpus"


class StageClock:
    """A Progress that records when each stage starts (the pipeline reports nothing else)."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, float]] = []

    def stage(self, name: str, total: int) -> None:
        self.starts.append((name, time.perf_counter()))

    def advance(self, n: int = 1) -> None:
        return None

    def message(self, text: str) -> None:
        return None

    def duration(self, name: str, end: float) -> float:
        """Seconds from ``name``'s start to the next stage's start (or ``end``)."""
        for i, (stage, started) in enumerate(self.starts):
            if stage == name:
                following = self.starts[i + 1][1] if i + 1 < len(self.starts) else end
                return following - started
        return 0.0


def _raw_pass(embedder: EmbeddedEmbedder, texts: list[str], batch: int) -> tuple[float, float]:
    """(wall s, CPU s) to embed ``texts`` in batches of ``batch``."""
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        embedder.embed_documents(texts[start:start + batch])
    return time.perf_counter() - wall, time.process_time() - cpu


def pipeline_overhead(files: list[Path]) -> None:
    embedder = EmbeddedEmbedder()
    embedder.check()  # load the model outside the timed region
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        for path in files:
            (folder / path.name).write_bytes(path.read_bytes())
        config = Config(db_path=str(Path(tmp) / "lib.db"), base_dir=tmp)
        with Library.open(config=config, embedder=embedder) as lib:
            load0 = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            report = lib.ingest_folder(folder)
            ingest_wall, ingest_cpu = time.perf_counter() - wall, time.process_time() - cpu
            work = chunk_progress.pending_chunks(lib.conn, None, "embedded")
        texts = embedding_texts(embedder, work)  # what ingest gave the model
    raws = [_raw_pass(embedder, texts, config.embed_batch_size) for _ in range(2)]
    raw_wall = statistics.mean(r[0] for r in raws)
    raw_cpu = statistics.mean(r[1] for r in raws)
    n = len(texts)
    print(f"Ingest of {len(files)} SQuAD-dev articles, {n} chunks, embedded MiniLM "
          f"(load avg {load0:.1f} → {os.getloadavg()[0]:.1f}; files with errors: "
          f"{report.counts().get('failed', 0)})\n")
    print("| pass | wall s | chunks/s (wall) | CPU s | chunks per CPU-s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| ingest end to end (model preloaded) | {ingest_wall:.1f} | {n / ingest_wall:.1f} | "
          f"{ingest_cpu:.1f} | {n / ingest_cpu:.1f} |")
    for i, (w, c) in enumerate(raws, 1):
        print(f"| raw embed_documents, run {i} | {w:.1f} | {n / w:.1f} | {c:.1f} | "
              f"{n / c:.1f} |")
    print(f"\nPipeline overhead over raw embedding: {100 * (ingest_wall / raw_wall - 1):+.1f} % "
          f"wall, {100 * (ingest_cpu / raw_cpu - 1):+.1f} % CPU\n")


def context_concurrency(delay: float, levels: list[int]) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_ollama import FakeOllama

    source = sorted(CORPUS.glob("*.md"))[0]
    print(f"Contexts stage against FakeOllama with {delay * 1000:.0f} ms per request "
          f"({source.name})\n")
    print("| context_concurrency | contexts | seconds | contexts/s | speed-up | ideal | "
          "load avg |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = 0.0
    with FakeOllama() as fake:
        fake.set_delay(delay)
        for level in levels:
            with tempfile.TemporaryDirectory() as tmp:
                config = Config(db_path=str(Path(tmp) / "lib.db"), base_dir=tmp,
                                embedding_backend="fake", llm_backend="ollama",
                                ollama_host=fake.host, context_concurrency=level)
                clock = StageClock()
                load = os.getloadavg()[0]
                with Library.open(config=config) as lib:
                    report = lib.ingest(source, progress=clock)
                seconds = clock.duration("contexts", time.perf_counter())
            rate = report.contexts / seconds if seconds else 0.0
            base = base or rate
            print(f"| {level} | {report.contexts} | {seconds:.2f} | {rate:.1f} | "
                  f"{rate / base:.2f}× | {level}× | {load:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=0, help="only the first N articles")
    parser.add_argument("--skip-concurrency", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--levels", default="1,2,4,8")
    args = parser.parse_args()
    files = sorted(CORPUS.glob("*.md"))
    if args.files:
        files = files[:args.files]
    if not args.skip_overhead:
        pipeline_overhead(files)
    if not args.skip_concurrency:
        context_concurrency(args.delay, [int(x) for x in args.levels.split(",")])


if __name__ == "__main__":
    main()
