"""The readable text of each MCP tool result, beside its structured content.

As ``cli/rendering.py`` is for the CLI: layout only. The shapes arrive already bounded
(``mcp_server/serving.py``) and every citation and location as the core wrote it
(``citation.py``); nothing here rebuilds one from page or line numbers.
"""

from __future__ import annotations

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from grimoire_beholder.citation import extent
from grimoire_beholder.mcp_server.tool_models import (
    BookList,
    BookOutline,
    BookStatus,
    LibraryStatus,
    PageImageInfo,
    QuoteCheckResult,
    SearchResult,
    SectionPart,
)
from grimoire_beholder.text import clip, plural

SUMMARY_CHARS = 1_000  # a section's summary above its text


def tool_result(text: str, model: BaseModel) -> CallToolResult:
    """Readable text for the model plus the typed result for clients that read structure."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))


def _with_note(lines: list[str], note: str | None) -> str:
    return "\n".join([*lines, note] if note else lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items())


def books_text(result: BookList) -> str:
    """One line per book: ids, name, author, size, and the group search_book filters on."""
    lines = [f"{plural(result.count, 'book')}:"]
    for b in result.books:
        size = extent(b.source_type, b.page_count, b.line_count)
        lines.append(f"- id={b.id} slug={b.slug}: {b.name}"
                     + (f" — {b.author}" if b.author else "")
                     + f" [{b.source_type}, {size}, {plural(b.chapters, 'chapter')}, "
                     + plural(b.sections, "section")
                     + (f", group={b.group}" if b.group else "") + "]"
                     + _labels(b.series, b.collections, b.tags, b.link))
    return _with_note(lines, result.note)


def _labels(series: str | None, collections: list[str], tags: list[str],
            link: str | None) -> str:
    """`` series=… collections=… tags=… link=…`` for a Calibre or Zotero book, else ""."""
    parts = [f"series={series}"] if series else []
    if collections:
        parts.append("collections=" + "; ".join(collections))
    if tags:
        parts.append("tags=" + ", ".join(tags))
    if link:
        parts.append(f"open: {link}")
    return (" " + " ".join(parts)) if parts else ""


def outline_text(result: BookOutline) -> str:
    """Chapters and sections with the indices get_section takes and their locations."""
    lines = [f"{result.name} (book_id={result.book_id}, slug={result.slug})"]
    for ch in result.chapters:
        lines.append(f"[{ch.chapter_index}] {ch.title}"
                     + (f" · {ch.location}" if ch.location else "")
                     + f" — {plural(ch.section_count, 'section')}")
        for s in ch.sections or []:
            lines.append(f"    [{ch.chapter_index}.{s.section_index}] {s.title or '(lead-in)'}"
                         + (f" · {s.location}" if s.location else "")
                         + f" · ~{s.approx_tokens} tokens"
                         + (f" · {s.role}" if s.role != "body" else ""))
    return _with_note(lines, result.note)


def search_text(result: SearchResult) -> str:
    """The notes that qualify the hits (low confidence first), then each hit's citation,
    the get_section call that reads all of it, and the excerpt."""
    lines = [result.note] if result.note else []
    lines.append(f"{plural(len(result.results), 'result')} for {result.query!r} "
                 f"({result.mode} search):")
    for e in result.results:
        lines += ["", f"{e.rank}. {e.citation}" + (f" · {e.link}" if e.link else ""),
                  f"   [get_section(book_id={e.book_id}, chapter_index={e.chapter_index}, "
                  f"section_index={e.section_index})]", e.text]
    if not result.results:
        lines.append("No match. Try other words, or list_books to see what is here.")
    return "\n".join(lines)


def section_text(result: SectionPart) -> str:
    """The citation (and which part this is), the summary, the text."""
    head = result.citation + (f" (part {result.part} of {result.total_parts})"
                              if result.total_parts > 1 else "")
    lines = [head]
    if result.summary:
        lines.append(f"Summary: {clip(result.summary, SUMMARY_CHARS)}")
    lines += ["", result.text]
    return "\n".join(lines + (["", result.note] if result.note else []))


def status_text(result: LibraryStatus) -> str:
    """Models and retrieval mode, characters saved so far, then one line per book."""
    lines = [f"embeddings: {result.embedding_backend} · {result.embedding_model}; "
             f"retrieval: {result.retrieval_mode}; chunks: {_counts(result.chunks)}"]
    savings = result.savings or {}
    if savings.get("searches"):
        lines.append(f"searches so far served {savings.get('chars_served', 0):,} characters "
                     f"from books totalling {savings.get('chars_books', 0):,}")
    lines += [f"- {b.slug} (id={b.id}): {plural(b.chapters, 'chapter')}, "
              f"{plural(b.sections, 'section')} ({b.sections_summarized} summarized), "
              f"{plural(b.chunks, 'chunk')} ({_counts(b.status)})"
              f" — " + ("complete" if b.complete else "incomplete") + _health(b)
              for b in result.books]
    return _with_note(lines, result.note)


def _health(book: BookStatus) -> str:
    """`; health: 94% reachable; scanned pages …` from the last health check, if any."""
    h = book.health
    if not h:
        return "; health: not checked (run `grimoire-beholder health`)"
    reach = h.get("reachability")
    parts = [f"{reach:.0%} of sections reachable" if reach is not None else "not probed"]
    if h.get("pages_without_text"):
        parts.append(f"pages without text: {h['pages_without_text']}")
    parts += list(h.get("problems") or [])[:3]
    return f"; health ({str(h.get('checked_at', ''))[:10]}): " + "; ".join(parts)


def quote_text(result: QuoteCheckResult) -> str:
    """The verdict, where (or the closest passage), the book's words, what differs."""
    verdict = {"exact": "Found", "close": "Found, with differences",
               "not_found": "NOT FOUND"}.get(result.verdict, result.verdict)
    lines = [f"{verdict} (similarity {result.similarity:.2f})."]
    if result.note:
        lines.append(result.note)
    p = result.passage
    if p is not None:
        lines += [("At: " if result.found else "Closest passage: ") + p.citation,
                  f"   [get_section(book_id={p.book_id}, chapter_index={p.chapter_index}, "
                  f"section_index={p.section_index}); characters {p.char_start}–{p.char_end}]",
                  f"The book: “{p.text}”"]
    lines += [f"- {d}" for d in result.differences]
    return "\n".join(lines)


def page_text(result: PageImageInfo) -> str:
    """What the image shows: which page, and whether the highlight was found."""
    label = f" (printed {result.page_label})" if result.page_label else ""
    line = f"Page {result.page}{label} of {result.page_count} of {result.slug}"
    if result.highlight_found:  # not found: the note says so
        line += "; the passage is highlighted"
    return _with_note([line + "."], result.note)
