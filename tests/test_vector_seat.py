"""The vector arm's best chunk is on the first page of a hybrid search: a passage the model
finds closest to the question, but whose words the keyword arm does not match, is not
buried under chunks that merely share the question's words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.search import ranking
from grimoire_beholder.search.fusion import Fused
from grimoire_beholder.store.records import CandidateFacts, ChunkSpan
from helpers import fake_config, write_markdown_book


class SynonymEmbedder(FakeEmbedder):
    """The fake bag of words, reading 'wyrmbane' as 'antidote': a meaning the model joins
    and BM25 cannot."""

    def _one(self, text: str) -> np.ndarray:
        return super()._one(text.lower().replace("wyrmbane", "antidote"))


FILLER = ("The keepers of the hall kept lamps, ledgers, brooms and bells in good order, "
          "and wrote down every visitor who came through the northern gate. ")
SHARERS = {f"Hall {n}": f"Hall {n} stores the basilisk antidote ledger. " + FILLER * 3
           for n in range(1, 9)}
ANSWER = ("Wyrmbane brewed from moonwort is the only wyrmbane that works; drink the wyrmbane "
          "warm. ") + FILLER


def _library(tmp_path: Path) -> Path:
    return write_markdown_book(tmp_path / "halls.md", "Halls",
                               {"Halls": {**SHARERS, "Remedies": ANSWER}})


def test_the_vector_arms_best_is_among_the_first_five_hits(tmp_path: Path) -> None:
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=SynonymEmbedder()) as lib:
        lib.ingest(_library(tmp_path))
        vector = lib.search("basilisk antidote", mode="vector", top_k=1).hits
        assert "moonwort" in vector[0].text  # the model's closest chunk
        keyword = lib.search("basilisk antidote", mode="keyword", top_k=20).hits
        assert not any("moonwort" in hit.text for hit in keyword)  # no word of the query
        hybrid = lib.search("basilisk antidote", mode="hybrid", top_k=10).hits
        plain = [hit.text for hit in hybrid]
        assert any("moonwort" in text for text in plain[:5]), plain
        assert "moonwort" in plain[4]  # seated fifth: the four above are the fused best
        assert all(text.startswith("Hall ") for text in plain[:4])
        assert hybrid[4].ranks["vector"] == 1
        # with fewer than five hits asked for, the fused order is kept as it is
        short = lib.search("basilisk antidote", mode="hybrid", top_k=3).hits
        assert [hit.text for hit in short] == plain[:3]


@pytest.mark.parametrize("mode", ["vector", "keyword"])
def test_single_arm_searches_are_not_reordered(tmp_path: Path, mode: str) -> None:
    config = fake_config(tmp_path)
    with Library.open(config=config, embedder=SynonymEmbedder()) as lib:
        lib.ingest(_library(tmp_path))
        hits = lib.search("basilisk antidote", mode=mode, top_k=10).hits
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


def test_convex_fusion_at_alpha_zero_seats_nothing(tmp_path: Path) -> None:
    # fusion_alpha 0 is "keyword only": a chunk no keyword matches (fused score 0) is not
    # lifted above the keyword matches (found by a hostile pass)
    config = fake_config(tmp_path, fusion_alpha=0.0)
    with Library.open(config=config, embedder=SynonymEmbedder()) as lib:
        lib.ingest(_library(tmp_path))
        assert "moonwort" in lib.search("basilisk antidote", mode="vector", top_k=1).hits[0].text
        hits = lib.search("basilisk antidote", mode="hybrid", top_k=8).hits
    assert len(hits) == 8
    assert all(hit.ranks["keyword"] is not None for hit in hits), [h.ranks for h in hits]


def test_a_line_of_an_index_is_not_seated(tmp_path: Path) -> None:
    # the same closest chunk, but in the book's index: a pointer to a passage, not one
    index = "\n".join(f"{term}, wyrmbane, {page}" for page, term in enumerate(
        ("adders", "basins", "cauldrons", "drakes", "embers", "flasks", "gorgons", "hydras",
         "ivy", "jars", "kettles", "lizards", "moonwort"), start=12))
    book = write_markdown_book(tmp_path / "halls.md", "Halls",
                               {"Halls": SHARERS, "Index": {"Index": index}})
    with Library.open(config=fake_config(tmp_path), embedder=SynonymEmbedder()) as lib:
        lib.ingest(book)
        top = lib.search("basilisk antidote", mode="vector", top_k=1).hits[0]
        assert "moonwort" in top.text and top.role == "index"
        hits = lib.search("basilisk antidote", mode="hybrid", top_k=5).hits
    assert not any("moonwort" in hit.text for hit in hits)


def _fused(chunk_id: int, score: float) -> Fused:
    return Fused(chunk_id, score, {"vector": None, "keyword": None},
                 {"vector": None, "keyword": None})


def _facts(sections: dict[int, int], role: str = "body") -> dict[int, CandidateFacts]:
    return {chunk: CandidateFacts(role, "", ChunkSpan(chunk, 1, 0, section, 0, 1, None, None,
                                                      None, None), 0)
            for chunk, section in sections.items()}


def test_seat_moves_only_a_candidate_from_an_unshown_section() -> None:
    ranked = [_fused(n, 1.0 - n / 100) for n in range(10)]
    sections = {n: n for n in range(10)}
    moved = ranking.seat(ranked, ranked[8], _facts(sections))
    assert [f.chunk_id for f in moved] == [0, 1, 2, 3, 8, 4, 5, 6, 7, 9]
    # already on the first page: nothing moves
    assert ranking.seat(ranked, ranked[3], _facts(sections)) == ranked
    # its section is already shown above the fifth place: nothing moves
    assert ranking.seat(ranked, ranked[8], _facts({**sections, 8: 2})) == ranked
    # not in the list at all (past the candidates read): it is put fifth
    outsider = _fused(99, 0.01)
    facts = _facts({**sections, 99: 99})
    assert [f.chunk_id for f in ranking.seat(ranked, outsider, facts)][:6] \
        == [0, 1, 2, 3, 99, 4]
    # a list shorter than the seat gets it at its end; no seated candidate, no change
    assert [f.chunk_id for f in ranking.seat(ranked[:2], outsider, facts)] == [0, 1, 99]
    assert ranking.seat(ranked, None, facts) == ranked
    # a contents or index line, or a candidate whose facts were not read, is not seated
    for role in ("contents", "index"):
        assert ranking.seat(ranked, outsider, {**facts, **_facts({99: 99}, role)}) == ranked
    assert ranking.seat(ranked, _fused(77, 0.0), facts) == ranked
