"""What ``sync`` saves after a small edit, compared with re-ingesting from scratch.

Copies the 100 SQuAD articles (squad-dev corpus + distractors) to a temporary folder,
ingests it with ``ingest DIR`` on the configured default models (embedded MiniLM, no LLM),
edits one paragraph of one file, then measures:

* ``sync`` on that library — chunks that met the embedder, wall time;
* a full ingest into a fresh library — the same figures. By default that is the first
  ingest itself (the corpus before the one-sentence edit: the same files, chunks and model
  calls give or take that sentence), which halves the run time; ``--fresh`` re-ingests the
  edited folder into a second library instead.

Model calls are counted by wrapping the embedder, so they are what really reached the model.
Prints a markdown table.

    uv run python bench/sync_bench.py [--embedding embedded|fake] [--fresh]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
CORPORA = (BENCH / "squad-dev" / "corpus", BENCH / "squad-distractors")


class CountingEmbedder:
    """Delegates to a real embedder and counts the passages it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.documents = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.documents += len(texts)
        return self.inner.embed_documents(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def open_library(directory: Path, embedding: str) -> tuple[Any, CountingEmbedder]:
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library
    from grimoire_beholder.models import make_embedder

    directory.mkdir(parents=True, exist_ok=True)
    config = Config(base_dir=str(directory), db_path="book.db", embedding_backend=embedding,
                    llm_backend="none")
    counter = CountingEmbedder(make_embedder(config))
    return Library.open(config=config, embedder=counter), counter  # type: ignore[arg-type]


def edit_one_file(folder: Path) -> Path:
    """Rewrite the first paragraph of one article (one section, about one chunk)."""
    target = sorted(folder.rglob("*.md"))[len(list(folder.rglob("*.md"))) // 2]
    text = target.read_text(encoding="utf-8")
    marker = "## Paragraph 1\n\n"
    at = text.index(marker) + len(marker)
    target.write_text(text[:at] + "An editor added this sentence to the first paragraph. "
                      + text[at:], encoding="utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedding", default="embedded", choices=("embedded", "fake"))
    parser.add_argument("--fresh", action="store_true",
                        help="time a separate re-ingest of the edited folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sync-bench-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        for source in CORPORA:
            shutil.copytree(source, corpus / source.name)
        files = len(list(corpus.rglob("*.md")))

        lib, counter = open_library(work / "lib", args.embedding)
        with lib:
            lib.embedder.check()  # load the model outside the timed region
            started = time.perf_counter()
            first = lib.ingest_folder(corpus)
            first_seconds = time.perf_counter() - started
            full_seconds, full_calls = first_seconds, counter.documents
            chunks = sum(b.chunks for b in lib.list_books())
            edited = edit_one_file(corpus)
            print(f"ingested {files} files, {chunks} chunks in {first_seconds:.1f}s; edited "
                  f"{edited.relative_to(corpus)}", file=sys.stderr)
            counter.documents = 0
            started = time.perf_counter()
            report = lib.sync()
            sync_seconds = time.perf_counter() - started
            sync_calls = counter.documents
        assert first.counts()["added"] == files and report.counts()["changed"] == 1

        if args.fresh:
            fresh, fresh_counter = open_library(work / "fresh", args.embedding)
            with fresh:
                fresh.embedder.check()
                started = time.perf_counter()
                fresh.ingest_folder(corpus)
                full_seconds = time.perf_counter() - started
                full_calls = fresh_counter.documents

    print(f"\n{files} Markdown files ({chunks} chunks), one paragraph of one file edited, "
          f"`{args.embedding}` embeddings, no LLM:\n")
    print("| run | chunks embedded (model calls) | chunks reused | wall time |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| `sync` after the edit | {sync_calls} | {report.reused} | {sync_seconds:.2f} s |")
    print(f"| full re-ingest into a fresh library | {full_calls} | 0 | {full_seconds:.2f} s |")


if __name__ == "__main__":
    main()
