"""The way into the library: the file check, the one ingest path, what the report says.

* Every path is checked once, up front, for being a readable regular file after links are
  resolved: a named pipe (which would block a read forever), a folder, a link loop or a
  dangling link is a one-line error and the library stays as it was.
* ``ingest FILE``, a folder sync and sync's dry run prepare a file the same way, so a dry
  run predicts what the real run does, failures included.
* On the default (embedded) backend, chunks longer than the model's window are counted and
  the CLI says so — the count used to be read under a name that backend did not have.
* Search notices new data by itself: nothing resets the engine after a write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from db_state import snapshot
from fakes import FakeEmbedder
from grimoire_beholder.errors import InputFileError
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book

TIMEOUT = 180
# The default backends (no embedding_backend line): the embedded all-MiniLM-L6-v2 model.
DEFAULT_BACKEND_CONFIG = """\
[grimoire-beholder]
db_path = "book.db"
llm_backend = "none"
chunk_size = 700
chunk_overlap = 40
"""


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRIMOIRE_BEHOLDER_KILL_AT"}
    env["COLUMNS"] = "10000"  # no wrapping of long lines by rich
    return subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)


def _library_dir(path: Path) -> Path:
    path.mkdir()
    (path / "config.toml").write_text(DEFAULT_BACKEND_CONFIG)
    return path


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library on the default backends holding one small book; tests must not change it."""
    lib_dir = _library_dir(tmp_path_factory.mktemp("seeded") / "lib")
    write_markdown_book(lib_dir / "seed.md", "Seed", {"One": {"Two": "Sails and rigging. " * 9}})
    proc = run_cli(lib_dir, "ingest", "seed.md", "-q")
    assert proc.returncode == 0, proc.stderr
    return lib_dir


