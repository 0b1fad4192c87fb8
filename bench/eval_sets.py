"""The dev sets of ``retrieval_eval.py``: their files and questions, and their cached libraries.

A library's file name carries a fingerprint of the ingest-time settings (``INGEST_KEYS``), the
input files and the ingest-side source code (``INGEST_CODE``), so changing any of them builds a
new library; every vector goes through the text → vector cache of ``embed_cache.py`` in
``OUT``. ``build_server_library`` builds the same library in a PostgreSQL server instead.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embed_cache import VECTOR_CODE, CachingEmbedder
from grimoire_beholder.cli import evaluation
from grimoire_beholder.config import Config, config_from_mapping
from grimoire_beholder.library import Library
from grimoire_beholder.models import make_embedder

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "bench"
OUT = Path(os.environ.get("GRIMOIRE_BENCH_OUT") or ROOT / "bench" / "out")
SOURCE = ROOT / "src" / "grimoire_beholder"
# Settings and code that change what is stored and indexed (not how it is searched).
INGEST_KEYS = ("embedding_backend", "embedding_model", "embed_int8", "llm_backend", "llm_model",
               "chunk_size", "chunk_overlap", "section_split_tokens", "chunk_mode",
               "window_size", "window_overlap", "pdf_tables")
INGEST_CODE = ("parse", "structure", "ingest", "store/schema.sql", "store/db.py",
               "store/migrations.py", "store/book_rows.py", "models/extractive.py",
               *(f"models/{name}" for name in VECTOR_CODE))


@dataclass(frozen=True)
class DevSet:
    """A dev library (its files) and the questions asked of it."""

    name: str
    files: tuple[Path, ...]
    questions: tuple[Path, ...]
    base: str | None = None  # a smaller set whose library this one starts from
    fetch: Callable[[], tuple[Path, ...]] | None = None  # fetches ``files`` on first use
    folder: Path | None = None  # ingested as one folder, as a user would (not file by file)


def fetched_docs(name: str) -> tuple[Path, ...]:
    """The Markdown pages of ``OUT/<name>-docs``, downloaded by ``fetch_<name>_docs.py`` if
    not there yet."""
    target = OUT / f"{name}-docs"
    done = subprocess.run([sys.executable,
                           str(ROOT / "bench" / "dev-extra" / f"fetch_{name}_docs.py"),
                           str(target)], stdout=subprocess.DEVNULL)
    if done.returncode:
        raise SystemExit(f"could not fetch the {name} docs into {target}")
    return tuple(sorted(target.rglob("*.md")))


def fastify_docs() -> tuple[Path, ...]:
    """The Fastify docs' Markdown pages, downloaded by fetch_fastify_docs.py if not there yet."""
    return fetched_docs("fastify")


def hatch_docs() -> tuple[Path, ...]:
    """The Hatch docs' Markdown pages, downloaded by fetch_hatch_docs.py if not there yet."""
    return fetched_docs("hatch")


def pymdown_docs() -> tuple[Path, ...]:
    """The PyMdown Extensions docs' pages, downloaded by fetch_pymdown_docs.py if not there yet."""
    return fetched_docs("pymdown")


def dev_sets() -> dict[str, DevSet]:
    squad = tuple(sorted((BENCH / "squad-dev" / "corpus").glob("*.md")))
    books = tuple(sorted((BENCH / "books-dev").glob("*.pdf"))
                  + sorted((BENCH / "books-dev").glob("*.epub"))
                  + sorted(p for p in (BENCH / "books").iterdir()
                           if p.suffix in (".pdf", ".epub")))
    markdown_root = BENCH / "markdown-dev"
    markdown = tuple(sorted((markdown_root / "nodejs-large").rglob("*.md"))
                     + sorted((markdown_root / "npm-docs").rglob("*.md")))
    squad_q = (BENCH / "squad-dev" / "questions.jsonl",
               ROOT / "bench" / "dev-extra" / "squad-swapped.jsonl")
    return {
        "squad": DevSet("squad", squad, squad_q),
        "distractors": DevSet("squad-distractors",
                              squad + tuple(sorted((BENCH / "squad-distractors").glob("*.md"))),
                              squad_q, base="squad"),
        "books": DevSet("books", books, (BENCH / "books-dev" / "questions.jsonl",
                                         ROOT / "bench" / "dev-extra" / "books-extra.jsonl",
                                         ROOT / "bench" / "dev-extra" / "books-extra-2.jsonl",
                                         ROOT / "bench" / "dev-extra" / "books-extra-3.jsonl")),
        "markdown": DevSet("markdown", markdown,
                           (markdown_root / "questions" / "nodejs-large.jsonl",
                            markdown_root / "questions" / "npm-docs.jsonl")),
        "fastify": DevSet("fastify", (),
                          (ROOT / "bench" / "dev-extra" / "markdown-fastify.jsonl",),
                          fetch=fastify_docs, folder=OUT / "fastify-docs"),
        "hatch": DevSet("hatch", (),
                        (ROOT / "bench" / "dev-extra" / "markdown-hatch.jsonl",),
                        fetch=hatch_docs, folder=OUT / "hatch-docs"),
        "pymdown": DevSet("pymdown", (),
                          (ROOT / "bench" / "dev-extra" / "markdown-pymdown.jsonl",),
                          fetch=pymdown_docs, folder=OUT / "pymdown-docs"),
    }



