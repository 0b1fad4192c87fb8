"""The "not in the library" signal: features, the logistic fit, and the search envelope."""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.search import confidence
from grimoire_beholder.search.confidence_model import MODELS
from helpers import fake_config, write_markdown_book


def test_features_from_the_arms() -> None:
    arms = {"vector": [(7, 0.8), (3, 0.5)], "keyword": [(7, 1.0), (9, 0.25)]}
    feats = confidence.features("How do slugs eat lettuce?", arms, [0.9, 0.6],
                                "Slugs feed at night on lettuce")
    assert feats["cos_top"] == 0.8 and feats["fused_top"] == 0.9
    assert feats["kw_gap"] == 0.75
    assert feats["coverage"] == pytest.approx(2 / 3)  # slugs, lettuce found; eat not
    assert "rerank_top" not in feats
    only_vector = confidence.features("q", {"vector": [(1, 0.4)]}, [0.4], "", rerank_top=2.0)
    assert only_vector["kw_gap"] == 0.0 and only_vector["rerank_top"] == 2.0


def test_names_missing_counts_the_questions_names_and_numbers_no_hit_mentions() -> None:
    text = "In 1823 Augustin Fresnel's lens was first lit at Cordouan."
    assert confidence.names_missing("When did Fresnel light his lens at Cordouan?", text) == 0.0
    # a same-topic question about a person the text never names (the first word is not one)
    assert confidence.names_missing("When did Stevenson light the lens at Cordouan?",
                                    text) == 0.5
    assert confidence.names_missing("What happened in 1901 at Cordouan?", text) == 0.5
    assert confidence.names_missing("What is a lens for?", text) == 0.0  # no name at all
    # the feature: the top hit's coverage when a name is missing from every hit, else 0
    arms = {"vector": [(1, 0.5)]}
    swapped = confidence.features("Where did Stevenson work on lenses?", arms, [0.5],
                                  "lenses work", all_text="Fresnel worked on lenses in Paris")
    assert swapped["names_unmatched"] == swapped["coverage"] ** 2 > 0
    named = confidence.features("Where did Fresnel work on lenses?", arms, [0.5],
                                "lenses work", all_text="Fresnel worked on lenses in Paris")
    assert named["names_unmatched"] == 0.0


@pytest.mark.parametrize("query", [
    "Where did Stevenson work on lenses?",  # a name in no piece
    "Where did Fresnel work on lenses?",  # a name in a later piece only
    "Did Fresnel meet Arago in 1819?",  # names spread over the pieces and the book line
    "Where did Stevenson cook?",  # a name missing, but the top hit covers nothing
    "What did Ὀδυσσεύς and ΟΔΥΣΣΕΥΣ say?",  # Greek capitals: sigma's final form
    "How does the 灯塔 work?",  # a script without spaces
])
def test_the_names_check_reads_pieces_as_their_joined_text(query: str) -> None:
    """Hits given one by one (as the engine gives them) make the same features as the text
    they make joined by spaces: stemming stops early, it never answers otherwise."""
    arms = {"vector": [(1, 0.5)], "keyword": [(1, 3.0), (2, 1.0)]}
    top = "lenses work at the lamp"
    for pieces in ([top, "Fresnel worked on lenses in Paris", "Optics (Arago 1819)"],
                   [top, "", "ΟΔΥΣΣΕΥΣ said ὈΔΥΣΣΕΎΣ", "灯塔守护人"], [""], [], [top]):
        joined = confidence.features(query, arms, [0.5], top, all_text=" ".join(pieces))
        assert confidence.features(query, arms, [0.5], top, all_text=pieces) == joined


def test_names_are_what_a_reader_marks_as_names() -> None:
    """A developer's question names its platform, not every capitalised word: a word that
    starts a sentence, an acronym and a one-letter word are not names; accents do not make
    a name missing ("Tzu" is the text's "Tzŭ")."""
    text = "fs.watch uses inotify; editors that save by renaming replace the watched file."
    asked = ("I'm watching config.json with fs.watch. After I save it once in vim I get one "
             "event and then nothing. Does the JSON CLI matter? My C addon too.")
    assert confidence.names_missing(asked, text) == 0.0
    assert confidence.names_missing("Which shell runs npm scripts on our Ubuntu runner?",
                                    text) == 1.0
    assert confidence.names_missing("How do I publish from GitHub to the registry?",
                                    text) == 1.0  # a name with capitals inside is one
    assert confidence.names_missing("What does Sun Tzu count as the best way to win?",
                                    "Sun Tzŭ said: the best way is to win without fighting") == 0.0


