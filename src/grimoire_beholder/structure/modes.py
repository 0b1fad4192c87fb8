"""Which chunker a file gets: per-section (``header``) or overlapping prose windows.

``chunk_mode`` in the config:

* ``header`` — today's behaviour everywhere: chunks of ``chunk_size`` with ``chunk_overlap``
  inside each section, preferring paragraph breaks (a headerless chapter is still split into
  synthetic sections of ``section_split_tokens`` first).
* ``window`` — every file is cut into windows of ``window_size`` approximate tokens that
  overlap by ``window_overlap``, ending at sentences rather than paragraphs. Sections are
  still shaped the same way (they bound summaries and LLM contexts, and name the hit).
* ``auto`` (default) — per file: Markdown or plain text with no heading at all (a
  manuscript, a transcript, notes pasted from a chat) gets windows, because its paragraphs
  are an accident of formatting rather than units of meaning; everything with headings, and
  every PDF/EPUB (whose chapters come from an outline), gets ``header``.
"""

from __future__ import annotations

from grimoire_beholder.parse.document import ParsedBook

_PROSE_TYPES = ("markdown", "text")


def is_headerless(parsed: ParsedBook) -> bool:
    """True for Markdown/text with no heading: one chapter whose sections have no titles.

    A Markdown file without ``#`` headings parses to one chapter named after the front
    matter title or the file name, holding one untitled section.
    """
    if parsed.source_type not in _PROSE_TYPES or len(parsed.chapters) != 1:
        return False
    return all(not s.title and not s.path for s in parsed.chapters[0].sections)


def is_reference_text(parsed: ParsedBook) -> bool:
    """True for Markdown/text organised under its own headings: documentation pages, notes,
    wikis, articles — many short headed units, each about one thing, whose chunks are cut
    to a smaller budget than a book's (``ingest.build.REFERENCE_CONTEXT_PIECES``). A PDF,
    EPUB, Word or HTML file (a book or document: chapters from an outline, running prose)
    and a headerless manuscript are not."""
    return parsed.source_type in _PROSE_TYPES and not is_headerless(parsed)


def chunk_mode_for(parsed: ParsedBook, configured: str) -> str:
    """``header`` or ``window`` for this file under the configured ``chunk_mode``."""
    if configured in ("header", "window"):
        return configured
    return "window" if is_headerless(parsed) else "header"