def fingerprint(config: Config, files: tuple[Path, ...]) -> str:
    """A short hash of the ingest-time settings, the input files and the ingest-side code."""
    digest = hashlib.sha256()
    for key in INGEST_KEYS:
        digest.update(f"{key}={getattr(config, key, None)!r}\n".encode())
    for path in files:
        digest.update(f"{path.name}:{path.stat().st_size}\n".encode())
    for part in INGEST_CODE:
        target = SOURCE / part
        for source in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def caching_embedder(config: Config) -> CachingEmbedder:
    return CachingEmbedder(make_embedder(config), OUT / "embed-cache.sqlite")


def build_library(dev: DevSet, overrides: dict[str, Any], suffix: str = "",
                  rebuild: bool = False) -> Config:
    """The cached library of ``dev`` (built from a copy of its base set's when it has one)."""
    OUT.mkdir(parents=True, exist_ok=True)
    probe = config_from_mapping({"embedding_backend": "embedded", "llm_backend": "none",
                                 "record_stats": False, **overrides}, base_dir=str(OUT))
    db_name = f"{dev.name}{suffix}-{fingerprint(probe, dev.files)}.db"
    config = probe.with_overrides(db_path=db_name)
    if rebuild:
        for old in OUT.glob(db_name + "*"):
            old.unlink()
    if config.database_path.exists():
        print(f"[{dev.name}] reusing {db_name}", file=sys.stderr)
        return config
    partial = config.database_path.with_suffix(".partial")
    base_files: tuple[Path, ...] = ()
    if dev.base is not None and not partial.exists():
        base = dev_sets()[dev.base]
        base_files = base.files
        base_config = build_library(base, overrides, suffix)
        # SQLite's backup API copies committed pages, including any still in the WAL.
        with sqlite3.connect(base_config.database_path) as source, \
                sqlite3.connect(partial) as target:
            source.backup(target)
    started = time.perf_counter()
    with Library.open(config=config.with_overrides(db_path=partial.name),
                      embedder=caching_embedder(config)) as lib:
        already = {Path(b.source_path).name for b in lib.list_books()}
        if dev.folder is not None:  # two Index.md: single-file ingest refuses the second slug
            synced = lib.ingest_folder(dev.folder)
            for outcome in synced.files:
                print(f"[{dev.name}] {outcome.describe()}"[:160], file=sys.stderr)
            if synced.failed:
                raise SystemExit(f"[{dev.name}] {len(synced.failed)} file(s) failed to ingest")
        else:
            for path in dev.files:
                if path.name in already and path in base_files:
                    continue
                report = lib.ingest(path)
                print(f"[{dev.name}] {path.name}: {report}"[:160], file=sys.stderr)
    partial.rename(config.database_path)
    index = partial.with_name(partial.name + ".search")  # a persisted search index, if built
    if index.is_dir():
        index.rename(config.database_path.with_name(config.database_path.name + ".search"))
    print(f"[{dev.name}] built in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return config


def build_server_library(dev: DevSet, overrides: dict[str, Any], suffix: str,
                         server: str) -> Config:
    """The library of ``dev`` in a database of the PostgreSQL ``server`` (made on first use;
    files already in it are skipped by ingest itself, so an interrupted build resumes)."""
    from urllib.parse import urlsplit

    import psycopg

    probe = config_from_mapping({"embedding_backend": "embedded", "llm_backend": "none",
                                 "record_stats": False, **overrides}, base_dir=str(OUT))
    name = f"gb_{dev.name}{suffix}_{fingerprint(probe, dev.files)}".replace("-", "_").lower()
    with psycopg.connect(server, autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                             (name,)).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')
    config = probe.with_overrides(db_path=urlsplit(server)._replace(path="/" + name).geturl())
    started = time.perf_counter()
    with Library.open(config=config, embedder=caching_embedder(config)) as lib:
        done = {b.source_hash for b in lib.list_books() if b.status["embedded"] == b.chunks}
        if len(done) < len(dev.files):
            for path in dev.files:
                report = lib.ingest(path)
                print(f"[{dev.name}] {path.name}: {report}"[:160], file=sys.stderr)
    print(f"[{dev.name}] PostgreSQL library {name} ready in "
          f"{time.perf_counter() - started:.0f}s", file=sys.stderr)
    return config


QUESTION_CASES = ("as-written", "lower")


def load_questions(dev: DevSet, case: str = "as-written") -> list[dict[str, Any]]:
    """The questions of ``dev``, each in lower case when ``case`` is ``lower``."""
    questions = [q for path in dev.questions for q in evaluation.load_questions(path)]
    if case == "lower":
        questions = [{**q, "question": q["question"].lower()} for q in questions]
    return questions

