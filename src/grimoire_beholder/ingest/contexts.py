"""Section summaries and per-chunk contexts: the text prepended to a chunk before indexing.

The pipeline depends only on :class:`ContextWriter`. Two implementations:

* :class:`ExtractiveContextWriter` (no model, the default): the summary is the section's
  most central sentences and the chunk context is ``"<book> › <breadcrumb>. <summary>"``,
  minus the summary sentences the chunk already contains. Free and deterministic, and
  already recovers most of what a bare chunk lacks — where it sits in the book and what its
  section is about. Repeating the chunk's own sentences would add nothing but weight: it
  skews BM25 towards those sentences and pushes the chunk itself out of the embedder's
  256-piece window (measured on the SQuAD dev set, see bench/retrieval_eval.py).
* :class:`LLMContextWriter`: Contextual Retrieval with a local model (see
  :mod:`.prompts`). Model output is cleaned and bounded; when the model answers with
  nothing usable we fall back to the extractive text rather than index an empty context.
  A :class:`~grimoire_beholder.errors.ModelError` is *not* swallowed: the pipeline stops
  with resumable state instead of silently mixing LLM and fallback contexts.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from grimoire_beholder.ingest.prompts import (
    SYSTEM_PROMPT,
    chunk_context_prompt,
    section_summary_prompt,
)
from grimoire_beholder.models.extractive import split_sentences, summarize
from grimoire_beholder.models.protocols import Generator
from grimoire_beholder.text import clip

SUMMARY_SENTENCES = 3
MAX_SUMMARY_CHARS = 600
MAX_CONTEXT_CHARS = 700
SUMMARY_TOKENS = 200
CONTEXT_TOKENS = 120
SEPARATOR = " › "


@runtime_checkable
class ContextWriter(Protocol):
    """Writes a summary per section and a short situating context per chunk."""

    def summarize_section(self, *, book: str, breadcrumb: str, text: str) -> str: ...

    def chunk_context(self, *, book: str, breadcrumb: str, summary: str, section_text: str,
                      chunk_text: str) -> str: ...


def location(book: str, breadcrumb: str) -> str:
    """``"Book › Chapter › Section"``, skipping empty parts and immediate repeats.

    A Markdown article titled by its one ``#`` heading, or a book whose single chapter has
    the book's name, would otherwise say the title twice.
    """
    parts: list[str] = []
    for part in [book, *breadcrumb.split(SEPARATOR)]:
        part = part.strip() if part else ""
        if part and (not parts or parts[-1].casefold() != part.casefold()):
            parts.append(part)
    return SEPARATOR.join(parts)


def new_to_chunk(summary: str, chunk_text: str) -> str:
    """The summary without the sentences ``chunk_text`` already contains (whitespace-blind).

    For a section that is one chunk this leaves nothing: its summary is its own text.
    """
    if not summary or not chunk_text.strip():
        return summary
    flat = " ".join(chunk_text.split())
    return " ".join(s for s in split_sentences(summary) if s not in flat)


def extractive_context(book: str, breadcrumb: str, summary: str, chunk_text: str = "") -> str:
    """The model-free chunk context: where the chunk is, then what else its section says."""
    place = location(book, breadcrumb)
    summary = new_to_chunk(summary, chunk_text).strip()
    if not summary:
        return clip(place, MAX_CONTEXT_CHARS)  # a heading path of long headings
    return clip(f"{place}. {summary}" if place else summary, MAX_CONTEXT_CHARS, at_sentence=True)


class ExtractiveContextWriter:
    """No model: extractive summaries and breadcrumb contexts. Deterministic and fast."""

    identity = "extractive"

    def summarize_section(self, *, book: str, breadcrumb: str, text: str) -> str:
        return summarize(text, max_sentences=SUMMARY_SENTENCES, max_chars=MAX_SUMMARY_CHARS)

    def chunk_context(self, *, book: str, breadcrumb: str, summary: str, section_text: str,
                      chunk_text: str) -> str:
        return extractive_context(book, breadcrumb, summary, chunk_text)


_LABEL = re.compile(r"^(?:here is (?:the |a )?)?(?:summary|context|answer)\s*[:：]\s*",
                    re.IGNORECASE)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def clean_model_text(text: str, max_chars: int) -> str:
    """Model output as one bounded paragraph: no think-block, label, quotes or line breaks."""
    text = _THINK.sub("", text or "")
    text = " ".join(text.split())
    text = _LABEL.sub("", text)
    if len(text) > 1 and text[0] in "\"'“" and text[-1] in "\"'”":
        text = text[1:-1].strip()
    return clip(text, max_chars, at_sentence=True)


class LLMContextWriter:
    """Contextual Retrieval with a local :class:`Generator`, prefix-ordered for KV reuse."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator
        self._fallback = ExtractiveContextWriter()

    @property
    def identity(self) -> str:
        return f"llm:{self.generator.identity}"

    def summarize_section(self, *, book: str, breadcrumb: str, text: str) -> str:
        """The model's summary; the extractive one if the model returns nothing usable."""
        if not text.strip():
            return ""
        answer = self.generator.generate(section_summary_prompt(book, breadcrumb, text),
                                         system=SYSTEM_PROMPT, max_tokens=SUMMARY_TOKENS)
        summary = clean_model_text(answer, MAX_SUMMARY_CHARS)
        if summary:
            return summary
        return self._fallback.summarize_section(book=book, breadcrumb=breadcrumb, text=text)

    def chunk_context(self, *, book: str, breadcrumb: str, summary: str, section_text: str,
                      chunk_text: str) -> str:
        """``"<book> › <breadcrumb>. <model context>"``, or the extractive context."""
        if not chunk_text.strip():
            return extractive_context(book, breadcrumb, summary)
        prompt = chunk_context_prompt(book, breadcrumb, summary, section_text, chunk_text)
        answer = self.generator.generate(prompt, system=SYSTEM_PROMPT,
                                         max_tokens=CONTEXT_TOKENS)
        context = clean_model_text(answer, MAX_CONTEXT_CHARS)
        if not context:
            return extractive_context(book, breadcrumb, summary)
        place = location(book, breadcrumb)
        return clip(f"{place}. {context}" if place else context, MAX_CONTEXT_CHARS,
                    at_sentence=True)


def make_context_writer(generator: Generator | None) -> ContextWriter:
    """The LLM writer when a generator is configured, else the model-free one."""
    if generator is None:
        return ExtractiveContextWriter()
    return LLMContextWriter(generator)
