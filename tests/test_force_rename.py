"""``ingest --force --name NEW`` on a book already in the library renames it in place: its
chunks' situating contexts (``Book › Chapter › Section. …``, which the keyword index and the
embedder both read) are made again under the new name, so a search finds the renamed book
exactly as it finds a book first ingested under that name, and the old name is gone from
every context. They were carried over from the old book, so searches kept matching the old
name and the vectors kept the old one in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import GARDEN_CHAPTERS, run_cli, write_markdown_book

OLD, NEW = "Kitchen Garden Manual", "Heron Almanac"


def _library(folder: Path) -> list[str]:
    folder.mkdir()
    (folder / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                        "chunk_size = 120\nchunk_overlap = 20\n")
    return ["--library", str(folder)]


def _hits(lib: list[str], question: str, *options: str) -> list[dict[str, Any]]:
    run = run_cli("query", question, "--top-k", "100", "--json", *options, *lib)
    assert run.returncode == 0, run.stderr
    return list(json.loads(run.stdout)["results"])


def _seen(hits: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a reader sees of each hit, in order."""
    return [(h["slug"], h["book"], h["section"], h["context"], h["text"], h["score"],
             h["ranks"]) for h in hits]


def test_force_name_renames_contexts_as_a_fresh_ingest_would(tmp_path: Path) -> None:
    book = write_markdown_book(tmp_path / "garden.md", OLD, GARDEN_CHAPTERS)
    renamed, fresh = _library(tmp_path / "renamed"), _library(tmp_path / "fresh")
    assert run_cli("ingest", str(book), "-q", *renamed).returncode == 0
    assert all(h["context"].startswith(OLD) for h in _hits(renamed, "compost heap"))

    forced = run_cli("ingest", str(book), "--force", "--name", NEW, "--json", *renamed)
    assert forced.returncode == 0, forced.stderr
    report = json.loads(forced.stdout)
    assert (report["slug"], report["name"]) == ("heron-almanac", NEW)
    assert report["embedded"] == report["chunks"]  # every context named the old book
    assert run_cli("ingest", str(book), "--name", NEW, "-q", *fresh).returncode == 0

    for question in (NEW.lower(), "slugs at night"):
        after = _hits(renamed, question)
        assert len({h["section"] for h in after}) == 4  # every section of the book
        assert not [h["context"] for h in after if OLD in h["context"]]
        assert _seen(after) == _seen(_hits(fresh, question))
    assert _hits(renamed, "manual", "--mode", "keyword") == []  # a word of the old name only
