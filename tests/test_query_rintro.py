"""``query`` on a real book: "An Introduction to R" (R-intro.pdf) on the embedded default.

The questions are paraphrases written from reading the book (none copies a sentence), the
way a user asks. Each names the section that answers it and the physical page where the
answer is printed; one of the top three hits must cite that section with a page span
holding that page. The book is ingested once per module through the CLI, into a temporary
library (nothing is cached in the repository). Skipped when the shared bench is absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from grimoire_beholder.cli.evaluation import same_title, section_title
from helpers import BENCH

BOOK = BENCH / "books" / "R-intro.pdf"

pytestmark = [
    pytest.mark.slow,  # ingests a real 100-page book on the embedded model
    pytest.mark.skipif(not BOOK.is_file(), reason=f"{BOOK} is not available"),
]

# (question, section title as in the PDF outline, physical page of the answer)
CASES: list[tuple[str, str, int] | ParameterSet] = [
    ("what happens when I add two vectors that do not have the same number of elements?",
     "Vector arithmetic", 15),
    ("how can I find out which elements of a vector are unknown or not available?",
     "Missing values", 17),
    ("how do I load an installed package so that its functions become available?",
     "13 Packages", 89),
    ("how do I get help on a specific function from inside R?",
     "Getting help with functions and features", 10),
    ("does R treat capital and small letters in variable names as the same symbol?",
     "R commands, case sensitivity, etc.", 11),
    ("how can I make a sequence of numbers with a fixed step between them?",
     "Generating regular sequences", 16),
    ("how do I list the objects I have created and remove the ones I no longer need?",
     "Data permanency and removing objects", 12),
    pytest.param(
        "how do I quit R, and does it ask whether to save my work?",
        "Using R interactively", 10),
]


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("rintro")
    path = folder / "config.toml"
    path.write_text('db_path = "rintro.db"\nembedding_backend = "embedded"\n'
                    'llm_backend = "none"\n', encoding="utf-8")
    done = CliRunner().invoke(app, ["ingest", str(BOOK), "--quiet", "--config", str(path)])
    assert done.exit_code == 0, done.output
    yield path


def _query(config_file: Path, question: str) -> list[dict[str, Any]]:
    done = CliRunner().invoke(app, ["query", question, "--json", "--top-k", "3",
                                    "--config", str(config_file)])
    assert done.exit_code == 0, done.output
    hits: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return hits


@pytest.mark.parametrize(("question", "section", "page"), CASES)
def test_query_cites_the_right_section_and_page(config_file: Path, question: str,
                                                section: str, page: int) -> None:
    hits = _query(config_file, question)
    assert hits, "no hit"
    cited = [(section_title(h["section"], h["chapter"]), h["page_start"], h["page_end"])
             for h in hits]
    assert all(h["source_type"] == "pdf" and h["page_start"] is not None for h in hits)
    assert any(same_title(title, section) and start <= page <= end
               for title, start, end in cited), cited
