"""The evaluation core: question loading, run records from a real library, hand-checked metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.cli.evaluation import (
    judge,
    load_questions,
    run_questions,
    score_run,
    section_title,
)
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library


def _squad(qid: str, section: str, anchor: str, answers: list[str],
           answerable: bool = True) -> dict[str, Any]:
    return {"id": qid, "question": "?", "answerable": answerable,
            "gold_file": "corpus/garden.md", "gold_section": section,
            "answers": answers, "gold_anchor": anchor}


def _res(text: str, section: str = "Other", file: str = "garden.md") -> dict[str, Any]:
    return {"file": file, "chapter": "Soil", "section": section,
            "page_start": None, "page_end": None, "text": text}


def test_score_run_metrics_by_hand() -> None:
    questions = [
        _squad("sq-t-1", "Compost", "turn the heap weekly", ["weekly"]),
        _squad("sq-t-2", "Drainage", "raised beds and grit", ["grit"]),
        _squad("sq-t-3", "Slugs", "copper tape", ["copper"]),
        _squad("sq-t-4", "Nowhere", "absent", ["absent"], answerable=False),
    ]
    miss = _res("nothing relevant here")
    run = [
        # q1: the anchor (other case and punctuation) in the first result -> rank 1, strict.
        {"id": "sq-t-1", "results": [_res("Turn the heap, weekly!"), miss]},
        # q2: rank 4 only by citing the gold section (text lacks anchor) -> hit, not strict.
        {"id": "sq-t-2", "results": [miss, miss, miss, _res("clay", section="Drainage")]},
        # q3: right text but from another file -> no hit anywhere.
        {"id": "sq-t-3", "results": [_res("use copper tape", file="other.md")]},
        {"id": "sq-t-4", "results": [miss]},
    ]
    m = score_run(questions, run)
    assert (m["n_answerable"], m["n_unanswerable"], m["missing_in_run"]) == (3, 1, 0)
    assert m["recall@1"] == m["recall@3"] == round(1 / 3, 4)
    assert m["recall@5"] == m["recall@10"] == round(2 / 3, 4)
    assert m["mrr@10"] == round((1 + 1 / 4) / 3, 4)
    assert m["strict_recall@10"] == round(1 / 3, 4)
    assert m["strict_mrr@10"] == round(1 / 3, 4)
    assert list(m["groups"]) == ["sq-t"]


def test_missing_question_counts_as_miss_and_groups_split() -> None:
    questions = [_squad("sq-a-1", "Compost", "heap", ["heap"]),
                 _squad("bk-b-1", "Compost", "heap", ["heap"])]
    m = score_run(questions, [{"id": "sq-a-1", "results": [_res("the heap")]}], ks=(1, 2))
    assert m["missing_in_run"] == 1 and m["recall@1"] == 0.5 and m["mrr@2"] == 0.5
    assert m["groups"]["sq-a"]["recall@1"] == 1.0 and m["groups"]["bk-b"]["recall@1"] == 0.0
    with pytest.raises(GrimoireError):
        score_run(questions, [], ks=())


def test_judge_book_rules() -> None:
    pdf = {"id": "bk-p-1", "question": "?", "answerable": True, "gold_file": "b/R.pdf",
           "gold_chapter": "1 Introduction", "gold_section": "Imports", "gold_page": 7,
           "evidence": "use the originating application to export the data as a text file"}
    page_hit = {"file": "R.pdf", "page_start": 6, "page_end": 7, "text": "unrelated"}
    assert judge(pdf, page_hit) == (True, False)
    assert judge(pdf, {**page_hit, "page_start": 8, "page_end": 9}) == (False, False)
    # A chunk boundary cut the evidence: its first 60% of words is enough.
    cut = {"file": "R.pdf", "page_start": 1, "page_end": 1,
           "text": "...simplest: use the originating application to export the"}
    assert judge(pdf, cut) == (True, True)
    epub = {"id": "bk-e-1", "question": "?", "answerable": True, "gold_file": "c.epub",
            "gold_chapter": "Adding books", "gold_section": None, "evidence": "zzz"}
    assert judge(epub, {"file": "c.epub", "chapter": "2. Adding Books", "text": ""})[0]
    assert not judge(epub, {"file": "c.epub", "chapter": "Editing", "text": ""})[0]


def test_load_questions(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a-1", "question": "why?"}\n\n', encoding="utf-8")
    assert load_questions(path) == [{"id": "a-1", "question": "why?", "answerable": True}]
    path.write_text('{"id": "a-1"}\n', encoding="utf-8")
    with pytest.raises(GrimoireError, match=r"q.jsonl:1: missing question"):
        load_questions(path)
    path.write_text('{"id": \n', encoding="utf-8")
    with pytest.raises(GrimoireError, match="not valid JSON"):
        load_questions(path)


def test_section_title() -> None:
    assert section_title("Soil › Compost", "Soil") == "Compost"
    assert section_title("Soil", "Soil") == "Soil"
    assert section_title("", "Soil") == "Soil"


def test_run_questions_on_a_library(library: Library, sample_book: Path,
                                    tmp_path: Path) -> None:
    library.ingest(sample_book)
    questions = [
        {**_squad("sq-g-1", "Slugs", "copper tape and beer traps", ["copper tape"]),
         "question": "What protects lettuce from slugs? copper tape beer traps"},
        {**_squad("sq-g-2", "Aphids", "Ladybirds and a jet of water", ["Ladybirds"]),
         "question": "Which insects keep aphids down? ladybirds"},
    ]
    for q in questions:
        q["gold_file"] = "somewhere/garden.md"
    run = run_questions(library, questions, mode="keyword", top_k=3)
    assert [r["id"] for r in run] == ["sq-g-1", "sq-g-2"]
    first = run[0]["results"][0]
    assert run[0]["abstained"] is False
    assert set(first) == {"file", "chapter", "section", "page_start", "page_end", "text",
                          "role"}
    assert (first["file"], first["chapter"], first["section"]) == ("garden.md", "Pests", "Slugs")
    assert "copper tape" in first["text"]
    json.dumps(run)  # the run is plain JSON
    m = score_run(questions, run)
    assert m["recall@1"] == 1.0 and m["mrr@10"] == 1.0
