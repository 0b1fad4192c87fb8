"""A Calibre library as a source: the fixture libraries made by calibredb itself
(tests/data/calibre/build.py: ``before/``, and ``after/`` a ``set_metadata`` and a
``remove`` later), and — where Calibre is installed — a library built here from the
bench's real books."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes import FakeEmbedder
from grimoire_beholder import Library
from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import GrimoireError
from helpers import fake_config
from mcp_helpers import write_config

DATA = Path(__file__).parent / "data" / "calibre"
BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench" / "books"


def _library(tmp_path: Path, state: str = "before") -> Path:
    """A copy of a fixture state, in a folder named as Calibre names its default one."""
    folder = tmp_path / "Calibre Library"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(DATA / state, folder)
    return folder


def _cli(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _builder():  # type: ignore[no-untyped-def]
    """The fixture's builder, for its EPUB writer (a replaced format is written alike)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("calibre_fixture", DATA / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_ingest_a_calibre_library_then_follow_its_edits(tmp_path: Path) -> None:
    folder = _library(tmp_path)
    config = str(write_config(tmp_path))
    before = _digest(folder / "metadata.db")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    assert "is a Calibre library" in result.stderr
    assert "The Old Almanac [4]: no format grimoire-beholder can read (MOBI)" in result.output
    books = {b["name"]: b for b in _cli("list", "--config", config)}
    assert set(books) == {"Tide Tables of the North", "Signal Lamps at Night",
                          "Orchard Pruning"}
    assert books["Signal Lamps at Night"]["author"] == "Mara Quill & Tom Wick"
    tides = books["Tide Tables of the North"]
    assert (tides["tags"], tides["series"], tides["metadata"]["series_index"]) == (
        ["navigation", "sea"], "Coastal Guides", 1.0)
    assert (tides["metadata"]["publisher"], tides["metadata"]["isbn"],
            tides["metadata"]["language"]) == ("Harbour Press", "9780000000019", "eng")
    assert books["Orchard Pruning"]["source_type"] == "epub"  # EPUB before its PDF
    assert tides["link"] == "calibre://show-book/_hex_-43616C69627265204C696272617279/1"
    assert _digest(folder / "metadata.db") == before
    from grimoire_beholder.cli.rendering import books_table

    table = books_table(list(books.values()), 200)
    assert "Coastal Guides #1 · navigation, sea" in table and "labels" in table

    hits = _cli("query", "when is the range between high and low water greatest",
                "--tag", "sea", "--config", config)["results"]
    assert hits and {h["book"] for h in hits} <= {"Tide Tables of the North",
                                                  "Signal Lamps at Night"}
    assert hits[0]["link"].startswith("calibre://show-book/")
    garden = _cli("query", "tide", "--tag", "garden", "--config", config)["results"]
    assert {h["book"] for h in garden} == {"Orchard Pruning"}
    series = _cli("query", "lamp", "--series", "coastal guides", "--config", config)
    assert {h["slug"] for h in series["results"]} <= {"tide-tables-of-the-north",
                                                     "signal-lamps-at-night"}
    wrong = CliRunner().invoke(app, ["query", "tide", "--tag", "poetry", "--config", config])
    assert wrong.exit_code != 0 and "no book has the tag 'poetry'" in wrong.output
    assert "garden" in wrong.output

    # Calibre retitled book 1 (renaming its folder) and removed book 2: the retitled book
    # is read again under its new title, as a new book would be (its contexts name it).
    folder = _library(tmp_path, "after")
    dry = _cli("sync", "--dry-run", "--config", config)  # says what the sync will embed
    assert dry["dry_run"] and dry["chunks_embedded"] == tides["chunks"] > 0
    assert {b["name"] for b in _cli("list", "--config", config)} == set(books)
    report = _cli("sync", "--config", config)
    assert {f["path"]: f["action"] for f in dry["files"]} == {
        f["path"]: f["action"] for f in report["files"]}
    assert report["chunks_embedded"] == tides["chunks"]
    actions = {f["path"]: f["action"] for f in report["files"]}
    assert actions["Tide Tables of the Far North [1]"] == "updated"
    assert actions["signal-lamps-at-night [2]"] == "removed"
    assert actions["Orchard Pruning [3]"] == "unchanged"
    books = {b["name"]: b for b in _cli("list", "--config", config)}
    assert set(books) == {"Tide Tables of the Far North", "Orchard Pruning"}
    assert books["Tide Tables of the Far North"]["tags"] == ["sea", "tides"]
    hits = _cli("query", "neap tide", "--mode", "keyword", "--config", config)["results"]
    assert hits[0]["book"] == "Tide Tables of the Far North"
    contexts = [h["context"] for h in _cli("query", "tide", "--book", tides["slug"],
                                           "--top-k", "100", "--config", config)["results"]]
    assert contexts and all(c.startswith("Tide Tables of the Far North") for c in contexts)
    assert _cli("sync", "--config", config)["counts"]["unchanged"] == 2


def test_a_replaced_format_is_rechunked_in_place(tmp_path: Path) -> None:
    """Calibre's 'add format, replace': the book keeps its id and only what changed is
    embedded again."""
    build = _builder()
    folder = _library(tmp_path)
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest_folder(folder)
        orchard = lib.book("orchard-pruning")
        chapters = {**build.ORCHARD, "Summer pruning": "Prune cordons in August, cutting "
                    "the side shoots back to one leaf."}
        build._epub(Path(orchard.source_path), "Orchard Pruning", "Ivy Stone", chapters)
        preview = next(f for f in lib.sync(dry_run=True).files if f.slug == "orchard-pruning")
        assert (preview.action, preview.embedded, preview.reused) == ("changed", 1, 1)
        report = lib.sync()
        outcome = next(f for f in report.files if f.slug == "orchard-pruning")
        assert (outcome.action, outcome.embedded, outcome.reused) == ("changed", 1, 1)
        assert lib.book("orchard-pruning").id == orchard.id
        hit = lib.search("cordons in August", top_k=1, tag="garden").hits[0]
        assert hit.slug == "orchard-pruning" and hit.link and hit.link.endswith("/3")


