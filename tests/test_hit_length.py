"""No search hit returns more than 1,200 characters (issue 26), whatever the file holds:
long words and URLs, tables, code, text without spaces, in Markdown, EPUB and PDF, through
the CLI's ``query --json`` (the shape MCP's ``search_book`` serves), and for a library whose
chunks were cut longer before the bound existed."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.structure.chunks import MAX_CHUNK_CHARS
from helpers import add_book, engine_for, make_epub, open_library, run_cli

LONG = ("Internationalization responsibilities characteristically overwhelm "
        "administrative representatives. ")
URLS = " ".join(f"https://lighthouse.example.org/archive/{n}/keeper-logbook-entry?ref=x{n}"
                for n in range(60))
TABLE = "| keeper | logbook entry |\n| --- | --- |\n" + "".join(
    f"| lighthousekeeper{n} | {'characteristically overwhelming ' * 3}{n} |\n" for n in range(40))
CODE = "```\n" + "".join(f"lighthouse_keeper_logbook_entry_{n} = characteristically_overwhelm"
                         f"(administrative_representatives_{n})\n" for n in range(40)) + "```"
CJK = "灯塔守护者在黄昏时修剪灯芯并在日志中记下时间" * 80


def _folder(root: Path) -> Path:
    folder = root / "shelf"
    folder.mkdir()
    (folder / "keeper.md").write_text(
        "# Keeper's manual\n\n## Links\n\n" + URLS + "\n\n## Table\n\n" + TABLE
        + "\n\n## Code\n\n" + CODE + "\n\n## Prose\n\n" + LONG * 40
        + "\n\n## 灯塔\n\n" + CJK + "\n", encoding="utf-8")
    make_epub(folder / "keeper.epub", {"c1.xhtml": "<h1>Duties</h1><p>" + LONG * 40 + "</p>"},
              [("Duties", "c1.xhtml")], title="Keeper's Duties")
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page(width=420, height=595).insert_htmlbox(
            pymupdf.Rect(30, 30, 390, 565), f"<p style='font-size:7px'>{LONG * 14}</p>")
    doc.save(folder / "keeper.pdf")
    return folder


@pytest.mark.slow  # three files ingested through the CLI, then five searches
def test_no_hit_returns_more_than_the_bound(tmp_path: Path) -> None:
    """The default chunk size with a model whose tokenizer is unknown (the fake one, as
    Ollama): nothing but characters bounds a chunk of long words, which used to come back
    whole at up to 2,560 characters."""
    config = tmp_path / "config.toml"
    config.write_text('[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
                      'llm_backend = "none"\n', encoding="utf-8")
    env = {"GRIMOIRE_BEHOLDER_CONFIG": str(config)}
    done = run_cli("ingest", str(_folder(tmp_path)), "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    seen: dict[str, int] = {}
    for question in ("lighthouse keeper logbook entry archive", "characteristically overwhelm",
                     "internationalization responsibilities administrative representatives",
                     "灯塔守护者", "lighthousekeeper logbook table"):
        found = run_cli("query", question, "--json", "--top-k", "20", env=env)
        assert found.returncode == 0, found.stderr
        for hit in json.loads(found.stdout)["results"]:
            name = Path(hit["source_path"]).name
            seen[name] = max(seen.get(name, 0), len(hit["text"]))
    assert set(seen) == {"keeper.md", "keeper.epub", "keeper.pdf"}
    assert all(0 < longest <= MAX_CHUNK_CHARS for longest in seen.values()), seen


def test_a_chunk_stored_longer_returns_its_first_part(tmp_path: Path) -> None:
    """A library cut before chunks were bounded keeps its long chunks; a hit on one returns
    its first 1,200 characters at most, ending on a sentence — and so does its context (a
    context of long headings came back whole, 2,007 characters through ``query --json``)."""
    text = "The keeper climbs the stair at dusk and lights the great lamp. " * 60
    conn = open_library(tmp_path)
    add_book(conn, "old-manual", [("Duties", "Evening", [text])])
    with transaction(conn):
        conn.execute("UPDATE chunks SET context = ?", (text,))
    hit = engine_for(conn).search("keeper lamp dusk", mode="keyword").hits[0]
    assert len(text) > 2 * MAX_CHUNK_CHARS
    assert MAX_CHUNK_CHARS // 2 < len(hit.text) <= MAX_CHUNK_CHARS
    assert text.startswith(hit.text) and hit.text.endswith("lamp.")
    context = hit.to_dict()["context"]
    assert len(context) <= MAX_CHUNK_CHARS and text.startswith(context)
    assert context.endswith("lamp.")
