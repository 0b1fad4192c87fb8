"""The case of the typing does not change "probably not in the library": a question typed in
lower case, as people often type in a terminal, names what the library writes as names.

The library test ingests four SQuAD articles on the embedded default model and asks
same-topic questions that name someone or somewhere the article asked about never
mentions (a name from another article of the library), and the answerable questions they
were made from (``bench/dev-extra/squad-swapped.jsonl``). Skipped when the shared bench is
absent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from grimoire_beholder.search import confidence, library_names
from helpers import BENCH

CORPUS = BENCH / "squad-dev" / "corpus"
ARTICLES = ("Arsenal_F.C..md", "Pope_Paul_VI.md", "Southampton.md",
            "Washington_University_in_St._Louis.md")

# (question, answerable): sq-swap-0012/0088/0099/0108 and sq-dev-0019/0148/0164/0188
QUESTIONS = [
    ("Who did Aponte supporters think should have been consulted before announcing the "
     "new crest?", False),
    ("What role was Nuffield not perceived to fill unlike some of his fellow cardinals?",
     False),
    ("What year did the Vikings start attacking Aponte?", False),
    ("How are most student organizations at Flores University funded?", False),
    ("Who did Arsenal supporters think should have been consulted before announcing the "
     "new crest?", True),
    ("What role was Montini not perceived to fill unlike some of his fellow cardinals?",
     True),
    ("What year did the Vikings start attacking Hamwic?", True),
    ("How are most student organizations at Washington University funded?", True),
]


def test_the_library_writes_names_capitalised_inside_sentences() -> None:
    texts = ["The stadium at Tamuning was built in 1970. Crowds came from Dededo; Tamuning "
             "grew.", "Mr. Holmes met Dr. Roylott at Stoke Moran.",
             "An engineer lost his thumb. The engineer said nothing.",
             "The JSON file and the CLI. Sun Tzŭ wrote it."]
    assert library_names.written_as_name("tamuning", texts)  # after ";" too
    assert library_names.written_as_name("roylott", texts)  # "Dr." ends no sentence
    assert library_names.written_as_name("tzu", texts)  # accents folded
    assert library_names.written_as_name("engineer", texts) is False  # lower case inside
    assert library_names.written_as_name("json", texts) is None  # capitals mark no name
    assert library_names.written_as_name("crowds", texts) is None  # starts a sentence
    assert library_names.written_as_name("gunpowder", texts) is None  # never written


def test_a_lower_case_question_asks_the_library_for_its_names() -> None:
    """Without ``written`` (a server library) a lower-case question names nothing; with it,
    the words the top hit lacks are names when the library writes them so."""
    arms = {"vector": [(1, 0.6)]}
    top = "The original stadium was designed by a local architect."
    asked: list[list[str]] = []

    def written(words: list[str]) -> list[str]:
        asked.append(list(words))
        return [word for word in words if word == "tamuning"]

    question = "what architect designed the original stadium at tamuning?"
    plain = confidence.features(question, arms, [0.6], top)
    feats = confidence.features(question, arms, [0.6], top, written=written)
    assert plain["names_unmatched"] == 0.0
    assert feats["names_unmatched"] == feats["coverage"] ** 2 > 0
    assert asked == [["tamuning"]]  # only the word the top hit lacks is asked about
    as_written = confidence.features(question.replace("tamuning", "Tamuning"), arms, [0.6],
                                     top, written=written)
    assert as_written == feats and len(asked) == 1  # its capital says it: nothing asked


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    folder = tmp_path_factory.mktemp("squad4")
    config = Config(base_dir=str(folder), db_path="squad.db", embedding_backend="embedded",
                    llm_backend="none", record_stats=False)
    with Library.open(config=config) as lib:
        for name in ARTICLES:
            lib.ingest(CORPUS / name)
        yield lib


@pytest.mark.slow  # ingests four articles on the embedded model
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{CORPUS} is not available")
@pytest.mark.parametrize(("question", "answerable"), QUESTIONS)
def test_lower_case_gets_the_verdict_of_the_question_as_written(
        articles: Library, question: str, answerable: bool) -> None:
    """"how are most student organizations at flores university funded?" is flagged as its
    written form is (Flores is a name of the library, never of the Washington University
    article), with the same confidence; the answerable question it was made from is not
    flagged, typed either way."""
    written = articles.search(question)
    lower = articles.search(question.lower())
    assert written.low_confidence is (not answerable), written.confidence
    assert lower.low_confidence is written.low_confidence, (lower.confidence,
                                                            written.confidence)
    assert lower.confidence == pytest.approx(written.confidence, abs=0.02)
