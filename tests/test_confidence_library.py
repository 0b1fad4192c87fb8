""""Probably not in the library" on a real library: a small folder of the npm docs (Markdown
reference pages) ingested on the embedded default model, asked the bench's developer
questions about it and questions it cannot answer. Skipped when the shared bench is absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from helpers import BENCH

DOCS = BENCH / "markdown-dev" / "npm-docs"
FOLDERS = ("using-npm", "configuring-npm")
QUESTIONS = BENCH / "markdown-dev" / "questions" / "npm-docs.jsonl"

pytestmark = [
    pytest.mark.slow,  # ingests 17 reference pages on the embedded model
    pytest.mark.skipif(not QUESTIONS.is_file(), reason=f"{QUESTIONS} is not available"),
]

OFF_TOPIC = [
    "What is the capital of Mongolia?",
    "How long should I boil an egg for a runny yolk?",
    "Who painted the ceiling of the Sistine Chapel?",
    "What were the main causes of the First World War?",
    "How do vaccines train the immune system?",
]


@pytest.fixture(scope="module")
def npm_docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    folder = tmp_path_factory.mktemp("npmdocs")
    config = Config(base_dir=str(folder), db_path="docs.db", embedding_backend="embedded",
                    llm_backend="none", record_stats=False)
    with Library.open(config=config) as lib:
        for name in FOLDERS:
            for path in sorted((DOCS / name).glob("*.md")):
                lib.ingest(path)
        yield lib


def _questions(answerable: bool) -> list[dict[str, Any]]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    return [q for q in questions if q["answerable"] == answerable
            and (not answerable or Path(q["gold_file"]).parent.name in FOLDERS)]


def test_answerable_developer_questions_are_not_flagged(npm_docs: Library) -> None:
    """Long questions in a developer's words ("our Docker build", "our Ubuntu CI runner")
    about pages the library holds: the answer is found, and none is called "probably not
    in the library"."""
    asked = _questions(answerable=True)
    assert len(asked) >= 6
    for q in asked:
        found = npm_docs.search(q["question"])
        files = [Path(h.source_path).name for h in found.hits[:5]]
        assert Path(q["gold_file"]).name in files, q["id"]
        assert not found.low_confidence, (q["id"], found.confidence)


def test_same_topic_questions_the_pages_do_not_answer_are_flagged(npm_docs: Library) -> None:
    """About packages and npm, but what these pages never say (PyPI and twine, an SBOM
    format, provenance from a CI service): each is flagged, and each is less certain than
    every answerable question."""
    answered = [npm_docs.search(q["question"]).confidence for q in _questions(True)]
    for q in _questions(answerable=False):
        found = npm_docs.search(q["question"])
        assert found.low_confidence, (q["id"], found.confidence)
        assert found.confidence is not None
        assert all(found.confidence < c for c in answered if c is not None), q["id"]


def test_questions_off_the_library_are_flagged(npm_docs: Library) -> None:
    for question in OFF_TOPIC:
        found = npm_docs.search(question)
        assert found.hits and found.low_confidence, (question, found.confidence)
