"""Extractive summaries, Contextual Retrieval prompts and the context writers."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from fake_ollama import FakeOllama
from grimoire_beholder.errors import ModelError
from grimoire_beholder.ingest.contexts import (
    ContextWriter,
    ExtractiveContextWriter,
    LLMContextWriter,
    clean_model_text,
    make_context_writer,
)
from grimoire_beholder.ingest.prompts import (
    MAX_SECTION_CHARS,
    SYSTEM_PROMPT,
    chunk_context_prompt,
    section_prefix,
    section_summary_prompt,
)
from grimoire_beholder.models.extractive import split_sentences, summarize
from grimoire_beholder.models.ollama import OllamaGenerator

DRAGONS = (
    "Dragons in the northern kingdoms guard hoards of gold deep inside mountain caves. "
    "The weather in the capital was mild that spring. "
    "Every dragon hoard attracts thieves, and the dragons defend their gold with fire. "
    "Scholars argue that a dragon measures its power by the size of its gold hoard. "
    "Bread was cheap at the market. "
    "Knights who seek dragon gold rarely return from the mountain caves."
)


def common_prefix(strings: list[str]) -> str:
    """The longest string every item starts with."""
    first, last = min(strings), max(strings)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as srv:
        yield srv


# --- extractive summary ---------------------------------------------------------------

def test_summary_picks_central_sentences_in_order() -> None:
    summary = summarize(DRAGONS, max_sentences=3, max_chars=1000)
    picked = split_sentences(summary)
    assert len(picked) == 3
    assert all("dragon" in s.lower() for s in picked)
    assert "weather" not in summary and "Bread" not in summary
    positions = [DRAGONS.index(s) for s in picked]
    assert positions == sorted(positions)
    assert summarize(DRAGONS, max_sentences=3, max_chars=1000) == summary


def test_summary_edge_cases() -> None:
    assert summarize("") == "" and summarize("   \n\n ") == ""
    assert summarize("Only one sentence here.") == "Only one sentence here."
    assert len(summarize(DRAGONS, max_chars=120)) <= 120
    assert len(summarize("word " * 1000, max_chars=50)) <= 50
    cjk = ("龍は山の洞窟に金を守る。龍の宝は盗賊を引き寄せる。"
           "市場のパンは安かった。龍は金で力を測る。")
    summary = summarize(cjk, max_sentences=2)
    assert summary and len(split_sentences(summary)) == 2 and "パン" not in summary


def test_summary_of_huge_section_is_bounded_in_time() -> None:
    huge = " ".join(f"Sentence {i} talks about topic{i % 50} and dragons." for i in range(50_000))
    started = time.process_time()  # CPU time: the work done, not the machine's load
    summary = summarize(huge)
    assert time.process_time() - started < 3.0
    assert 0 < len(summary) <= 600


# --- prompts -------------------------------------------------------------------------

def test_chunk_prompts_share_the_section_prefix_and_end_with_the_chunk() -> None:
    section = "First paragraph about dragons.\n\nSecond paragraph about gold."
    summary_prompt = section_summary_prompt("The Book", "Part I › Ch. 2", section)
    prompts = [chunk_context_prompt("The Book", "Part I › Ch. 2", "A summary.", section, c)
               for c in ("alpha passage text", "beta passage text")]
    prefix = section_prefix("The Book", "Part I › Ch. 2", section)
    assert summary_prompt.startswith(prefix) and all(p.startswith(prefix) for p in prompts)
    shared = common_prefix(prompts)
    assert section in shared and "A summary." in shared and "passage text" not in shared
    assert prompts[0].index("alpha passage text") > prompts[0].index("A summary.")


def test_giant_section_is_bounded_with_a_note() -> None:
    section = "A sentence about the war. " * 5000
    prompt = section_summary_prompt("Book", "Ch", section)
    assert len(prompt) < MAX_SECTION_CHARS + 1000
    assert "more characters omitted" in prompt


# --- context writers ------------------------------------------------------------------

def test_extractive_writer_is_breadcrumb_plus_summary() -> None:
    writer = make_context_writer(None)
    assert isinstance(writer, ExtractiveContextWriter) and isinstance(writer, ContextWriter)
    summary = writer.summarize_section(book="Dragons", breadcrumb="Ch 1 › Hoards", text=DRAGONS)
    assert summary == summarize(DRAGONS, max_sentences=3, max_chars=600)
    context = writer.chunk_context(book="Dragons", breadcrumb="Ch 1 › Hoards", summary=summary,
                                   section_text=DRAGONS, chunk_text="Knights who seek...")
    assert context == f"Dragons › Ch 1 › Hoards. {summary}"
    assert writer.chunk_context(book="B", breadcrumb="", summary="", section_text="",
                                chunk_text="x") == "B"


def test_llm_writer_prompts_share_prefix_across_chunks(server: FakeOllama) -> None:
    gen = OllamaGenerator("llama3.2:3b", server.host, timeout=5, retries=1, backoff=0.001)
    writer = make_context_writer(gen)
    assert isinstance(writer, LLMContextWriter) and isinstance(writer, ContextWriter)
    summary = writer.summarize_section(book="Dragons", breadcrumb="Ch 1", text=DRAGONS)
    assert summary.startswith("Context")
    contexts = [writer.chunk_context(book="Dragons", breadcrumb="Ch 1", summary=summary,
                                     section_text=DRAGONS, chunk_text=chunk)
                for chunk in split_sentences(DRAGONS)[:3]]
    assert all(c.startswith("Dragons › Ch 1. Context") for c in contexts)
    calls = server.requests_to("/api/generate")
    assert len(calls) == 4 and {c.body["system"] for c in calls} == {SYSTEM_PROMPT}
    prompts = [c.body["prompt"] for c in calls]
    shared_by_chunks = common_prefix(prompts[1:])
    assert DRAGONS in shared_by_chunks and summary in shared_by_chunks
    assert common_prefix(prompts).endswith("</section>\n\n")


def test_llm_writer_cleans_bounds_and_falls_back(server: FakeOllama) -> None:
    gen = OllamaGenerator("llama3.2:3b", server.host, timeout=5, retries=0, backoff=0.001)
    writer = LLMContextWriter(gen)
    server.reply = lambda model, prompt, body: '<think>...</think> Summary: "Dragons hoard."'
    assert writer.summarize_section(book="B", breadcrumb="C", text=DRAGONS) == "Dragons hoard."
    server.reply = lambda model, prompt, body: "word " * 2000
    context = writer.chunk_context(book="B", breadcrumb="C", summary="S", section_text=DRAGONS,
                                   chunk_text="chunk")
    assert len(context) <= 700 and context.startswith("B › C. word")
    server.reply = lambda model, prompt, body: "   \n"
    fallback = writer.summarize_section(book="B", breadcrumb="C", text=DRAGONS)
    assert fallback == ExtractiveContextWriter().summarize_section(book="B", breadcrumb="C",
                                                                   text=DRAGONS)
    assert writer.chunk_context(book="B", breadcrumb="C", summary="S", section_text=DRAGONS,
                                chunk_text="chunk") == "B › C. S"
    assert clean_model_text("Context:  spread\nover lines ", 100) == "spread over lines"


def test_llm_writer_does_not_swallow_model_errors(server: FakeOllama) -> None:
    gen = OllamaGenerator("llama3.2:3b", server.host, timeout=5, retries=0, backoff=0.001)
    writer = LLMContextWriter(gen)
    server.remove_model("llama3.2:3b")
    with pytest.raises(ModelError, match=r"ollama pull llama3\.2:3b"):
        writer.summarize_section(book="B", breadcrumb="C", text=DRAGONS)


def test_extractive_context_drops_what_the_chunk_already_says() -> None:
    writer = ExtractiveContextWriter()
    summary = writer.summarize_section(book="Dragons", breadcrumb="Ch 1 › Hoards", text=DRAGONS)
    # A section that is one chunk: its summary is its own text, so only the place is left.
    alone = writer.chunk_context(book="Dragons", breadcrumb="Ch 1 › Hoards", summary=summary,
                                 section_text=DRAGONS, chunk_text=DRAGONS)
    assert alone == "Dragons › Ch 1 › Hoards"
    first, *rest = split_sentences(summary)
    partial = writer.chunk_context(book="Dragons", breadcrumb="Ch 1 › Hoards",
                                   summary=summary, section_text=DRAGONS,
                                   chunk_text=f"Intro.\n{first}")
    assert partial == f"Dragons › Ch 1 › Hoards. {' '.join(rest)}"
    # A book titled like its only chapter names it once.
    assert writer.chunk_context(book="Annelid", breadcrumb="annelid › Paragraph 1",
                                summary="", section_text="", chunk_text="x") == (
        "Annelid › Paragraph 1")
    # Long headings (up to 500 characters each, as names are bounded) make a long place.
    path = " › ".join(["part " * 100, "verse " * 100])
    long = writer.chunk_context(book="tome " * 100, breadcrumb=path,
                                summary="", section_text="", chunk_text="x")
    assert long.startswith("tome tome") and len(long) <= 700
