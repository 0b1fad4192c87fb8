"""What the CLI says is what happened (or, in a dry run, what will).

* ``sync --dry-run`` after an interrupted sync counts the chunks the real sync will finish;
* the same bytes ingested from a new path: a copy leaves the book on its own file and says
  so; a moved file is followed and the move is named;
* a file named through a symlink: the CLI says where the link points.

The real CLI runs as a subprocess (a sync is killed at a fault point, as in the crash tests).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from db_state import snapshot
from mcp_helpers import cli_command, write_config

pytestmark = pytest.mark.slow  # CLI subprocesses, one killed at a fault point

TOPICS = ["harbour", "lantern", "granite", "orchard", "violin", "glacier"]


def run(lib: Path, *args: str, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    if kill_at:
        env["GRIMOIRE_BEHOLDER_KILL_AT"] = kill_at
    return subprocess.run([*cli_command(), *args], cwd=lib, env=env, capture_output=True,
                          text=True, timeout=120)


def _json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _book(path: Path, topic: str, sections: int = 6) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = [f"# The {topic} book", ""]
    for n in range(sections):
        body += [f"## Part {n}", "", f"All about the {topic} and part {n}: " + " ".join(
            f"{topic}{n} {word}" for word in TOPICS) * 4, ""]
    path.write_text("\n".join(body), encoding="utf-8")
    return path


def test_dry_run_after_an_interrupted_sync_counts_what_sync_will_embed(tmp_path: Path) -> None:
    write_config(tmp_path, "embed_batch_size = 2\n")
    for topic in TOPICS[:3]:
        _book(tmp_path / "notes" / f"{topic}.md", topic)
    assert run(tmp_path, "ingest", "notes", "-q").returncode == 0
    for topic in TOPICS[:3]:  # every section changes: every chunk must be embedded again
        path = tmp_path / "notes" / f"{topic}.md"
        path.write_text(path.read_text().replace("All about", "Everything about"))
    killed = run(tmp_path, "sync", "-q", kill_at="embeddings.commit:2")
    assert killed.returncode != 0  # SIGKILLed mid-embedding, after two commits
    before = snapshot(tmp_path / "book.db")
    preview = _json(run(tmp_path, "sync", "--dry-run", "--json"))
    assert snapshot(tmp_path / "book.db") == before
    real = _json(run(tmp_path, "sync", "--json"))
    assert real["chunks_embedded"] > 0
    assert preview["chunks_embedded"] == real["chunks_embedded"]
    assert preview["counts"] == real["counts"]
    assert {f["path"]: f["embedded"] for f in preview["files"] if f["action"] != "unchanged"} \
        == {f["path"]: f["embedded"] for f in real["files"] if f["action"] != "unchanged"}
    text = run(tmp_path, "sync", "--dry-run").stdout
    assert "0 chunks would embed" in text  # finished now: nothing left to promise


def _ingest_one(lib: Path, path: Path) -> tuple[str, str]:
    proc = run(lib, "ingest", str(path))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip(), proc.stderr


def _book_path(lib: Path) -> str:
    found = _json(run(lib, "query", "harbour lantern", "--json"))
    return str(found["results"][0]["location"]).rsplit(":", 1)[0]


def _library_of_one(lib: Path) -> Path:
    """A library holding ``a/harbour.md`` (and an empty ``b/``); returns that file."""
    write_config(lib)
    original = _book(lib / "a" / "harbour.md", "harbour")
    _ingest_one(lib, original)
    (lib / "b").mkdir()
    return original


def test_a_copy_from_a_new_path_leaves_the_book_on_its_own_file(tmp_path: Path) -> None:
    original = _library_of_one(tmp_path)
    copy = tmp_path / "b" / "harbour-copy.md"
    shutil.copy(original, copy)
    before = snapshot(tmp_path / "book.db")
    out, _ = _ingest_one(tmp_path, copy)
    assert f"already in the library from {original}" in out and "keeps that file" in out
    assert snapshot(tmp_path / "book.db") == before
    assert _book_path(tmp_path) == str(original)


def test_a_moved_file_is_followed_and_the_move_is_named(tmp_path: Path) -> None:
    original = _library_of_one(tmp_path)
    moved = tmp_path / "b" / "harbour.md"
    original.rename(moved)
    out, _ = _ingest_one(tmp_path, moved)
    assert f"its file moved from {original} and the book follows it" in out
    assert _book_path(tmp_path) == str(moved)
    synced = _json(run(tmp_path, "sync", "--json"))
    assert synced["counts"]["unchanged"] == 1 and synced["counts"]["removed"] == 0


def test_a_symlinked_file_says_where_it_points(tmp_path: Path) -> None:
    write_config(tmp_path)
    outside = _book(tmp_path / "elsewhere" / "harbour.md", "harbour")
    link = tmp_path / "shelf" / "harbour.md"
    link.parent.mkdir()
    link.symlink_to(outside)
    out, err = _ingest_one(tmp_path, link)
    assert out.startswith("the-harbour-book: added")
    assert f"note: {link} is a link to {outside}" in err
    report = _json(run(tmp_path, "ingest", str(link), "--json"))
    assert report["warnings"] == [f"{link} is a link to {outside}: that file is the book's "
                                  "(sync follows it)"]
    assert _book_path(tmp_path) == str(outside)