def test_coverage_uses_content_words() -> None:
    assert confidence.coverage("the history of lighthouses", "Lighthouse history") == 1.0
    assert confidence.coverage("the of and", "anything") == 0.0
    assert confidence.coverage("compost drainage", "compost heaps") == 0.5


def test_a_stem_is_looked_for_as_stemming_every_word_finds_it() -> None:
    """Coverage and the names check look the query's stems up in the text (``_holds``)
    instead of stemming all of it: the same answer as the set of the text's stems, at word
    starts and ends, across accents, ligatures, no-space scripts and compatibility forms."""
    rng = random.Random(5)
    words = ("Holmes", "holmesian", "hol", "data", "datasets", "Tzŭ", "tzu", "ﬁre", "fire",
             "¼", "1", "4", "Ⅻ", "xii", "™", "tm", "日本語", "本語", "ไทย", "naïve", "naive",
             "x_y", "x", "y", "2026", "20", "ǅemal", "Σας", "σας", "abcde", "abcdef", "abcd",
             "Half¼way", "half1", "Ab¼c", "ab1")
    breaks = (" ", "’", "—", "...", "_", "-", "\n", "(")
    for _ in range(300):
        text = "".join(rng.choice(words) + rng.choice(breaks) for _ in range(rng.randint(0, 12)))
        folded, stems = confidence._bigrams(confidence._folded(text)), confidence._stems(text)
        for word in words:
            for stem in confidence._content(word) | confidence._names("Ask " + word):
                assert confidence._holds(folded, stem) == (stem in stems), (text, stem)


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
        key = next(k for k, m in MODELS.items() if m is model)
        assert model["features"] == list(confidence.feature_names(key))
        assert len(model["coef"]) == len(model["mean"]) == len(model["features"])
    assert confidence.confidence({}, "hybrid", "unknown-fusion") is None


SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "lighthouse-keepers-handbook.md"
# Questions the sample book answers (paraphrased, with the section that answers them) and
# questions it has nothing on.
ANSWERABLE = {
    "what fuel did most stations burn by the late nineteenth century?": "The Lamp and Its Fuel",
    "how far can a first-order Fresnel lens throw its beam?": "Lenses and Range",
    "why were the curtains drawn inside the lantern during the day?": "Daily Routine",
    "what does a red sector of a light warn ships about?": "Characteristics",
    "how many keepers were posted to rock stations?": "Life at Remote Stations",
    "what kinds of fog signals did stations use?": "Fog Signals",
    "what happened to the keepers' cottages after automation?": "Automation",
    "how often did keepers trim the wicks?": "The Lamp and Its Fuel",
    "why can a light one hundred feet high only be seen fourteen miles?": "Lenses and Range",
}
UNANSWERABLE = [
    "how do I configure a kubernetes ingress controller?",
    "what is the recipe for sourdough bread?", "who won the football world cup in 1998?",
    "how do I undo a git rebase?", "what is the capital of Mongolia?",
    "how do vaccines train the immune system?",
    "what is the best tyre pressure for a road bike?", "how to compute a matrix determinant",
    "what are the symptoms of diabetes?", "which python library parses yaml files?",
]


@pytest.fixture(scope="module")
def handbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library holding the sample handbook (fake embedder); its folder."""
    folder = tmp_path_factory.mktemp("handbook")
    with Library.open(config=fake_config(folder), embedder=FakeEmbedder()) as lib:
        lib.ingest(SAMPLE)
    return folder


def _searched(folder: Path, questions: Iterable[str], **config: Any) -> dict[str, Any]:
    with Library.open(config=fake_config(folder, **config), embedder=FakeEmbedder()) as lib:
        return {q: lib.search(q).to_dict() for q in questions}


def test_confidence_separates_what_the_library_answers_from_what_it_cannot(
        handbook: Path) -> None:
    answered = _searched(handbook, ANSWERABLE)
    unanswered = _searched(handbook, UNANSWERABLE)
    for question, section in ANSWERABLE.items():  # the library really answers these
        assert answered[question]["results"][0]["section"].endswith(section), question
    lowest_answered = min(d["confidence"] for d in answered.values())
    assert max(d["confidence"] for d in unanswered.values()) < lowest_answered
    # At the default threshold every question off the book is flagged, nearly none on it.
    assert all(d["low_confidence"] for d in unanswered.values())
    assert sum(d["low_confidence"] for d in answered.values()) <= 1


def test_a_same_topic_question_about_a_name_the_library_lacks_is_less_certain(
        handbook: Path) -> None:
    """SQuAD v2's commonest unanswerable kind: the very topic, a person it never names."""
    asked = "how far can a first-order Fresnel lens throw its beam?"
    swapped = asked.replace("Fresnel", "Stevenson")  # no Stevenson in the handbook
    searched = _searched(handbook, [asked, swapped])
    assert searched[swapped]["confidence"] < searched[asked]["confidence"]
    assert not searched[asked]["low_confidence"]


