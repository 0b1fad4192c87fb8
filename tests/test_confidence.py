"""The "not in the library" signal: features, the logistic fit, and the search envelope."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.search import confidence
from grimoire_beholder.search.confidence_model import MODELS
from helpers import fake_config


def test_features_from_the_arms() -> None:
    arms = {"vector": [(7, 0.8), (3, 0.5)], "keyword": [(7, 1.0), (9, 0.25)]}
    feats = confidence.features("How do slugs eat lettuce?", arms, [0.9, 0.6],
                                "Slugs feed at night on lettuce")
    assert feats["agreement"] == 1.0
    assert feats["cos_top"] == 0.8 and feats["cos_gap"] == pytest.approx(0.3)
    assert feats["kw_gap"] == 0.75 and feats["fused_gap"] == pytest.approx(0.3)
    assert feats["coverage"] == pytest.approx(2 / 3)  # slugs, lettuce found; eat not
    assert "rerank_top" not in feats
    only_vector = confidence.features("q", {"vector": [(1, 0.4)]}, [0.4], "", rerank_top=2.0)
    assert only_vector["agreement"] == 0.0 and only_vector["rerank_top"] == 2.0


def test_coverage_uses_content_words() -> None:
    assert confidence.coverage("the history of lighthouses", "Lighthouse history") == 1.0
    assert confidence.coverage("the of and", "anything") == 0.0
    assert confidence.coverage("compost drainage", "compost heaps") == 0.5


def test_fit_separates_and_predict_is_a_probability() -> None:
    rows = [{"cos_top": 0.2 + 0.01 * i, "coverage": 0.1} for i in range(20)]
    rows += [{"cos_top": 0.7 + 0.01 * i, "coverage": 0.9} for i in range(20)]
    labels = [0] * 20 + [1] * 20
    model = confidence.fit(rows, labels, names=("cos_top", "coverage"))
    low = confidence.predict({"cos_top": 0.2, "coverage": 0.1}, model)
    high = confidence.predict({"cos_top": 0.8, "coverage": 0.9}, model)
    assert 0.0 < low < 0.2 < 0.8 < high < 1.0


def test_committed_models_cover_every_setting() -> None:
    assert {"hybrid:convex", "hybrid:rrf", "vector", "keyword"} <= set(MODELS)
    for model in MODELS.values():
        assert model["features"] == list(confidence.FEATURES)
        assert len(model["coef"]) == len(model["mean"]) == len(model["features"])
    assert confidence.confidence({}, "hybrid", "unknown-fusion") is None


@pytest.mark.parametrize("threshold, low", [(0.0, False), (1.0, True)])
def test_search_reports_confidence(tmp_path: Path, sample_book: Path, threshold: float,
                                   low: bool) -> None:
    config = fake_config(tmp_path, min_confidence=threshold)
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(sample_book)
        data = lib.search("copper tape beer traps for slugs").to_dict()
        assert 0.0 <= data["confidence"] <= 1.0
        assert data["low_confidence"] is low
        assert list(data)[:7] == ["query", "mode", "fusion", "results", "note", "confidence",
                                  "low_confidence"]


def test_empty_result_is_low_confidence(library: Library) -> None:
    data = library.search("anything at all").to_dict()
    assert data["results"] == [] and data["low_confidence"] is True
    assert data["confidence"] is None
