"""The chunk after the best match is a hit of its own: the answer is often just past the
boundary that cut the best chunk (a story's next scene, a commentary's second half)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book

FILL = "The keeper swept the stone floor of the tower and counted the jars on every shelf. "
LORE = ("Basilisk venom burns like fire. Basilisk venom blinds within the hour, and basilisk "
        "venom antidote lore fills the old books. ") * 3 + FILL * 7
ANSWER = FILL * 10 + "Against the basilisk the antidote is moonwort tea, drunk warm."


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_answer_in_the_next_chunk_of_the_best_match_is_returned(tmp_path: Path,
                                                                     mode: str) -> None:
    others = {name: f"{name} venom is mild. {name} venom stings. " + FILL * 8
              for name in ("Cockatrice", "Wyvern", "Manticore")}
    book = write_markdown_book(tmp_path / "venoms.md", "Venoms",
                               {"Venom": {"Basilisk": LORE + "\n\n" + ANSWER, **others}})
    config = fake_config(tmp_path, chunk_size=300, chunk_overlap=20)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        hits = lib.search("basilisk venom antidote", mode=mode, top_k=3).hits
    assert hits[0].text.startswith("Basilisk venom burns") and "moonwort" not in hits[0].text
    answering = [hit for hit in hits if "moonwort tea" in hit.text]
    assert answering and answering[0].section_index == hits[0].section_index
    assert "Basilisk venom burns" not in answering[0].text  # not a repeat of the first


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_no_text_is_returned_twice_in_one_result_list(tmp_path: Path, mode: str) -> None:
    # Every sentence is unique and mentions the query, so neighbouring chunks are all hits;
    # a neighbour's passage must not repeat what a better hit's passage already shows.
    body = " ".join(f"Entry {n} of the bestiary: basilisk venom is antidoted by herb {n}."
                    for n in range(120))
    book = write_markdown_book(tmp_path / "bestiary.md", "Bestiary",
                               {"Venom": {"Basilisk": body}})
    config = fake_config(tmp_path, chunk_size=120, chunk_overlap=30)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        hits = lib.search("basilisk venom antidote herb", mode=mode, top_k=5).hits
    assert len(hits) == 5
    shown = [int(n) for hit in hits for n in re.findall(r"Entry (\d+) of", hit.text)]
    assert len(shown) == len(set(shown)), shown  # no sentence in two hits


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_tiny_chunks_still_fill_top_k(tmp_path: Path, mode: str) -> None:
    """Chunks of a few words: the best 50 candidates are neighbours whose passages mostly
    repeat one another, so the search widens its pool until top_k passages differ."""
    body = "\n\n".join(f"Basilisk venom cure, step {n}: boil the roots for {n} minutes."
                       for n in range(400))
    book = write_markdown_book(tmp_path / "cures.md", "Cures", {"Venom": {"Basilisk": body}})
    config = fake_config(tmp_path, chunk_size=8, chunk_overlap=0)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        for top_k in (5, 20):
            hits = lib.search("basilisk venom cure boil roots", mode=mode, top_k=top_k).hits
            assert len(hits) == top_k, (top_k, len(hits))
            steps = [int(n) for hit in hits for n in re.findall(r"step (\d+):", hit.text)]
            assert len(steps) == len(set(steps))  # still no text twice
