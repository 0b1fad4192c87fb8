"""A search reads its candidates' facts only as far down the fused list as the answer can
reach (``search.final_order.choose``): the answer is the one reading every candidate gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.search import ranking
from helpers import fake_config, write_markdown_book

TOPICS = ("lamp wick", "fog bell", "lens prism", "keeper log", "oil store", "storm shutter")


def _book(tmp_path: Path) -> Path:
    """Body sections on each topic, and an index whose many short lines name the topics
    again (short chunks: the keyword arm ranks them first; the role prior demotes them)."""
    body = {f"On the {topic}": (f"The {topic} needs care every night. " * 3
                                + f"Keepers wrote how the {topic} was kept. ") * 4
            for topic in TOPICS}
    index = "\n".join(f"{topic} {n}, {n + 40}, {n + 80}–{n + 82}" for n in range(1, 60)
                      for topic in TOPICS)
    return write_markdown_book(tmp_path / "keeper.md", "The Keeper",
                               {"The light": body, "Index": {"Index": index}})


def _answers(lib: Library, query: str, mode: str, top_k: int) -> tuple[object, ...]:
    found = lib.search(query, mode=mode, top_k=top_k)
    return (found.confidence, found.features, [(h.chunk_id, h.score, h.ranks, h.role, h.text,
                                                h.line_start, h.line_end) for h in found.hits])


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_reading_part_of_the_candidates_answers_as_reading_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    config = fake_config(tmp_path, chunk_size=24, chunk_overlap=0)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(_book(tmp_path))
        cases = [(f"how was the {topic} kept at night", top_k) for topic in TOPICS
                 for top_k in (1, 3, 10)]
        lazy = [_answers(lib, query, mode, top_k) for query, top_k in cases]
        with monkeypatch.context() as patched:  # no candidate is ever certain: read them all
            patched.setattr(ranking, "ceiling", lambda rest, lifts: float("inf"))
            whole = [_answers(lib, query, mode, top_k) for query, top_k in cases]
        roles = {h.role for h in lib.search("lamp wick", mode=mode, top_k=10).hits}
    assert lazy == whole
    assert "index" in roles or mode == "vector"  # the index chunks are among the candidates


def test_the_ceiling_is_the_most_any_candidate_can_be_given() -> None:
    """``ranking.ceiling`` reads the best unlifted score only: the same bound as every
    candidate times every role prior and its lift, negative scores and ties included."""
    import random

    from grimoire_beholder.search.fusion import Fused

    rng = random.Random(4)
    priors = (min(1.0, *ranking.ROLE_PRIOR.values()), max(1.0, *ranking.ROLE_PRIOR.values()))
    for _ in range(300):
        rest = [Fused(i, rng.choice((rng.uniform(-2, 2), 0.5, -0.5, 0.0)), {}, {})
                for i in range(rng.randint(0, 12))]
        lifts = {i: rng.choice((0.0, 0.5, 1.0)) for i in range(12) if rng.random() < 0.2}
        want = max((f.score * (p * (1.0 + ranking.INDEX_LIFT * lifts.get(f.chunk_id, 0.0))
                               * (1.0 + ranking.PROXIMITY_WEIGHT * 0.0))
                    for f in rest for p in priors), default=-float("inf"))
        assert ranking.ceiling(rest, lifts) == want