@pytest.mark.parametrize("threshold", [0.05, 0.5, 0.99])
def test_low_confidence_is_confidence_under_the_threshold(handbook: Path,
                                                          threshold: float) -> None:
    searched = _searched(handbook, [*ANSWERABLE, *UNANSWERABLE], min_confidence=threshold)
    for question, data in searched.items():
        assert 0.0 <= data["confidence"] <= 1.0
        assert data["low_confidence"] is (data["confidence"] < threshold), question
        assert list(data)[:7] == ["query", "mode", "fusion", "results", "note", "confidence",
                                  "low_confidence"]


def test_empty_result_is_low_confidence(library: Library) -> None:
    data = library.search("anything at all").to_dict()
    assert data["results"] == [] and data["low_confidence"] is True
    assert data["confidence"] is None


def _title_case(question: str) -> str:
    return " ".join(word[:1].upper() + word[1:] for word in question.split(" "))


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_question_in_title_case_is_as_certain_as_in_sentence_case(handbook: Path,
                                                                    mode: str) -> None:
    """Typed as a title ("Why Were The Curtains Drawn…"), a question finds the same passages
    and gets the same confidence: capitals on every word mark no names (a word the text
    spells otherwise, "Trim" for "trimmed", is then no "missing name")."""
    asked = [q[:1].upper() + q[1:] for q in ANSWERABLE]
    plain = _searched(handbook, asked, retrieval_mode=mode)
    titled = _searched(handbook, [_title_case(q) for q in asked], retrieval_mode=mode)
    for question in asked:
        as_title = titled[_title_case(question)]
        assert ([(h["citation"], h["text"]) for h in as_title["results"]]
                == [(h["citation"], h["text"]) for h in plain[question]["results"]]), question
        assert as_title["confidence"] == plain[question]["confidence"], question
        assert as_title["low_confidence"] is plain[question]["low_confidence"], question


def test_a_title_before_a_name_is_not_the_name() -> None:
    """"Mr."/"Dr." are not names and their period ends no sentence: the name is the word
    after them, found or not."""
    text = "Holmes told Watson that the band was a swamp adder."
    assert confidence.names_missing("What did Mr. Holmes tell Dr. Watson about the band?",
                                    text) == 0.0
    assert confidence.names_missing("What did Mr. Moriarty tell Dr. Watson?", text) == 0.5
    assert confidence.names_missing("Which book did J. R. R. Tolkien write?", text) == 1.0


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_an_answerable_question_naming_a_title_is_not_flagged(handbook: Path,
                                                              mode: str) -> None:
    asked = ["How did Mr. Fresnel's lens bend light?", "How did Fresnel's lens bend light?"]
    for question, data in _searched(handbook, asked, retrieval_mode=mode).items():
        assert data["results"][0]["section"].endswith("Lenses and Range"), question
        assert not data["low_confidence"], (question, data["confidence"])


def test_a_lone_keyword_match_is_not_a_confident_answer(handbook: Path) -> None:
    """Keyword search alone: "telephone" is in one passage of the handbook, so a question
    about paying or resetting a telephone matches that passage and nothing else. That is
    no sign of a passage standing out: it is less certain than every question the
    handbook answers (it was 0.99, above them all)."""
    off_topic = ["Can I pay by telephone?", "How do I reset my telephone?"]
    searched = _searched(handbook, off_topic, retrieval_mode="keyword")
    answered = _searched(handbook, ANSWERABLE, retrieval_mode="keyword")
    lowest_answered = min(d["confidence"] for d in answered.values())
    for question, data in searched.items():
        assert len(data["results"]) == 1, question
        assert data["confidence"] < min(0.5, lowest_answered), (question, data["confidence"])


LIGHTHOUSE_ZH = {"灯光": {
    "灯与燃料": ("灯塔的好坏取决于它的灯。早期的灯塔在露天火盆里燃烧木头或煤炭，"
                 "烟很大，雨中也看不远。到了十九世纪末，大多数灯塔改用煤油。"
                 "守护人每隔几个小时就要修剪一次灯芯。不修剪的灯芯会烧焦冒烟，"
                 "把玻璃熏黑。"),
    "透镜与射程": ("十九世纪最大的进步是菲涅耳透镜，它用一圈圈玻璃棱镜折射光线。"
                   "一等菲涅耳透镜比人还高，在晴朗的夜晚可以把光束投射到二十多"
                   "海里之外。"),
    "雾号": ("起雾的时候，光本身没有用处，所以灯站还配备雾号。最早的雾号是用手"
             "或发条锤敲的钟。"),
    "自动化": ("从二十世纪中叶开始，电灯和无线电监控让常驻守护人变得多余。灯塔"
               "一个接一个实现了自动化。"),
}}


