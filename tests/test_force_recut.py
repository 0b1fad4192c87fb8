"""``ingest --force FILE`` re-cuts a book of an ingested folder or a Zotero library in place,
through the real CLI in a subprocess: the book keeps its id, slug and folder (its group
filters it at once) or its library's labels, only the chunks whose text changed are embedded
again, and the next sync finds nothing to do (the folder) or restores what only the library
holds (Zotero's highlights)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import cli_command

PARAGRAPH = ("The canary takes five percent of the traffic for ten minutes before the rest "
             "follows. Roll back with the deploy tool when its error rate doubles. ")


def _cli(library: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*cli_command(), *args, "--library", str(library)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc


def _books(library: Path) -> dict[str, dict[str, Any]]:
    return {b["slug"]: b for b in json.loads(_cli(library, "list", "--json").stdout)}


def _config(library: Path, chunk_size: int) -> None:
    (library / "config.toml").write_text(
        f'[grimoire-beholder]\nembedding_backend = "fake"\nchunk_size = {chunk_size}\n'
        "chunk_overlap = 10\n", encoding="utf-8")


@pytest.mark.slow  # eight CLI processes
def test_force_recuts_a_folder_book_in_place(tmp_path: Path) -> None:
    notes, library = tmp_path / "notes", tmp_path / "library"
    (notes / "ops").mkdir(parents=True)
    library.mkdir()
    runbook = notes / "ops" / "runbook.md"
    runbook.write_text("# Runbook\n\n## Deploys\n\n" + PARAGRAPH * 4 + "\n\n## Pager\n\n"
                       "Page the on-call engineer through the pager rota.\n", encoding="utf-8")
    (notes / "garden.md").write_text("# Garden\n\n## Compost\n\nTurn the heap weekly.\n",
                                     encoding="utf-8")
    _config(library, 256)
    _cli(library, "ingest", str(notes), "--quiet")
    before = _books(library)["runbook"]

    _config(library, 40)  # a chunking change: the Deploys section is cut anew
    done = json.loads(_cli(library, "ingest", "--force", str(runbook), "--json").stdout)
    after = _books(library)["runbook"]
    assert after["id"] == before["id"] == done["book_id"]
    assert (after["source_root"], after["group"]) == (str(notes), "ops")
    assert after["chunks"] > before["chunks"]  # re-cut ...
    assert 0 < done["embedded"] < after["chunks"]  # ... the unchanged Pager chunk kept its vector

    found = json.loads(_cli(library, "query", "pager rota on-call", "--group", "ops",
                            "--json").stdout)["results"]
    assert [h["book_id"] for h in found][:1] == [before["id"]]
    synced = json.loads(_cli(library, "sync", "--json").stdout)
    assert {f["action"] for f in synced["files"]} == {"unchanged"}, synced
    assert _books(library).keys() == {"runbook", "garden"}


@pytest.mark.slow  # six CLI processes
def test_force_keeps_a_zotero_book_and_the_next_sync_restores_its_annotations(
        tmp_path: Path) -> None:
    """The file alone lacks the reader's highlights (a chapter of the book): the re-cut
    keeps the book's id, tags, link and author, and the next sync adds the highlights back."""
    data, library = tmp_path / "Zotero", tmp_path / "library"
    shutil.copytree(Path(__file__).parent / "data" / "zotero", data)
    library.mkdir()
    _config(library, 256)
    _cli(library, "ingest", str(data), "--quiet")
    before = next(b for b in _books(library).values() if b["source_path"].endswith(".pdf"))
    _cli(library, "ingest", "--force", before["source_path"], "--quiet")
    forced = _books(library)[before["slug"]]
    kept = ("id", "name", "author", "tags", "link", "source_path")
    assert {k: forced[k] for k in kept} == {k: before[k] for k in kept}
    assert forced["chapters"] == before["chapters"] - 1  # no highlights in the file itself
    synced = json.loads(_cli(library, "sync", "--json").stdout)
    assert [f["action"] for f in synced["files"] if f.get("slug") == before["slug"]] == [
        "changed"]
    assert {k: v for k, v in _books(library)[before["slug"]].items() if k in (*kept, "chapters")
            } == {k: v for k, v in before.items() if k in (*kept, "chapters")}
