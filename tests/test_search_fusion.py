"""Fusion maths, hand-computed."""

from __future__ import annotations

import pytest

from grimoire_beholder.search import fusion

VECTOR = [(1, 0.9), (2, 0.8), (3, 0.7)]
KEYWORD = [(3, 12.0), (1, 6.0), (4, 3.0)]


def test_rrf_hand_computed() -> None:
    fused = fusion.rrf({"vector": VECTOR, "keyword": KEYWORD}, k=60)
    assert [f.chunk_id for f in fused] == [1, 3, 2, 4]
    scores = {f.chunk_id: f.score for f in fused}
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[4] == pytest.approx(1 / 63)
    first = fused[0]
    assert first.ranks == {"vector": 1, "keyword": 2}
    assert first.scores == {"vector": 0.9, "keyword": 6.0}
    assert first.explain() == {
        "chunk_id": 1, "fused": pytest.approx(1 / 61 + 1 / 62),
        "arms": {"vector": {"rank": 1, "score": 0.9}, "keyword": {"rank": 2, "score": 6.0}},
    }


def test_rrf_pool_and_k() -> None:
    fused = fusion.rrf({"vector": VECTOR, "keyword": KEYWORD}, k=0, pool=2)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores == pytest.approx({1: 1 + 1 / 2, 2: 1 / 2, 3: 1.0})  # 4 and vector's 3 cut
    assert fused[0].ranks == {"vector": 1, "keyword": 2}
    assert {f.chunk_id: f.ranks["vector"] for f in fused}[3] is None


def test_rrf_ties_break_on_best_rank_then_id() -> None:
    fused = fusion.rrf({"a": [(7, 1.0), (5, 0.5)], "b": [(5, 1.0), (7, 0.5)]}, k=60)
    assert [f.chunk_id for f in fused] == [5, 7]  # equal scores, equal best rank → id


def test_convex_hand_computed() -> None:
    vector = [(1, 0.8), (2, 0.2)]
    keyword = [(2, 10.0), (3, 5.0)]
    fused = fusion.convex(vector, keyword, alpha=0.5)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores == pytest.approx({1: 0.4, 2: 0.1 + 0.5, 3: 0.25})
    assert [f.chunk_id for f in fused] == [2, 1, 3]
    assert fused[0].explain()["arms"] == {"vector": {"rank": 2, "score": 0.2},
                                          "keyword": {"rank": 1, "score": 10.0}}


def test_convex_extremes() -> None:
    vector = [(1, 0.8), (2, 0.2)]
    keyword = [(2, 10.0), (3, 5.0)]
    assert [f.chunk_id for f in fusion.convex(vector, keyword, alpha=1.0)][:2] == [1, 2]
    pure_kw = fusion.convex(vector, keyword, alpha=0.0)
    assert [f.chunk_id for f in pure_kw][:2] == [2, 3]
    assert pure_kw[0].score == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fusion.convex(vector, keyword, alpha=1.5)


def test_convex_without_keyword_scores() -> None:
    fused = fusion.convex([(1, 0.5)], [], alpha=0.25)
    assert fused[0].score == pytest.approx(0.125)
    assert fused[0].ranks == {"vector": 1, "keyword": None}


def test_convex_counts_filled_scores_for_what_an_arm_did_not_pool() -> None:
    vector = [(1, 0.8)]
    keyword = [(1, 10.0), (3, 5.0)]
    unfilled = {f.chunk_id: f.score for f in fusion.convex(vector, keyword, alpha=0.5)}
    assert unfilled[3] == pytest.approx(0.25)  # no cosine: counted as 0
    fused = fusion.convex(vector, keyword, alpha=0.5, filled={"vector": {3: 0.6, 1: 0.1}})
    scores = {f.chunk_id: f.score for f in fused}
    assert scores == pytest.approx({1: 0.4 + 0.5, 3: 0.3 + 0.25})  # the arm's own 0.8 wins
    assert {f.chunk_id: f.ranks["vector"] for f in fused}[3] is None  # a score, not a rank


def test_single_arm_keeps_order_and_scores() -> None:
    fused = fusion.single("keyword", KEYWORD, pool=2)
    assert [(f.chunk_id, f.score) for f in fused] == [(3, 12.0), (1, 6.0)]
    assert fused[0].ranks == {"vector": None, "keyword": 1}