def test_a_chinese_question_the_library_answers_is_not_flagged(tmp_path: Path) -> None:
    """Chinese is written without spaces: a whole clause is one "word" to a word tokenizer,
    so no question word was ever "found" (coverage 0) and the questions a Chinese book
    answers were flagged. Compared by character bigrams, they are not; a question about
    something the book never mentions still is."""
    book = write_markdown_book(tmp_path / "deng.md", "灯塔守护人手册", LIGHTHOUSE_ZH)
    config = fake_config(tmp_path, retrieval_mode="keyword")
    with Library.open(config=config, embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        for question, section in {"守护人多久修剪一次灯芯？": "灯与燃料",
                                  "菲涅耳透镜能把光束投射多远？": "透镜与射程",
                                  "灯塔什么时候实现了自动化？": "自动化"}.items():
            found = lib.search(question)
            assert found.hits[0].section.endswith(section), question
            assert not found.low_confidence, (question, found.confidence)
        off_topic = lib.search("灯塔的门票多少钱，周一开放吗？")  # ticket price, opening days
        assert off_topic.hits and off_topic.low_confidence, off_topic.confidence


WAR = """---
title: The Art of War
author: Sun Tzu
---

# Laying Plans

## The Five Factors

The art of war is governed by five constant factors: the moral law, heaven, earth, the
commander and method and discipline. The moral law causes the people to be in complete
accord with their ruler. Heaven signifies night and day, cold and heat, times and seasons.

# The Use of Spies

## Five Classes

Hence the use of spies, of whom there are five classes: local spies, inward spies, converted
spies, doomed spies and surviving spies. None in the whole army are more intimately related
to the commander than spies; none should be more liberally rewarded.
"""


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_question_naming_the_books_author_is_not_flagged(tmp_path: Path, mode: str) -> None:
    """A one-book library of The Art of War: "What does Sun Tzu say…" names the author,
    whom the passages never name. The author is no missing name."""
    book = tmp_path / "art-of-war.md"
    book.write_text(WAR, encoding="utf-8")
    with Library.open(config=fake_config(tmp_path, retrieval_mode=mode),
                      embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
        found = lib.search("What does Sun Tzu say about the five classes of spies?")
        assert found.hits[0].section.endswith("Five Classes")
        assert not found.low_confidence, found.confidence
        missing = lib.search("What does Clausewitz say about the five classes of spies?")
        assert missing.confidence is not None and missing.confidence < found.confidence


def test_accents_fold_alike_on_first_and_later_texts() -> None:
    """Accents are dropped the same way whether a text's characters are met for the first
    time (a translate) or were met before (one regular-expression pass), also after new
    characters arrive."""
    import unicodedata

    from grimoire_beholder.search.confidence import _folded

    def reference(text: str) -> str:
        low = unicodedata.normalize("NFKD", text.lower())
        return "".join(c for c in low if not unicodedata.combining(c))

    texts = ["Sun Tzŭ’s “Art of War”", "Zoë and Chloë — naïve café", "Sun Tzŭ again",
             "ǅemal Bijedić, Ελληνικά τονισμένα", "Zoë — naïve", "漢字とかな ½ ﬁne"] * 3
    assert [_folded(t) for t in texts] == [reference(t) for t in texts]
    assert confidence.coverage("Sun Tzŭ", "the sayings of sun tzu") == 1.0


def test_accents_fold_right_when_several_threads_meet_new_characters() -> None:
    """Two libraries searching from threads share the table of characters met: texts full
    of characters never met before, folded from four threads at once, neither raise nor
    keep an accent (the table was iterated while another thread grew it: 'dictionary
    changed size during iteration')."""
    import random
    import sys
    import threading
    import unicodedata

    from grimoire_beholder.search.confidence import _Marks

    table = _Marks()
    marks = [chr(c) for c in range(0x300, 0x370)]
    errors: list[str] = []
    wrong: list[str] = []

    def fold(seed: int) -> None:
        draw = random.Random(seed)
        try:
            for _ in range(1500):
                text = "".join(draw.choice(marks) if draw.random() < 0.2
                               else chr(draw.randint(0x100, 0x4000))
                               for _ in range(draw.randint(1, 30)))
                expected = "".join(c for c in text if not unicodedata.combining(c))
                if table.drop(text) != expected:
                    wrong.append(text)
        except RuntimeError as error:
            errors.append(repr(error))

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=fold, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)
    assert errors == [] and wrong == [], (errors[:2], wrong[:2])
