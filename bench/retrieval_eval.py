"""Retrieval quality on the shared dev sets: recall@k, MRR@10, strict recall, text per hit.

Run: ``uv run python bench/retrieval_eval.py [--sets squad,books,markdown,distractors]
[--variant NAME] [--modes hybrid,vector,keyword] [--set key=value ...] [--out DIR]
[--postgres URL] [--against DIR]``.

``--postgres postgresql://…`` builds and queries the libraries in that PostgreSQL server
instead (one database per library, named like the SQLite file; the ``postgres`` extra and a
server with pgvector), so the two engines' figures compare on the same questions.

* ``squad``: the 40 articles of ``squad-dev/corpus``, 210 questions;
  ``distractors``: the same plus the 60 ``squad-distractors`` (built from a copy of squad).
* ``books``: ``books-dev`` (R-data.pdf, the calibre EPUB) plus every PDF/EPUB in ``books/``,
  the 50 ``books-dev`` questions and ours in ``bench/dev-extra`` on Sherlock Holmes, The Art
  of War and R-intro: 55 in ``books-extra.jsonl`` (groups ``bk-x-…``) and a harder 120 drawn
  at random and written blind, 60 in ``books-extra-2.jsonl`` (groups ``bk-y-…``) and 60 in
  ``books-extra-3.jsonl`` (groups ``bk-z-…``), reported per book.
* ``markdown``: ``markdown-dev`` (14 Node.js API pages and the npm docs), 36 questions.
* ``fastify``: the 41 Markdown pages of the Fastify 5.12.8 docs alone, fetched into
  ``OUT/fastify-docs`` on first use (``bench/dev-extra/fetch_fastify_docs.py``), and the 35
  questions of ``bench/dev-extra/markdown-fastify.jsonl``, written blind (see its README).
* ``hatch``: the 72 Markdown pages of the Hatch 1.18.2 docs alone (PyPI sdist, fetched into
  ``OUT/hatch-docs`` by ``bench/dev-extra/fetch_hatch_docs.py``), and the 35 questions of
  ``bench/dev-extra/markdown-hatch.jsonl``, drawn at random and written blind.
* ``pymdown``: the 45 Markdown pages of the PyMdown Extensions 13.1.2 docs alone (PyPI sdist,
  fetched into ``OUT/pymdown-docs`` by ``bench/dev-extra/fetch_pymdown_docs.py``), and the 35
  questions of ``bench/dev-extra/markdown-pymdown.jsonl``, drawn at random and written blind.

Per set and mode it prints hit recall@1/5/10 and MRR@10 (the bench's rule: the text holds
the evidence or the hit cites the gold location), *strict* recall@5 and MRR@10 (the text
alone), the mean characters returned per hit in the top 5, and how often the search
flagged answerable and unanswerable questions as "probably not in the library".

Libraries are built on the embedded default (MiniLM, extractive contexts) and cached in
``--out`` (default ``$GRIMOIRE_BENCH_OUT`` or ``bench/out``): a library's file name carries a
fingerprint of the ingest-time settings, the input files and the ingest-side source code
(parse, structure, ingest, store schema), so changing any of them builds a new library. Every
vector goes through a text → vector cache in the same folder (``embed_cache.py``), so a
rebuild only embeds chunk texts never seen before. ``--set`` overrides config keys (query-time
keys such as ``fusion`` reuse the cached library). Every run is written to ``OUT/runs/`` and
scored twice — by the bench's ``score.py`` and by ``grimoire_beholder.cli.evaluation`` — and any
disagreement is printed. ``--against DIR`` (a copy of an earlier ``OUT/runs``) prints every
question whose first hit, first strict hit or "not in the library" flag moved: which
questions a change won or lost, not only how many. ``--question-case lower`` asks every
question in lower case, as people often type in a terminal (run files get a ``-lower``
suffix): the confidence should not depend on the case of the typing.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
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
KS = (1, 3, 5, 10)
SCORER_KEYS = {"recall@1": "hit_recall@1", "recall@5": "hit_recall@5",
               "recall@10": "hit_recall@10", "mrr@10": "hit_mrr@10",
               "strict_recall@5": "strict_recall@5"}


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


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` strings → typed values (int, then float, else the raw string)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set wants key=value, got {pair!r}")
        value: Any = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        if raw in ("true", "false"):
            value = raw == "true"
        out[key.strip()] = value
    return out


def apply_tunes(pairs: list[str]) -> None:
    """``module.NAME=JSON`` → set a module constant for this run (query-time experiments
    on ranking constants without editing the code; ingest-time constants need --variant)."""
    for pair in pairs:
        target, sep, raw = pair.partition("=")
        module_name, _, attr = target.rpartition(".")
        if not sep or not module_name:
            raise SystemExit(f"--tune wants module.NAME=JSON, got {pair!r}")
        module = importlib.import_module(module_name)
        if not hasattr(module, attr):
            raise SystemExit(f"{module_name} has no {attr}")
        setattr(module, attr, json.loads(raw))


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


def official_score(questions: tuple[Path, ...], run_path: Path) -> dict[str, Any]:
    """The bench scorer's JSON output for a run file."""
    done = subprocess.run([sys.executable, str(BENCH / "score.py"), *map(str, questions),
                           "--run", str(run_path), "--json"],
                          capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def text_per_hit(questions: list[dict[str, Any]], run: list[dict[str, Any]]) -> float:
    """Mean characters of text per returned hit in the top 5, over answerable questions."""
    answerable = {q["id"] for q in questions if q.get("answerable", True)}
    sizes = [len(r.get("text") or "") for record in run if record["id"] in answerable
             for r in record["results"][:5]]
    return sum(sizes) / len(sizes) if sizes else 0.0


def back_matter_share(questions: list[dict[str, Any]], run: list[dict[str, Any]]) -> float:
    """Share of the top-5 hits of answerable questions that are not body text."""
    answerable = {q["id"] for q in questions if q.get("answerable", True)}
    roles = [r.get("role", "body") for record in run if record["id"] in answerable
             for r in record["results"][:5]]
    return sum(role != "body" for role in roles) / len(roles) if roles else 0.0


def score(dev: DevSet, label: str, questions: list[dict[str, Any]],
          run: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Metrics per question group ("all" first), checked against score.py."""
    runs_dir = OUT / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    run_path = runs_dir / f"{label}.jsonl"
    run_path.write_text("".join(json.dumps(r) + "\n" for r in run), encoding="utf-8")
    ours = evaluation.score_run(questions, run, KS)
    theirs = official_score(dev.questions, run_path)
    groups = {"all": ours, **ours["groups"]} if len(ours["groups"]) > 1 else {"all": ours}
    for group, metrics in groups.items():
        for key, their_key in SCORER_KEYS.items():
            if metrics[key] != theirs[group][their_key]:
                print(f"MISMATCH {label}/{group} {key}: ours {metrics[key]} "
                      f"score.py {theirs[group][their_key]}", file=sys.stderr)
        members = [q for q in questions if group == "all" or q["id"].startswith(group + "-")]
        ids = {q["id"] for q in members}
        metrics["chars"] = text_per_hit(members, [r for r in run if r["id"] in ids])
        metrics["back"] = back_matter_share(members, [r for r in run if r["id"] in ids])
        metrics["abstention"] = evaluation.abstention(members, [r for r in run if r["id"] in ids])
    return groups


def first_ranks(questions: list[dict[str, Any]], run: list[dict[str, Any]]
                ) -> dict[str, tuple[int | None, int | None, bool]]:
    """Per answerable question: the 1-based rank of its first hit and of its first strict
    hit (None: not in the run), and whether the search flagged it."""
    by_id = {record["id"]: record for record in run}
    out = {}
    for q in questions:
        if not q.get("answerable", True) or q["id"] not in by_id:
            continue
        results = by_id[q["id"]]["results"]
        judged = [evaluation.judge(q, r) for r in results]
        out[q["id"]] = (next((i + 1 for i, (h, _) in enumerate(judged) if h), None),
                        next((i + 1 for i, (_, s) in enumerate(judged) if s), None),
                        bool(by_id[q["id"]].get("abstained")))
    return out


def print_changes(label: str, questions: list[dict[str, Any]], run: list[dict[str, Any]],
                  earlier: Path) -> None:
    """The questions whose first hit, first strict hit or flag differ from an earlier run
    file (``--against``), as ``id  hit/strict[F]  →  hit/strict[F]  question``."""
    if not earlier.is_file():
        print(f"[{label}] no earlier run {earlier}", file=sys.stderr)
        return
    before = first_ranks(questions, [json.loads(line) for line in
                                     earlier.read_text(encoding="utf-8").splitlines()])
    after = first_ranks(questions, run)
    text = {q["id"]: q["question"] for q in questions}

    def cell(ranks: tuple[int | None, int | None, bool] | None) -> str:
        if ranks is None:
            return "absent"
        hit, strict, flagged = ranks
        return f"{hit or '-'}/{strict or '-'}{'F' if flagged else ''}"

    for qid in after:
        if before.get(qid) != after[qid]:
            print(f"{label}  {qid}  {cell(before.get(qid))}  →  {cell(after[qid])}  "
                  f"{text[qid][:70]}")


def evaluate(dev: DevSet, config: Config, modes: list[str], overrides: dict[str, Any],
             suffix: str, against: Path | None = None, case: str = "as-written"
             ) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Run and score every mode; rows of (set, mode, group, metrics)."""
    questions = load_questions(dev, case)
    query_config = config.with_overrides(**{k: v for k, v in overrides.items()
                                           if k not in INGEST_KEYS})
    rows = []
    # Not read-only: opening read-write applies any schema migration to a cached library.
    with Library.open(config=query_config, embedder=caching_embedder(config)) as lib:
        for mode in modes:
            started = time.perf_counter()
            run = evaluation.run_questions(lib, questions, mode=mode, top_k=10)
            seconds = time.perf_counter() - started
            label = f"{dev.name}{suffix}-{mode}" + ("-lower" if case == "lower" else "")
            if against is not None:
                print_changes(label, questions, run, against / f"{label}.jsonl")
            for group, metrics in score(dev, label, questions, run).items():
                rows.append((dev.name + suffix + ("-lower" if case == "lower" else ""),
                             mode, group, metrics))
            print(f"[{label}] {len(questions)} questions in {seconds:.1f}s", file=sys.stderr)
    return rows


def _rate(abstention: dict[str, Any], kind: str) -> str:
    total = abstention[kind]
    return f"{abstention[kind + '_abstained']}/{total}" if total else "-"


def _f(value: float | None, digits: int = 3) -> str:
    """A metric, or "-" for a group without answerable questions (e.g. same-topic ones)."""
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[tuple[str, str, str, dict[str, Any]]]) -> str:
    lines = ["| set | mode | questions | R@1 | R@5 | R@10 | MRR@10 | strict R@5 | strict MRR "
             "| chars/hit | back matter | flagged answerable | flagged unanswerable |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, mode, group, m in rows:
        lines.append(f"| {label} | {mode} | {group} | {_f(m['recall@1'])} | "
                     f"{_f(m['recall@5'])} | {_f(m['recall@10'])} | {_f(m['mrr@10'])} | "
                     f"{_f(m['strict_recall@5'])} | {_f(m['strict_mrr@10'])} | "
                     f"{_f(m['chars'], 0)} | {m['back']:.1%} | "
                     f"{_rate(m['abstention'], 'answerable')} | "
                     f"{_rate(m['abstention'], 'unanswerable')} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="squad",
                    help="comma-separated: squad, distractors, books, markdown, fastify, hatch, "
                         "pymdown")
    ap.add_argument("--modes", default="hybrid,vector,keyword")
    ap.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="KEY=VALUE", help="override a config key (repeatable)")
    ap.add_argument("--tune", action="append", default=[], metavar="MODULE.NAME=JSON",
                    help="set a module constant for this run (repeatable)")
    ap.add_argument("--variant", default="",
                    help="name of a variant: its own cached libraries and run files")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached libraries")
    ap.add_argument("--postgres", metavar="URL", default=None,
                    help="build and query the libraries in this PostgreSQL server")
    ap.add_argument("--against", metavar="DIR", type=Path, default=None,
                    help="print each question whose first hit or strict hit or flag moved "
                         "from the run file of the same name in DIR (e.g. a copy of OUT/runs)")
    ap.add_argument("--question-case", choices=QUESTION_CASES, default="as-written",
                    help="ask the questions as written or in lower case")
    args = ap.parse_args()
    if not (BENCH / "score.py").is_file():
        print(f"skipped: the shared bench is not at {BENCH}")
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    overrides = parse_overrides(args.overrides)
    apply_tunes(args.tune)
    suffix = f"-{args.variant}" if args.variant else ""
    known = dev_sets()
    rows = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in known:
            raise SystemExit(f"unknown set {name!r}; use {', '.join(known)}")
        if known[name].fetch is not None:
            known[name] = replace(known[name], files=known[name].fetch())
        if args.postgres:
            config = build_server_library(known[name], overrides, suffix, args.postgres)
            rows += evaluate(known[name], config, modes, overrides, suffix + "-postgres",
                             args.against, args.question_case)
        else:
            config = build_library(known[name], overrides, suffix, rebuild=args.rebuild)
            rows += evaluate(known[name], config, modes, overrides, suffix, args.against,
                             args.question_case)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
