"""A folder given to ``ingest DIR`` is followed by ``sync``: deleting one of its books keeps
that file out (until it is ingested by name again), and a folder can be unfollowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from grimoire_beholder.errors import InputFileError
from grimoire_beholder.library import Library
from mcp_helpers import write_config


def _notes(root: Path) -> Path:
    notes = root / "notes"
    (notes / "ops").mkdir(parents=True)
    for name, topic in (("lamp.md", "lamp"), ("ops/fog.md", "fog"), ("ops/tide.md", "tide")):
        (notes / name).write_text(f"# The {topic}\n\n" + f"All about the {topic} here. " * 20,
                                  encoding="utf-8")
    (notes / "minutes.odt").write_bytes(b"PK\x03\x04 not read")
    return notes


def _slugs(lib: Library) -> set[str]:
    return {b.slug for b in lib.list_books()}


def test_a_deleted_book_of_a_folder_stays_out_until_ingested_by_name(library: Library,
                                                                      tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    library.ingest_folder(notes)
    fog = next(b for b in library.list_books() if b.source_path.endswith("fog.md"))
    library.delete(fog.slug)
    assert library.sync().counts()["added"] == 0
    assert fog.slug not in _slugs(library)
    again = library.ingest_folder(notes)  # ingesting the folder again says what it left out
    assert again.counts()["added"] == 0
    assert any("whose books were deleted" in w for w in again.warnings)
    library.ingest(notes / "ops" / "fog.md")  # asked for by name: it is back, and followed
    library.sync()
    assert fog.slug in _slugs(library)
    library.delete(fog.slug)
    assert fog.slug not in _slugs(library) and library.sync().counts()["added"] == 0


def test_ingest_dir_names_the_documents_it_does_not_read(library: Library,
                                                         tmp_path: Path) -> None:
    report = library.ingest_folder(_notes(tmp_path))
    assert any("1 .odt file(s)" in w for w in report.warnings), report.warnings
    assert not any(".odt" in w for w in library.sync().warnings)  # said once, not each sync


def test_ingest_dir_says_when_its_globs_leave_out_every_file(library: Library,
                                                            tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    typo = library.ingest_folder(notes, include=("*.mdd",))  # meant *.md
    assert typo.counts()["added"] == 0
    assert any("left out all 3 file(s)" in w for w in typo.warnings), typo.warnings
    kept = library.ingest_folder(notes, include=("*.md",))
    assert kept.counts()["added"] == 3 and not any("left out all" in w for w in kept.warnings)


def test_unfollow_keeps_the_books_and_adds_no_new_file(library: Library,
                                                      tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    library.ingest_folder(notes)
    before = _slugs(library)
    root, books = library.unfollow(notes)
    assert root == str(notes.resolve()) and len(books) == 3
    (notes / "new.md").write_text("# New\n\n" + "A new note about buoys. " * 20)
    (notes / "lamp.md").write_text("# The lamp\n\n" + "The lamp changed. " * 20)
    report = library.sync()
    assert report.counts()["added"] == 0 and report.counts()["changed"] == 1
    assert _slugs(library) == before
    with pytest.raises(InputFileError, match="not a followed folder"):
        library.unfollow(notes)


def test_unfollow_delete_books_from_the_cli(tmp_path: Path) -> None:
    write_config(tmp_path)
    notes = _notes(tmp_path)
    runner = CliRunner()
    lib = ["--library", str(tmp_path)]
    assert runner.invoke(app, ["ingest", str(notes), "-q", *lib]).exit_code == 0
    done = runner.invoke(app, ["unfollow", str(notes), "--delete-books", *lib])
    assert done.exit_code == 0, done.output
    assert "3 books deleted" in done.output
    listed = runner.invoke(app, ["list", "--json", *lib])
    assert listed.output.strip() == "[]"
    wrong = runner.invoke(app, ["unfollow", str(notes), *lib])
    assert wrong.exit_code == 1 and "not a followed folder" in wrong.output


def test_unfollow_delete_and_reindex_speak_json_for_scripts(tmp_path: Path) -> None:
    """`--json` on the commands that change the library: stdout is one JSON object, and an
    error is one JSON line on stderr (before, `--json` itself was 'No such option')."""
    import json

    write_config(tmp_path)
    notes = _notes(tmp_path)
    runner = CliRunner()
    lib = ["--library", str(tmp_path)]
    assert runner.invoke(app, ["ingest", str(notes), "-q", *lib]).exit_code == 0
    reindexed = runner.invoke(app, ["reindex-fts", "--json", *lib])
    assert reindexed.exit_code == 0, reindexed.output
    assert json.loads(reindexed.stdout) == {"reindexed_chunks": 3}
    gone = runner.invoke(app, ["delete", "the-lamp", "--yes", "--json", *lib])
    assert gone.exit_code == 0, gone.output
    assert json.loads(gone.stdout)["deleted"]["slug"] == "the-lamp"
    done = runner.invoke(app, ["unfollow", str(notes), "--json", *lib])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["folder"] == str(notes.resolve()) and report["books_deleted"] is False
    assert sorted(b["slug"] for b in report["books"]) == ["the-fog", "the-tide"]
    missing = runner.invoke(app, ["delete", "the-lamp", "--yes", "--json", *lib])
    assert missing.exit_code == 1 and missing.stdout == ""
    assert "no book 'the-lamp'" in json.loads(missing.stderr)["error"]
