"""``ingest --force FILE`` through the CLI: a re-cut keeps the book's own slug and name,
a moved file's re-cut follows the move and says so, a refused re-cut changes nothing, and
replacing a live copy's book never happens without a warning naming it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from db_state import snapshot
from grimoire_beholder.cli.entry import app
from mcp_helpers import write_config

TEXT = "# Runbook\n\nPage the on-call engineer through the pager rota before midnight.\n"


def _cli(config: Path, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "-c", str(config)])


def _books(config: Path) -> dict[str, tuple[int, str, str]]:
    """slug → (id, name, file) of every book, as `list --json` and the database say."""
    listed = json.loads(_cli(config, "list", "--json").stdout)
    conn = sqlite3.connect(config.parent / "book.db")
    paths = dict(conn.execute("SELECT id, source_path FROM books").fetchall())
    conn.close()
    return {b["slug"]: (b["id"], b["name"], paths[b["id"]]) for b in listed}


def test_force_recut_keeps_a_named_books_slug_and_name(tmp_path: Path) -> None:
    """A book given ``--name`` earlier is re-cut under that name: ``--force`` without
    ``--name`` once tried to rename it after its title and was refused when another book
    held the title's slug."""
    config = write_config(tmp_path)
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text(TEXT)
    second.write_text(TEXT + "\nThe rota changes on Mondays.\n")
    assert _cli(config, "ingest", str(first)).exit_code == 0
    assert _cli(config, "ingest", str(second), "--name", "Night Rota").exit_code == 0
    before = _books(config)
    forced = _cli(config, "ingest", "--force", str(second))
    assert forced.exit_code == 0, forced.stderr
    assert forced.stdout.startswith("night-rota: replaced")
    assert _books(config) == before


def test_force_on_a_file_moved_out_of_its_folder_recuts_its_book(tmp_path: Path) -> None:
    """The same bytes in two followed folders are two books; one file moved out of its
    folder and forced is re-cut in place (id, slug, name kept; now a single file's book) and
    the CLI says where it moved from — the other folder's book untouched."""
    config = write_config(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (two / "runbook.md").write_text(TEXT)
    (one / "runbook.md").write_text(TEXT)
    assert _cli(config, "ingest", str(two)).exit_code == 0
    assert _cli(config, "ingest", str(one)).exit_code == 0
    before = _books(config)
    assert set(before) == {"runbook", "runbook-2"}
    moved = tmp_path / "elsewhere" / "runbook.md"
    moved.parent.mkdir()
    (one / "runbook.md").rename(moved)
    forced = _cli(config, "ingest", "--force", str(moved))
    assert forced.exit_code == 0, forced.stderr
    assert forced.stdout.startswith(
        f"runbook-2: replaced; its file moved from {one / 'runbook.md'}")
    assert _books(config) == {**before, "runbook-2": (*before["runbook-2"][:2], str(moved))}


def test_a_refused_recut_of_a_moved_file_leaves_the_library_unchanged(tmp_path: Path) -> None:
    """``--force --name`` another book's slug on a moved file: refused in one line, and the
    book does not follow the move either (it used to, before the refusal)."""
    config = write_config(tmp_path)
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.md").write_text("# Garden\n\nTurn the compost heap every week.\n")
    for name in ("a.md", "b.md"):
        assert _cli(config, "ingest", str(tmp_path / name)).exit_code == 0
    moved = tmp_path / "moved.md"
    (tmp_path / "a.md").rename(moved)
    before = snapshot(tmp_path / "book.db")
    refused = _cli(config, "ingest", "--force", "--name", "garden", str(moved))
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: slug 'garden' is taken by another book")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert snapshot(tmp_path / "book.db") == before


def test_force_on_a_copy_names_the_live_book_it_replaces(tmp_path: Path) -> None:
    """A copy of a file whose book is still in place, forced: that book is replaced (a
    different file taking its slug, as the README says) with a warning naming it and its
    file — it used to vanish without a word."""
    config = write_config(tmp_path)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "runbook.md").write_text(TEXT)
    assert _cli(config, "ingest", str(folder)).exit_code == 0
    (old_id, _, _), = _books(config).values()
    copy = tmp_path / "copy.md"
    shutil.copy(folder / "runbook.md", copy)
    forced = _cli(config, "ingest", "--force", str(copy), "--json")
    assert forced.exit_code == 0, forced.stderr
    warning = (f"replaced 'runbook' (id {old_id}), the book of {folder / 'runbook.md'}, "
               "which has the same bytes")
    assert json.loads(forced.stdout)["warnings"] == [warning]
    assert forced.stderr.strip() == f"warning: {warning}"


def test_a_name_of_only_spaces_is_refused(tmp_path: Path) -> None:
    """``--name "   "`` (or a line break) is a usage error, as ``--name ""`` is: it renamed
    a book after its file's stem, and later was silently taken as no name."""
    config = write_config(tmp_path)
    book = tmp_path / "ops-notes.md"
    book.write_text(TEXT)
    assert _cli(config, "ingest", str(book), "--name", "  \n ").exit_code == 2
    assert _cli(config, "ingest", str(book)).exit_code == 0
    added = _books(config)
    assert [(slug, name) for slug, (_, name, _) in added.items()] == [("runbook", "Runbook")]
    book.write_text(TEXT + "\nThe rota changes on Mondays.\n")
    forced = _cli(config, "ingest", "--force", str(book), "--name", "   ")
    assert forced.exit_code == 2
    assert "replaced" not in forced.stdout
    assert _books(config) == added
