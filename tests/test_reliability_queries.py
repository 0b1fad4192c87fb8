"""Hostile queries: through the real CLI (`query`, `--json`) and through Library.search.

Whatever the text or the filters, the answer is results, an empty list, or a one-line
``error: …`` with a non-zero exit — never a traceback — and the database is unchanged
afterwards (a dump of every table, FTS shadow tables included, compared before and after).
FTS5 syntax in user text must never become a syntax error or an injection: the keyword arm
quotes every term.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from db_state import snapshot
from grimoire_beholder.errors import BookNotFoundError, GrimoireError
from grimoire_beholder.library import Library
from helpers import run_cli, write_markdown_book

CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
embedding_backend = "fake"
llm_backend = "none"
chunk_size = 80
chunk_overlap = 10
"""

HOSTILE_TEXTS: list[str] = [
    # FTS5 operators, syntax and punctuation
    'lighthouse AND lamp', "lamp OR", "NOT lamp", "lamp NEAR(fog, 2)", '"unbalanced quote',
    "lamp*", "*", "^lamp", "text: lamp", "{text context}: lamp", "lamp -fog", "(((", ")))",
    "a:b:c", '""', "''", "+-*/%^&|~!@#$", "NEAR", "AND OR NOT", "col:", "-", ":", "\"\"\"",
    "lamp + fog", "l'amp d\"oil", "[lamp]", "lamp;", "\\", "%", "_", "lamp%", "?",
    # SQL-looking strings
    "'; DROP TABLE books; --", "\"; DELETE FROM chunks; --", "1 OR 1=1", "') OR ('1'='1",
    "x'); ATTACH DATABASE '/tmp/pwn.db' AS pwn; --", "UNION SELECT * FROM embeddings",
    "chunks_fts MATCH '*'", "rowid = 1",
    # empty, whitespace, control characters, NUL, emoji, odd unicode
    "", " ", "\t\n  \r", "\x00", "lamp\x00fog", "\x01\x02\x03\x1b[31mred\x1b[0m",
    "\u200b\u200b", "\ufeff", "🔦💡🌊", "lamp 🔦 fog", "灯台の灯り", "ﬁre ＬＡＭＰ", "\u202etxet",
    "e\u0301\u0301\u0301", "\U0010ffff", "a" * 5000, "lamp " * 2000,
    # 100 KB
    "fog and lamp " * 8000,
    ("x" * 99 + " ") * 1024,
]
FILTERS: list[list[str]] = [
    ["--book", "no-such-book"], ["--book", "0"], ["--book", "-1"], ["--book", "99999999999"],
    ["--book", "'; DROP TABLE books; --"], ["--book", "9" * 25], ["--book", "²"],
    ["--author", "Nobody"], ["--author", "%"],
    ["--author", "'"], ["--type", "docx"], ["--type", ""], ["--type", "PDF"],
    ["--mode", "telepathy"], ["--mode", ""], ["--mode", "KEYWORD"], ["--mode", "keyword"],
    ["--mode", "vector"], ["--top-k", "0"], ["--top-k", "-1"], ["--top-k", str(10**9)],
    ["--top-k", "1"], ["--top-k", str(10**30)],
    ["--book", "the-beacon-book", "--author", "Test Author", "--type", "markdown",
     "--mode", "hybrid", "--top-k", "3"],
]


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lib")
    (folder / "config.toml").write_text(CONFIG)
    book = write_markdown_book(folder / "beacon.md", "The Beacon Book", {
        "Light": {"Lamp": "The lamp burns oil behind a lens; fog hides it. " * 12,
                  "Lens": "A Fresnel lens bends light into a beam. " * 12},
        "Weather": {"Fog": "Fog rolls in at dawn and the horn sounds. " * 12},
    })
    with Library.open(folder / "config.toml") as lib:
        lib.ingest(book)
    return folder




def run_query(lib: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """argv cannot carry NUL bytes; the test passes those through Library.search instead."""
    env = {**os.environ, "COLUMNS": "10000"}
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", "query", *args],
                          cwd=lib, env=env, capture_output=True, timeout=60)


def check_cli(proc: subprocess.CompletedProcess[bytes], *, as_json: bool) -> None:
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    if proc.returncode == 0:
        if as_json:
            data = json.loads(proc.stdout)
            assert isinstance(data["results"], list)
        return
    lines = stderr.strip().splitlines()
    if proc.returncode == 2 and lines[0].startswith("Usage:"):
        return  # the argument parser's own usage error (see test_usage_error_is_one_line)
    assert len(lines) == 1, stderr
    if as_json:  # under --json the error is one JSON object naming the exit code
        error = json.loads(lines[0])
        assert error["exit_code"] == proc.returncode and error["error"], stderr
        assert proc.stdout == b"", proc.stdout
        return
    assert lines[0].startswith("error: "), stderr


@pytest.fixture(scope="module")
def opened(lib_dir: Path) -> Iterator[Library]:
    with Library.open(lib_dir / "config.toml") as lib:
        yield lib


def test_hostile_texts_through_library_search(lib_dir: Path, opened: Library) -> None:
    before = snapshot(lib_dir / "book.db")
    outcomes = {"results": 0, "empty": 0, "error": 0}
    for text in HOSTILE_TEXTS:
        for mode in (None, "keyword", "vector", "hybrid"):
            try:
                results = opened.search(text, mode=mode)
            except GrimoireError as exc:
                assert "\n" not in str(exc) and str(exc)
                outcomes["error"] += 1
                continue
            outcomes["results" if results.hits else "empty"] += 1
            json.dumps(results.to_dict())  # always serialisable (MCP and --json rely on it)
    assert outcomes["results"] > 0 and outcomes["error"] > 0  # "" is refused, words found
    assert snapshot(lib_dir / "book.db") == before
    books = opened.list_books()
    assert [b.slug for b in books] == ["the-beacon-book"]