def test_filters_refuse_unknown_labels_and_plain_libraries(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        note = tmp_path / "note.md"
        note.write_text("# Note\n\nA plain note about tides.\n")
        lib.ingest(note)
        with pytest.raises(GrimoireError, match="no book in this library has a collection"):
            lib.search("tides", collection="Ocean Physics")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("calibredb") is None or not BENCH.is_dir(),
                    reason="needs Calibre's calibredb and ../shared/bench")
def test_a_library_calibredb_builds_from_bench_books(tmp_path: Path) -> None:
    """The bar as a person meets it: calibredb adds two bench books with tags and a
    series; after set_metadata and remove, sync follows, reading the retitled book again
    under its new title (its contexts name it)."""
    folder = tmp_path / "Books"

    def calibredb(*args: str) -> str:
        return subprocess.run(["calibredb", "--with-library", str(folder), *args],
                              check=True, capture_output=True, text=True).stdout

    calibredb("add", "--tags", "strategy,classics", "--series", "Military Classics",
              "--series-index", "1", str(BENCH / "sun-tzu_the-art-of-war_lionel-giles.epub"))
    calibredb("add", "--tags", "linux", str(BENCH / "live-manual.en.pdf"))
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert result.exit_code == 0, result.output
    books = {b["link"].rsplit("/", 1)[1]: b for b in _cli("list", "--config", config)}
    assert books["1"]["author"] == "Sun Tzu" and books["1"]["series"] == "Military Classics"
    hits = _cli("query", "attack by fire", "--tag", "strategy", "--config", config)["results"]
    assert hits and {h["book_id"] for h in hits} == {books["1"]["id"]}
    calibredb("set_metadata", "1", "--field", "title:The Art of War (Giles)")
    calibredb("remove", "--permanent", "2")
    report = _cli("sync", "--config", config)
    assert report["chunks_embedded"] == books["1"]["chunks"]
    assert report["counts"]["removed"] == 1
    assert [b["name"] for b in _cli("list", "--config", config)] == ["The Art of War (Giles)"]


def test_a_deleted_library_book_stays_deleted_on_sync(tmp_path: Path) -> None:
    """`delete` of a Calibre book is the reader's word: `sync` and `ingest LIBRARY` again
    leave that item out (as for a loose folder), while the others are still followed."""
    folder = _library(tmp_path)
    config = str(write_config(tmp_path))
    assert CliRunner().invoke(app, ["ingest", str(folder), "--config", config]).exit_code == 0
    gone = CliRunner().invoke(app, ["delete", "orchard-pruning", "--yes", "--config", config])
    assert gone.exit_code == 0, gone.output
    report = _cli("sync", "--config", config)
    assert "Orchard Pruning" not in {b["name"] for b in _cli("list", "--config", config)}
    assert not [f for f in report["files"] if f["action"] == "added"]
    again = CliRunner().invoke(app, ["ingest", str(folder), "--config", config])
    assert again.exit_code == 0, again.output
    assert "left out 1 item(s) whose books were deleted" in again.stderr
    names = {b["name"] for b in _cli("list", "--config", config)}
    assert names == {"Tide Tables of the North", "Signal Lamps at Night"}
    folder = _library(tmp_path, "after")  # the other items are still followed
    _cli("sync", "--config", config)
    assert {b["name"] for b in _cli("list", "--config", config)} == {
        "Tide Tables of the Far North"}


@pytest.mark.parametrize("calibre_first", [True, False])
def test_a_calibre_library_inside_a_synced_folder_is_one_book_a_file(
        tmp_path: Path, calibre_first: bool) -> None:
    """~/Books followed as a folder, its Calibre Library ingested as a Calibre library: each
    of Calibre's files was a book twice (once the folder's, once Calibre's, with a slug
    ending -2), and a format Calibre does not choose (Orchard Pruning's PDF beside its EPUB)
    a book of the folder's. The Calibre library owns its files, whichever came first."""
    books = tmp_path / "Books"
    books.mkdir()
    folder = _library(books)
    (books / "notes.md").write_text("# Notes\n\nTides and lamps, noted.\n", encoding="utf-8")
    config = str(write_config(tmp_path))
    runner = CliRunner()
    order = [folder, books] if calibre_first else [books, folder]
    said = [runner.invoke(app, ["ingest", str(path), "--config", config]) for path in order]
    assert all(r.exit_code == 0 for r in said), [r.output for r in said]
    synced = runner.invoke(app, ["sync", "--config", config])
    assert synced.exit_code == 0, synced.output
    listed = {b["slug"]: b for b in _cli("list", "--config", config)}
    assert set(listed) == {"notes", "tide-tables-of-the-north", "signal-lamps-at-night",
                           "orchard-pruning"}, sorted(listed)
    assert listed["orchard-pruning"]["source_type"] == "epub"
    assert listed["tide-tables-of-the-north"]["tags"] == ["navigation", "sea"]
    told = said[1].stderr + said[1].output
    if calibre_first:
        assert "left out" in told and "the Calibre library there is followed on its own" in told
    else:
        assert "removed 4 book(s) a synced folder had made of its files" in told
    assert "followed on its own" not in synced.stderr + synced.output  # said once
