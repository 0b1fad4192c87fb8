"""What a hit returns: its chunk widened into a passage of its section, and the passage where
the question's words come together ranked first."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.search import passages, proximity
from grimoire_beholder.store import hit_queries, role_rows, text_spans
from helpers import fake_config, write_markdown_book

FILLER = ("The harbour master logged every arrival in the ledger by the window. ") * 3


def _story(tmp_path: Path) -> Path:
    scenes = [f"Scene {n}. {FILLER}The tide turned at noon on day {n}." for n in range(1, 13)]
    scenes[6] = ("The stranger asked for a room facing the lighthouse, paid in Spanish silver, "
                 "and left before dawn without his coat. " + FILLER)
    return write_markdown_book(tmp_path / "harbour.md", "Harbour Tales",
                               {"The Harbour": {"One long chapter": "\n\n".join(scenes)}})


def test_a_hit_is_widened_into_an_exact_passage_of_its_section(tmp_path: Path) -> None:
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        lib.ingest(_story(tmp_path))
        hit = lib.search("stranger Spanish silver lighthouse room", mode="keyword").hits[0]
        section = lib.section(hit.slug, hit.chapter_index, hit.section_index).text
    assert "paid in Spanish silver" in hit.text
    assert hit.text in section  # an exact slice: it can be quoted and located
    assert 0.6 * passages.PASSAGE_CHARS <= len(hit.text) <= passages.PASSAGE_CHARS
    assert hit.text.rstrip().endswith(".")  # ends on a sentence
    assert hit.line_start is not None and hit.line_end is not None
    assert section.count("\n") >= hit.line_end - hit.line_start  # lines cover the passage


def test_the_window_shares_the_room_and_stops_at_the_section_edges() -> None:
    text = "First sentence here. " * 20 + "THE CHUNK ITSELF. " + "Last sentence there. " * 20
    start = text.index("THE CHUNK")
    end = start + len("THE CHUNK ITSELF.")
    a, b = passages.window(text, start, end, 200)
    assert a < start and b > end and b - a <= 200
    assert text[a:b].startswith("First") and text[a:b].rstrip().endswith(".")
    assert passages.window(text, 0, 30, 200)[0] == 0  # nothing before the section start
    assert passages.window(text, start, end, 5) == (start, end)  # already long enough


def test_a_section_opening_in_reach_starts_the_passage() -> None:
    """The answer is often a section's first sentence, just before the chunk that matched:
    when the section up to the chunk's end fits in the passage, the passage begins with it,
    and a section's last sentence (no space after it) is not cut off either."""
    opening = "Reduction should only be done up to unknown. "
    text = opening + "The reasoning is long. " * 6 + "THE CHUNK ITSELF. " + "Tail words. " * 30
    start = text.index("THE CHUNK")
    end = start + len("THE CHUNK ITSELF.")
    a, b = passages.window(text, start, end, 240)
    assert a == 0 and text[a:b].startswith(opening) and b - a <= 240
    assert text[a:b].rstrip().endswith(".")
    far = "Filler sentence here. " * 40 + text  # the opening out of reach: shared as before
    shift = len(far) - len(text)
    a, b = passages.window(far, start + shift, end + shift, 240)
    assert a > 0 and b - a <= 240 and "THE CHUNK ITSELF." in far[a:b]
    ending = "The chunk says this. The section's last sentence ends the text."
    assert passages.window(ending, 0, 10, 200) == (0, len(ending))


def test_proximity_prefers_the_passage_where_the_question_words_meet() -> None:
    scattered = ("The stranger came in spring. " + FILLER * 2 + "Silver was scarce. "
                 + FILLER * 2 + "A lighthouse stood on the point.")
    together = FILLER + "The stranger paid in silver for a room by the lighthouse. " + FILLER
    shares = proximity.scores("Who paid the lighthouse room in silver, the stranger?",
                              {1: scattered, 2: together})
    assert shares[2] > shares[1]
    assert shares[2] == 1.0