def test_filters_through_library_search(lib_dir: Path, opened: Library) -> None:
    before = snapshot(lib_dir / "book.db")
    cases: list[dict[str, object]] = [
        {"book": "nope"}, {"book": 0}, {"book": -5}, {"book": 10**12}, {"author": "Nobody"},
        {"author": ""}, {"source_type": "docx"}, {"source_type": ""}, {"mode": "telepathy"},
        {"mode": ""}, {"top_k": 0}, {"top_k": -1}, {"top_k": 10**9}, {"top_k": 10**30},
        {"book": "'; DROP TABLE books; --"}, {"author": "' OR 1=1 --"},
    ]
    for kwargs in cases:
        try:
            results = opened.search("lamp fog", **kwargs)  # type: ignore[arg-type]
        except GrimoireError as exc:
            assert "\n" not in str(exc), exc
        else:
            assert isinstance(results.hits, list)
            if kwargs.get("author") == "Nobody" or kwargs.get("source_type") == "docx":
                assert results.hits == []
    assert snapshot(lib_dir / "book.db") == before


def test_nul_and_lone_surrogates_through_library_search(opened: Library) -> None:
    """A NUL or a lone surrogate (what a badly decoded argument or JSON string carries) is
    no word: every mode answers as for the rest of the text, and only NULs find nothing."""
    for text, words in (("lamp\x00", "lamp"), ("\ud800 lamp", "lamp"), ("fog \udfff", "fog")):
        for mode in ("keyword", "vector", "hybrid"):
            got, want = opened.search(text, mode=mode), opened.search(words, mode=mode)
            assert want.hits and [(h.section, h.text) for h in got.hits] == [
                (h.section, h.text) for h in want.hits], (text, mode)
            assert json.loads(json.dumps(got.to_dict()))["query"] == text
    assert opened.search("\x00\x00", mode="keyword").hits == []


@pytest.mark.slow  # every text through the CLI, a sample in real subprocesses
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_hostile_texts_through_the_cli(lib_dir: Path, as_json: bool) -> None:
    """Every text through the CLI's own code (parsing, error mapping, rendering) in-process,
    and a sample through a real subprocess (what a user's shell sees)."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app

    before = snapshot(lib_dir / "book.db")
    # argv cannot hold NUL; every other text goes through the real command line.
    texts = [t for t in HOSTILE_TEXTS if "\x00" not in t and "\U0010ffff" not in t]
    extra = ["--json"] if as_json else []
    config = ["--config", str(lib_dir / "config.toml")]
    runner = CliRunner()
    for text in texts:
        result = runner.invoke(app, ["query", *config, *extra, "--", text])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            text, result.exception)
        check_cli(subprocess.CompletedProcess([], result.exit_code, result.stdout_bytes,
                                              result.stderr_bytes), as_json=as_json)
    for text in texts[int(as_json)::9]:
        check_cli(run_query(lib_dir, *extra, "--", text), as_json=as_json)
    assert snapshot(lib_dir / "book.db") == before


@pytest.mark.parametrize("flags", FILTERS, ids=lambda f: " ".join(f)[:40])
def test_filters_through_the_cli(lib_dir: Path, flags: list[str]) -> None:
    """Through the script's entry point in-process (the subprocess path is the texts' test)."""
    before = snapshot(lib_dir / "book.db")
    run = run_cli("query", "lamp", *flags, "--json", cwd=lib_dir, env={"COLUMNS": "10000"})
    proc = subprocess.CompletedProcess([], run.returncode, run.stdout.encode(),
                                       run.stderr.encode())
    check_cli(proc, as_json=True)
    if proc.returncode == 0 and flags[:2] in (["--author", "Nobody"], ["--type", "docx"],
                                              ["--book", "no-such-book"]):
        assert json.loads(proc.stdout)["results"] == []
    assert snapshot(lib_dir / "book.db") == before


def test_the_book_table_survives_the_injection_attempts(lib_dir: Path) -> None:
    conn = sqlite3.connect(lib_dir / "book.db")
    try:
        assert conn.execute("SELECT slug FROM books").fetchall() == [("the-beacon-book",)]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert not Path("/tmp/pwn.db").exists()


def test_usage_error_is_one_line(lib_dir: Path) -> None:
    proc = run_query(lib_dir, "lamp", "--top-k", "abc")
    assert proc.returncode != 0
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")


@pytest.mark.parametrize("ref", ["9" * 25, 2**70, "²", "٣"])
def test_an_id_sqlite_cannot_hold_is_no_such_book(lib_dir: Path, opened: Library,
                                                  ref: str | int) -> None:
    """Past 2**63 SQLite raises OverflowError; "²" passes str.isdigit but not int()."""
    for call in (lambda: opened.book(ref), lambda: opened.section(ref, 0, 0),
                 lambda: opened.search("lamp", book=ref)):
        with pytest.raises(BookNotFoundError):
            call()
    proc = subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", "delete", str(ref),
                           "--yes"], cwd=lib_dir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith("error: no book"), proc.stderr

