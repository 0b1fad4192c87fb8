"""A hostile user and the persisted search index: damage, strangers' files, `check`.

The index in ``book.db.search/`` is a cache of the database. Whatever is done to it —
files emptied or garbled, a manifest edited by hand, the folder pointed at someone else's
files — every command must still answer exactly what the database says, writing commands
must rebuild it, nothing the index did not write may be deleted, and ``check`` must say
when its bytes are damaged. Libraries are real files written by the CLI (fake models); the
index threshold is lowered to 0 so a small library gets an index.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grimoire_beholder.search import index_writer
from grimoire_beholder.search import segment_files as seg
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.store import db, fts
from grimoire_beholder.store.transactions import transaction
from index_helpers import cli, ingested_library
from mcp_helpers import write_config

pytestmark = pytest.mark.slow  # CLI subprocesses on 10,000-row libraries

QUERIES = ("lantern fog", "tide and the rope", "storm")


@pytest.fixture(autouse=True)
def _index_small_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, "0")


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """Three books ingested by the CLI, with their search index; returns the config."""
    return ingested_library(tmp_path)


def _answers(config: Path) -> list[list[tuple[str, str, float]]]:
    out = []
    for query in QUERIES:
        for mode in ("keyword", "vector", "hybrid"):
            result = cli(config, "query", query, "--json", "--mode", mode, "-k", "8")
            assert result.exit_code == 0, result.output
            out.append([(h["slug"], h["text"], round(h["score"], 6))
                        for h in json.loads(result.stdout)["results"]])
    return out


def _exact_answers(config: Path, tmp_path: Path) -> list[list[tuple[str, str, float]]]:
    """What the exact arms answer: the same database copied where no index is."""
    exact = tmp_path / "exact"
    exact.mkdir(exist_ok=True)
    with sqlite3.connect(config.parent / "book.db") as src, \
            sqlite3.connect(exact / "book.db") as dst:
        src.backup(dst)
    return _answers(write_config(exact))


def _index_used(config: Path) -> bool:
    path = config.parent / "book.db"
    conn = db.connect(path, read_only=True)
    try:
        return SearchIndex(path).refresh(conn) == "persisted"
    finally:
        conn.close()


def _first_segment(config: Path) -> Path:
    folder = seg.folder_for(config.parent / "book.db")
    manifest = seg.read_manifest(folder)
    assert manifest is not None
    return folder / manifest["segments"][0]["name"]


def _edit_manifest(change: Callable[[dict[str, Any]], object]) -> Callable[[Path], None]:
    def damage(config: Path) -> None:
        path = seg.folder_for(config.parent / "book.db") / seg.MANIFEST
        manifest = json.loads(path.read_text())
        change(manifest)
        path.write_text(json.dumps(manifest))
    return damage


DAMAGE: dict[str, Callable[[Path], None]] = {
    # e.g. an interrupted copy or a sync service's placeholder
    "empty vectors file": lambda c: (_first_segment(c) / "vectors.npy").write_bytes(b""),
    "postings file of another shape": lambda c: np.save(_first_segment(c) / "rows.npy",
                                                        np.zeros((3, 3), np.float32)),
    "manifest without its log position": _edit_manifest(lambda m: m.pop("seq")),
    "manifest whose segments are not a list": _edit_manifest(
        lambda m: m.__setitem__("segments", None)),
    "manifest naming a number as dead file": _edit_manifest(
        lambda m: m["segments"][0].__setitem__("dead", 7)),
    # same size, other bytes: the term directory's checksum is checked at open
    "64 flipped bytes in the term hashes": lambda c: _flip(_first_segment(c) / "term_hash.npy"),
}


def _flip(path: Path, count: int = 64) -> None:
    data = bytearray(path.read_bytes())
    start = len(data) - count  # the last bytes: array data, past the .npy header
    data[start:] = bytes(b ^ 0xA5 for b in data[start:])
    path.write_bytes(bytes(data))


def _set_array(path: Path, change: Callable[[np.ndarray], None]) -> None:
    array = np.load(path)
    change(array)
    np.save(path, array)  # same dtype and shape: same size


@pytest.mark.parametrize("what", ["a posting past the last row", "NaN vectors"])
def test_impossible_values_fall_back_to_the_exact_arms_and_a_write_rebuilds(
        library: Path, tmp_path: Path, what: str) -> None:
    segment = _first_segment(library)
    if what == "NaN vectors":
        _set_array(segment / "vectors.npy", lambda a: a.__setitem__(slice(None), np.nan))
    else:
        _set_array(segment / "rows.npy", lambda a: a.__setitem__(0, 10**6))
    expected = _exact_answers(library, tmp_path)
    answers = _answers(library)  # no traceback; NaN in --json would not parse
    if what != "NaN vectors":  # NaN vectors match nothing: the exact arms find them all
        assert answers == expected
    result = cli(library, "delete", "book-1", "--yes")
    assert result.exit_code == 0, result.output
    ingest = cli(library, "ingest", str(library.parent / "book1.md"), "--quiet")
    assert ingest.exit_code == 0, ingest.output
    assert _answers(library) == _exact_answers(library, tmp_path)


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_index_never_breaks_a_command_and_is_rebuilt(
        library: Path, tmp_path: Path, damage: Callable[[Path], None]) -> None:
    damage(library)
    assert not _index_used(library)
    assert _answers(library) == _exact_answers(library, tmp_path)
    result = cli(library, "delete", "book-1", "--yes")  # a writing command rebuilds it
    assert result.exit_code == 0 and "search index" not in result.output, result.output
    assert _index_used(library)
    assert _answers(library) == _exact_answers(library, tmp_path)


def test_cleaning_the_index_folder_never_deletes_what_it_did_not_write(
        library: Path, tmp_path: Path) -> None:
    folder = seg.folder_for(library.parent / "book.db")
    shutil.rmtree(folder)
    mine = tmp_path / "fast-disk"  # the user keeps the index on another disk, beside
    (mine / "photos").mkdir(parents=True)  # things of their own
    (mine / "photos" / "cat.jpg").write_bytes(b"precious")
    (mine / "notes.txt").write_text("mine")
    folder.symlink_to(mine, target_is_directory=True)
    for command in (("delete", "book-1", "--yes"), ("reindex-fts",)):  # build, then rebuild
        assert cli(library, *command).exit_code == 0
        assert _index_used(library)
    assert (mine / "photos" / "cat.jpg").read_bytes() == b"precious"
    assert (mine / "notes.txt").read_text() == "mine"


def test_check_finds_damaged_index_bytes_that_opening_cannot(library: Path) -> None:
    result = cli(library, "check")
    assert result.exit_code == 0 and "search index: in use" in result.output, result.output
    victim = _first_segment(library) / "vectors.npy"
    data = victim.read_bytes()
    victim.write_bytes(data[:128] + bytes(len(data) - 128))  # same size, vectors zeroed
    result = cli(library, "check", "--json")
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert len(problems) == 1 and "vectors.npy" in problems[0], problems
    assert "book.db.search" in problems[0] and "delete" in problems[0]
    shutil.rmtree(seg.folder_for(library.parent / "book.db"))  # as the problem says
    result = cli(library, "check")
    assert result.exit_code == 0 and "search index: missing" in result.output, result.output
    assert cli(library, "sync").exit_code == 0  # any writing command rebuilds it
    result = cli(library, "check")
    assert result.exit_code == 0 and "search index: in use" in result.output, result.output


def test_a_change_to_most_of_the_library_is_rebuilt_not_read_into_memory(
        library: Path, tmp_path: Path) -> None:
    """A whole-library rewrite (``reindex-fts``) must not be re-read chunk by chunk into a
    reader's in-memory delta, nor by the writer before it rebuilds anyway: at 1M chunks that
    re-read costs minutes. Until the writer publishes the rebuilt index, readers answer
    with the exact arms."""
    path = library.parent / "book.db"
    conn = db.connect(path)
    reader = SearchIndex(path)
    assert reader.refresh(conn) == "persisted"
    with transaction(conn):
        fts.rebuild(conn)
    assert reader.refresh(conn) != "persisted"
    assert _answers(library) == _exact_answers(library, tmp_path)
    assert index_writer.update(conn, path) == "built"
    assert reader.refresh(conn) == "persisted"
    conn.close()


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("threshold", ["0", "1000000"], ids=["persisted", "exact"])
def test_nan_vectors_in_the_library_never_reach_the_json(
        library: Path, monkeypatch: pytest.MonkeyPatch, threshold: str) -> None:
    monkeypatch.setenv(index_writer.MIN_ROWS_ENV, threshold)
    with sqlite3.connect(library.parent / "book.db") as conn:
        (dim,) = conn.execute("SELECT length(vector) / 4 FROM embeddings LIMIT 1").fetchone()
        nan = np.full(dim, np.nan, dtype="<f4").tobytes()
        conn.execute("UPDATE embeddings SET vector = ? WHERE chunk_id % 2 = 0", (nan,))
    assert cli(library, "ingest", str(library.parent / "book0.md"), "--force",
                "--quiet").exit_code == 0  # a write: the index is rebuilt from those rows
    for mode in ("vector", "hybrid"):
        result = cli(library, "query", "lantern fog", "--json", "--mode", mode)
        assert result.exit_code == 0, result.output
        for hit in _strict_json(result.stdout)["results"]:
            assert np.isfinite(hit["score"]), hit


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.parametrize("victim", ["term_hash.npy", "vectors.npy", "segment.json",
                                    "manifest.json"])
def test_a_named_pipe_in_the_index_is_damage_not_a_hang(library: Path, victim: str) -> None:
    """A file of the index replaced by a named pipe made ``query`` and ``check`` wait forever
    (issue 24): it is damage like any other — the exact arms answer, a writing command
    rebuilds."""
    folder = seg.folder_for(library.parent / "book.db")
    manifest = seg.read_manifest(folder)
    assert manifest is not None
    path = folder / victim if victim == "manifest.json" else \
        folder / manifest["segments"][0]["name"] / victim
    path.unlink()
    os.mkfifo(path)
    found = cli(library, "query", "lantern fog", "--json")
    assert found.exit_code == 0, found.output
    assert "lantern" in found.stdout
    cli(library, "check")  # answers (damaged or not), without waiting on the pipe
    assert cli(library, "reindex-fts").exit_code == 0
    assert cli(library, "query", "storm", "--json").exit_code == 0
