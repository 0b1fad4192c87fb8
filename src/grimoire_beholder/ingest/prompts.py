"""Prompts for Contextual Retrieval: a short context, written by an LLM, that situates each
chunk in its book before the chunk is embedded and indexed (the technique Anthropic
described in 2024).

Order matters for speed. A local model re-reads the whole prompt for every chunk, but
Ollama keeps the KV cache of the previous prompt and reuses its longest common prefix.
So every prompt of a section starts with the same bytes — the fixed system prompt, then
the book, the breadcrumb and the (bounded) section text — and only the part that differs
comes last: the summary request, or the summary plus the one chunk. A section of N chunks
then costs roughly one long prompt plus N short ones.

Section text is capped at :data:`MAX_SECTION_CHARS` (with a note saying so) so a giant
section cannot overflow the model's context window; the chunk and summary are capped too.
"""

from __future__ import annotations

MAX_SECTION_CHARS = 12_000  # ~3k tokens: fits an 8k context with room for the rest
MAX_CHUNK_CHARS = 4_000
MAX_SUMMARY_CHARS = 1_200

# One system prompt for both tasks: a per-task system prompt would change the very first
# tokens and defeat the shared-prefix cache between the summary and the chunk prompts.
SYSTEM_PROMPT = (
    "You help index books for search. You read a section of a book and answer exactly the "
    "request that follows it. Answer in the language of the book, in plain prose, with no "
    "preamble, no headings, no lists and no quotation marks around the answer."
)


def bound_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` at a paragraph/sentence/word break, with a note if cut."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    for separator in ("\n\n", ". ", "。", "\n", " "):
        at = head.rfind(separator)
        if at > max_chars * 0.6:
            head = head[: at + len(separator)]
            break
    omitted = len(text) - len(head)
    return f"{head.rstrip()}\n[… the text continues; {omitted} more characters omitted …]"


def section_prefix(book: str, breadcrumb: str, section_text: str) -> str:
    """The part shared by every prompt about one section (identical bytes each time)."""
    return (
        f"Book: {book.strip()}\n"
        f"Location: {breadcrumb.strip()}\n\n"
        f"<section>\n{bound_text(section_text, MAX_SECTION_CHARS)}\n</section>\n\n"
    )


def section_summary_prompt(book: str, breadcrumb: str, section_text: str) -> str:
    """Ask for a 2-3 sentence summary of the section as a whole."""
    return section_prefix(book, breadcrumb, section_text) + (
        "Request: summarise what this section covers in two or three sentences, naming its "
        "main subjects, people, places, terms or arguments so a reader knows what to find "
        "here. Answer with the summary only."
    )


def chunk_context_prompt(book: str, breadcrumb: str, summary: str, section_text: str,
                         chunk_text: str) -> str:
    """Ask for one or two sentences situating ``chunk_text`` within its section and book."""
    summary_part = bound_text(summary, MAX_SUMMARY_CHARS) or "(none)"
    return section_prefix(book, breadcrumb, section_text) + (
        f"Section summary: {summary_part}\n\n"
        f"Here is a passage from this section:\n"
        f"<passage>\n{bound_text(chunk_text, MAX_CHUNK_CHARS)}\n</passage>\n\n"
        "Request: write one or two short sentences that situate this passage within the "
        "section and the book — what it is about and how it relates to the surrounding "
        "material — to improve search retrieval of the passage. Mention the specific names "
        "and terms the passage relies on that are explained elsewhere in the section. "
        "Answer with the context only."
    )
