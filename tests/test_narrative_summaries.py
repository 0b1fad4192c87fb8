"""Extractive summaries of fiction say what happens, not who spoke (issue 26).

The summary is what `show`, `outline --summaries` and the MCP section tools print, and the
situating context every chunk of the section is embedded and indexed with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.models.extractive import split_sentences, summarize
from grimoire_beholder.parse import parse_file
from grimoire_beholder.structure.sections import shape_chapter
from helpers import BENCH, fake_config

SHERLOCK = BENCH / "books" / "arthur-conan-doyle_the-adventures-of-sherlock-holmes.epub"
needs_bench = pytest.mark.skipif(not SHERLOCK.is_file(), reason="the shared bench is absent")

OPENERS = ("“", '"', "‘", "—")


def _sections(path: Path, story: str) -> dict[str, str]:
    book = parse_file(path)
    chapter = next(c for c in book.chapters if c.title == story)
    return {s.title: s.text for s in chapter.sections if s.text.strip()}


def test_a_title_before_a_name_ends_no_sentence() -> None:
    text = ("“Good evening, Mr. Sherlock Holmes,” said she. Dr. Watson rose. "
            "They lived near St. Louis. Then the bell rang.")
    assert split_sentences(text) == [
        "“Good evening, Mr. Sherlock Holmes,” said she.", "Dr. Watson rose.",
        "They lived near St. Louis.", "Then the bell rang."]
    # a title at the very end stays one sentence; an ordinary abbreviation still ends one
    assert split_sentences("He wrote to Mr.") == ["He wrote to Mr."]
    assert split_sentences("It costs 5 dollars. Next.") == ["It costs 5 dollars.", "Next."]
    assert split_sentences("Dots.\n\n.\n\n… Mr.\n\n(Dr. A) B.") == [
        "Dots.", ".", "…", "Mr. (Dr. A) B."]


def test_dialogue_gives_way_to_narration_in_a_story() -> None:
    story = (
        "“Come in!” said Holmes. “I promise,” said Holmes. “Let me see!” said Holmes. "
        "“Quite so,” said he. “Indeed, Watson?” said Holmes. "
        "The king had come to Baker Street in a mask to buy back a compromising photograph "
        "from Irene Adler. Holmes went to her house in Briony Lodge disguised as a groom. "
        "“Come in!” said Holmes again."
    )
    summary = summarize(story, max_sentences=2, max_chars=600)
    assert not summary.startswith(OPENERS)
    assert "Irene Adler" in summary and "Briony Lodge" in summary
    # a section of dialogue only still has a summary: its most central lines
    talk = "“Come in!” said Holmes. “I promise,” said Holmes. “Let me see!” said Holmes."
    assert summarize(talk, max_sentences=2)


def test_prose_with_a_few_quotations_is_summarised_as_before() -> None:
    prose = (
        "Dragons hoard gold in deep caves. The hoard grows over centuries of raiding. "
        "“Never wake a sleeping dragon” is an old saying. Knights seek the hoard for glory. "
        "Most knights who enter the caves never return. The gold of the hoard is cursed. "
        "Scholars write about dragons and their hoards."
    )
    # one sentence of seven opens with a quotation: no dialogue, nothing ranked lower
    assert summarize(prose, max_sentences=3) == summarize(
        prose.replace("“Never wake a sleeping dragon” is", "Never wake a sleeping dragon is"),
        max_sentences=3).replace("Never wake a sleeping dragon is",
                                 "“Never wake a sleeping dragon” is")


@needs_bench
def test_sherlock_story_summaries_name_what_happens() -> None:
    sections = _sections(SHERLOCK, "A Scandal in Bohemia")
    for title, text in sections.items():
        summary = summarize(text, max_sentences=3, max_chars=600)
        sentences = split_sentences(summary)
        assert sentences, title
        # no line of dialogue leads, no sentence is cut after "Mr."
        assert not any(s.startswith(OPENERS) for s in sentences), (title, summary)
        assert not any(s.endswith((" Mr.", " Mrs.", " Dr.")) for s in sentences), summary
    # the story's first section was three lines of "said Holmes"; now it is its narration
    assert "said Holmes" not in summarize(sections["I"], max_sentences=3, max_chars=600)


def _summary_of(tmp_path: Path, name: str, text: str) -> str:
    """The summary ``show`` prints for the first section of ``text`` ingested as ``name``."""
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / name).write_text(text, encoding="utf-8")
    with Library.open(config=fake_config(tmp_path / "lib"), embedder=FakeEmbedder()) as lib:
        book = lib.ingest(tmp_path / name)
        return lib.section(book.slug, 0, 0).summary


def test_a_number_after_no_or_art_starts_no_sentence(tmp_path: Path) -> None:
    lease = ("# Lease\n\nArt. 5 The tenant pays the rent on the first day of each month. "
             "No. 3 of the schedule applies to every lease of the building. See Art. 12 and "
             "No. 7 for the deposit. Fig. 2 shows the floor plan of the flat.\n")
    summary = _summary_of(tmp_path, "lease.md", lease)
    sentences = split_sentences(summary)
    assert sentences, summary
    # every sentence keeps its article's number; none opens on a bare number
    assert not any(s[0].isdigit() for s in sentences), sentences
    assert not any(s.endswith((" Art.", " No.", " Fig.")) or s in ("Art.", "No.")
                   for s in sentences), sentences
    assert split_sentences("See Art. 12 and No. 7. The end. It was No. The end.") == [
        "See Art. 12 and No. 7.", "The end.", "It was No.", "The end."]
    # a number after a blank line numbers a list item: it joins nothing
    assert split_sentences("Ask the issuer, see p.\n\n4. Then send the request.") == [
        "Ask the issuer, see p.", "4.", "Then send the request."]


def test_sir_and_jr_end_a_sentence() -> None:
    # written after a name or alone, never before one: their period ends the sentence
    assert split_sentences("Yes, sir. I will go now. It was signed by Sammy Davis Jr. "
                           "He sang that night.") == [
        "Yes, sir.", "I will go now.", "It was signed by Sammy Davis Jr.", "He sang that night."]


def test_french_and_german_quotations_end_where_they_close(tmp_path: Path) -> None:
    assert split_sentences("« Très bien. » Le soleil se couchait. « Venez ! » dit-elle.") == [
        "« Très bien. »", "Le soleil se couchait.", "« Venez ! » dit-elle."]
    assert split_sentences("«Très bien.» Le soleil se couchait.") == [
        "«Très bien.»", "Le soleil se couchait."]
    assert split_sentences("„Setz dich.“ Der Raum war dunkel. »Komm.« Er ging.") == [
        "„Setz dich.“", "Der Raum war dunkel.", "»Komm.«", "Er ging."]
    story = ("# Le soir\n\n« Entrez. » « Qui est là ? » « C’est moi. » « Asseyez-vous. » "
             "Le vieux médecin habitait une maison de pierre au bord du fleuve, près du "
             "moulin. Chaque soir il marchait le long du fleuve jusqu’au moulin. "
             "« Bonsoir. »\n")
    summary = _summary_of(tmp_path, "soir.md", story)
    assert "Le vieux médecin habitait" in summary and "Chaque soir" in summary, summary
    assert not any(s.startswith("»") for s in split_sentences(summary)), summary  # no stray »


@needs_bench
def test_a_story_part_is_titled_by_its_words_not_its_quotation_marks() -> None:
    """A long story with no headings is cut into parts titled by their first words; a part
    that opens with dialogue is titled by the words, as a reader would name it."""
    book = parse_file(SHERLOCK)
    chapter = next(c for c in book.chapters if c.title == "The Redheaded League")
    titles = [s.title for s in shape_chapter(chapter, 3000)]
    assert len(titles) > 2 and all(t.startswith(f"Section {n} — ")
                                   for n, t in enumerate(titles, start=1))
    assert "Section 2 — Not so many as you might…" in titles  # was "— “ ‘Not so many as you…"
    assert not any(t.split(" — ", 1)[1].startswith((*OPENERS, "‘", "'")) for t in titles)


def test_chinese_and_japanese_dialogue_give_way_to_narration() -> None:
    chinese = ("“你好，”他说。“你好吗？”她问。“我很好，”他回答。“那太好了，”她说。"
               "在古城北边的一座小庙里，两个人每天早上打扫。庙的院子里有一棵大樱桃树。")
    # each quotation opens its own sentence, not the end of the one before
    assert split_sentences(chinese)[:2] == ["“你好，”他说。", "“你好吗？”"]
    japanese = ("「こんにちは」と彼は言った。「元気ですか」と彼女は聞いた。"
                "「はい、元気です」と彼は答えた。「それはよかった」と彼女は言った。"
                "古い町の北にある小さな寺で、二人は毎朝掃除をしていた。寺の庭には大きな桜の木があった。")
    for story in (chinese, japanese):
        summary = summarize(story, max_sentences=2, max_chars=300)
        assert not summary.startswith(("“", "「")), summary
