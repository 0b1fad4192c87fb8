"""The confidence calibration's cross-validation keeps every question about an article in
one fold (bench/calibrate_confidence.py): a same-topic question and the answerable question
it was made from are never split, whatever punctuation the article's title has."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from helpers import BENCH

ROOT = Path(__file__).resolve().parents[1]
SWAPPED = ROOT / "bench" / "dev-extra" / "squad-swapped.jsonl"
SQUAD = BENCH / "squad-dev" / "questions.jsonl"


@pytest.fixture(scope="module")
def calibration() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("calibrate_confidence")
    finally:
        sys.path.remove(str(ROOT / "bench"))


def _questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.mark.skipif(not SQUAD.is_file(), reason=f"{SQUAD} is not available")
def test_a_same_topic_question_falls_with_its_twin(calibration: ModuleType) -> None:
    asked = {q["id"]: q for q in _questions(SQUAD)}
    swapped = _questions(SWAPPED)
    assert len(swapped) >= 100
    for question in swapped:
        twin = asked[question["from_id"]]
        assert calibration.about(question) == calibration.about(twin), question["id"]


def test_titles_and_file_names_of_one_article_share_a_key(calibration: ModuleType) -> None:
    about = calibration.about
    assert (about({"id": "a", "gold_file": "Washington_University_in_St._Louis.md"})
            == about({"id": "b", "about_doc": "Washington University in St. Louis"}))
    assert about({"id": "a", "gold_file": "Kievan_Rus_.md"}) == about(
        {"id": "b", "about_doc": "Kievan Rus'"})
    assert about({"id": "a", "gold_file": "Kievan_Rus_.md"}) != about(
        {"id": "b", "about_doc": "Kiev"})
    assert about({"id": "q-1"}) != about({"id": "q-2"})  # no article: a fold of its own