def _long_prose(words: int) -> str:
    vocabulary = ["harbour", "tide", "lantern", "keeper", "channel", "buoy", "current", "moon",
                  "ledger", "storm", "fog", "bell", "rope", "anchor", "pilot", "chart", "reef",
                  "gull", "beacon", "shoal"]
    sentences = []
    for i in range(words // 12):
        picked = [vocabulary[(i * 7 + k * 3) % len(vocabulary)] for k in range(11)]
        sentences.append(f"The {' '.join(picked)} number {i}.")
    return " ".join(sentences)


@pytest.mark.slow  # real subprocesses (the embedded model)
def test_long_sections_are_cut_to_fit_the_default_models_window(tmp_path: Path) -> None:
    """On the embedded model a chunk is cut in the model's own pieces, so a long section is
    embedded whole, chunk by chunk, with no chunk split into windows (and no note of it)."""
    lib_dir = _library_dir(tmp_path / "lib")
    long = write_markdown_book(tmp_path / "long.md", "Long Watch",
                               {"Night": {"First watch": _long_prose(600)}})
    proc = run_cli(lib_dir, "ingest", str(long), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "note:" not in proc.stderr, proc.stderr

    longer = write_markdown_book(tmp_path / "longer.md", "Longer Watch",
                                 {"Day": {"Forenoon": _long_prose(650)}})
    report = json.loads(run_cli(lib_dir, "ingest", str(longer), "-q", "--json").stdout)
    assert report["chunks"] >= 3  # 650 words do not fit one 254-piece window
    assert report["windowed"] == 0 and report["embedded"] == report["chunks"]


def _fifo(d: Path) -> Path:
    os.mkfifo(d / "pipe.md")
    return d / "pipe.md"


def _link_to_fifo(d: Path) -> Path:
    (d / "to-pipe.md").symlink_to(_fifo(d))
    return d / "to-pipe.md"


def _dangling(d: Path) -> Path:
    (d / "gone.md").symlink_to(d / "never-there.md")
    return d / "gone.md"


def _loop(d: Path) -> Path:
    (d / "a.md").symlink_to(d / "b.md")
    (d / "b.md").symlink_to(d / "a.md")
    return d / "a.md"


@pytest.mark.parametrize(("make", "reason"), [
    (_fifo, "named pipe"),
    (_link_to_fifo, "named pipe"),
    (_dangling, "not found"),
    (_loop, "loop"),
])
def test_anything_but_a_regular_file_is_refused_in_one_line(seeded: Path, tmp_path: Path,
                                                             make: object,
                                                             reason: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    before = snapshot(seeded / "book.db")
    proc = run_cli(seeded, "ingest", str(path), "-q")  # a read of the pipe would hang here
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert path.name in lines[0] and reason in lines[0]
    assert snapshot(seeded / "book.db") == before


def test_parsers_refuse_a_named_pipe_without_reading_it(tmp_path: Path) -> None:
    from grimoire_beholder.parse import parse_file
    from grimoire_beholder.parse.epub import parse_epub
    from grimoire_beholder.parse.pdf import parse_pdf

    for name, parse in (("p.md", parse_file), ("p.pdf", parse_pdf), ("p.epub", parse_epub)):
        os.mkfifo(tmp_path / name)
        with pytest.raises(InputFileError, match="named pipe"):
            parse(tmp_path / name)


def test_a_file_without_text_is_refused_by_ingest_and_skipped_alike_by_sync_and_dry_run(
        tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    write_markdown_book(root / "good.md", "Good", {"A": {"B": "Knots and splices. " * 20}})
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(root)
        (root / "headings.md").write_text("# Only\n\n## Headings\n")
        with pytest.raises(InputFileError, match="no text to index"):
            lib.ingest(root / "headings.md")
        planned = {f.path: f for f in lib.sync(dry_run=True).files}
        done = {f.path: f for f in lib.sync().files}
    assert planned["headings.md"].action == done["headings.md"].action == "skipped"
    assert planned["headings.md"].error == done["headings.md"].error
    assert "no text to index" in (done["headings.md"].error or "")


def test_search_follows_writes_without_being_reset(tmp_path: Path) -> None:
    """An engine made before the library had vectors (keyword-only config) starts using
    them once another connection adds some; books added or removed show up either way."""
    config = fake_config(tmp_path, retrieval_mode="keyword")
    garden = write_markdown_book(tmp_path / "garden.md", "Garden",
                                 {"Soil": {"Compost": "Compost turns scraps into humus. " * 9}})
    sea = write_markdown_book(tmp_path / "sea.md", "Sea",
                              {"Tides": {"Neap": "Neap tides follow the half moon. " * 9}})
    with Library.open(config=config, embedder=FakeEmbedder()) as lib, \
            Library.open(config=config, embedder=FakeEmbedder()) as other:
        assert lib.search("compost").note == "the library is empty"
        other.ingest(garden)
        hybrid = lib.search("compost humus", mode="hybrid")
        assert hybrid.mode == "hybrid" and hybrid.note is None
        assert [h.slug for h in hybrid.hits][:1] == ["garden"]
        lib.ingest(sea)
        assert lib.search("neap tides half moon", mode="vector").hits[0].slug == "sea"
        other.delete("sea")
        assert "sea" not in {h.slug for h in lib.search("neap tides", mode="vector").hits}
        lib.delete("garden")
        assert lib.search("compost").note == "the library is empty"


@pytest.mark.slow  # real subprocesses (a kill; the embedded model)
def test_rerun_after_a_kill_says_resumed_then_already_there(tmp_path: Path) -> None:
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    (lib_dir / "config.toml").write_text('[grimoire-beholder]\ndb_path = "book.db"\n'
                                         'embedding_backend = "fake"\n'
                                         'chunk_size = 60\nembed_batch_size = 2\n')
    book = write_markdown_book(tmp_path / "b.md", "Tides",
                               {"Ebb": {f"Part {i}": "Water leaves the shore. " * 30
                                        for i in range(3)}})
    killed = subprocess.run(
        [sys.executable, "-m", "grimoire_beholder.cli.entry", "ingest", str(book), "-q"],
        cwd=lib_dir, env={**os.environ, "GRIMOIRE_BEHOLDER_KILL_AT": "embeddings.commit:1"},
        capture_output=True, text=True, timeout=TIMEOUT)
    assert killed.returncode == -9, killed.stderr
    resumed, again = (run_cli(lib_dir, "ingest", str(book), "-q") for _ in range(2))
    assert resumed.returncode == again.returncode == 0, resumed.stderr + again.stderr
    assert resumed.stdout.startswith("tides: resumed"), resumed.stdout
    assert again.stdout.startswith("tides: already in the library"), again.stdout