def test_passages_do_not_mostly_repeat_text_a_better_hit_returned(tmp_path: Path) -> None:
    """With chunks much shorter than a passage, neighbours' passages would overlap."""
    book = write_markdown_book(tmp_path / "cures.md", "Cures", {"Venom": {"Basilisk": "\n\n".join(
        f"Basilisk venom cure, step {n}: boil the roots for {n} minutes." for n in range(40))}})
    config = fake_config(tmp_path, chunk_size=20, chunk_overlap=0)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        hits = lib.search("basilisk venom cure boil roots", mode="keyword", top_k=5).hits
        section = lib.section(hits[0].slug, 0, hits[0].section_index).text
    assert len(hits) >= 2
    spans = sorted((section.index(h.text), section.index(h.text) + len(h.text)) for h in hits)
    for (a_start, a_end), (b_start, b_end) in itertools.pairwise(spans):
        assert max(0, a_end - b_start) * 2 <= min(a_end - a_start, b_end - b_start)


@contextlib.contextmanager
def _cures_library(tmp_path: Path, steps: int) -> Iterator[Library]:
    """A library of one section of ``steps`` short paragraphs, cut into chunks much shorter
    than a passage (fake models)."""
    book = write_markdown_book(tmp_path / "cures.md", "Cures", {"Venom": {"Basilisk": "\n\n".join(
        f"Basilisk venom cure, step {n}: boil the roots for {n} minutes." for n in range(steps))}})
    config = fake_config(tmp_path, chunk_size=20, chunk_overlap=0)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        yield lib


def test_passages_past_many_skipped_neighbours_are_still_found(tmp_path: Path) -> None:
    """Chunks much shorter than a passage, ranked in reading order: most are skipped as
    repeats of the one before, and the passages asked for still come from further on."""
    with _cures_library(tmp_path, steps=90) as lib:
        ranked = [r[0] for r in lib.conn.execute("SELECT id FROM chunks ORDER BY id")]
        chosen = passages.select(lib.conn, ranked, 3)
    assert len(ranked) > 30
    assert len(chosen) == 3
    assert list(chosen) == sorted(chosen) and list(chosen)[-1] > ranked[6]
    texts = [p.text or "" for p in chosen.values()]
    assert all(t and t not in other for t in texts for other in texts if other is not t)


def test_passages_from_spans_in_hand_are_the_passages_read(tmp_path: Path) -> None:
    """A search hands over the spans it read with its candidates (``candidate_facts``):
    the passages are the ones select reads itself, and a chunk missing from them (deleted
    meanwhile) is skipped as if it were not ranked."""
    with _cures_library(tmp_path, steps=150) as lib:
        ids = [r[0] for r in lib.conn.execute("SELECT id FROM chunks ORDER BY id")]
        ranked = ids[::-7]  # far apart and near, last first: some are dropped as repeats
        facts = text_spans.candidate_facts(lib.conn, ranked)
        read = passages.select(lib.conn, ranked, 6)
        given = passages.select(lib.conn, ranked, 6, spans={c: f.span for c, f in facts.items()})
        gone = passages.select(lib.conn, ranked, 6, spans={c: f.span for c, f in facts.items()
                                                           if c != ranked[0]})
        assert gone == passages.select(lib.conn, ranked[1:], 6)
        spans = text_spans.chunk_spans(lib.conn, ranked)
        places = hit_queries.chunk_positions(lib.conn, ranked)
        roles = role_rows.roles_and_texts(lib.conn, ranked)
    assert len(read) == 6 and given == read and ranked[0] in read and ranked[0] not in gone
    assert {c: (f.role, f.text, f.span, f.chunk_index) for c, f in facts.items()} == {
        c: (roles[c][0], roles[c][1], spans[c], places[c].chunk_index) for c in ranked}
