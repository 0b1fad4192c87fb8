"""Context for AI-assistant hooks (Claude Code ``SessionStart`` and ``UserPromptSubmit``).

Why hooks as well as the MCP server: the assistant only calls ``search_book`` when it thinks
of it. A session-start table of contents tells it what the library holds; a per-prompt
lookup puts the few best passages in front of it before it answers, at a bounded cost in
context characters.

Constraints, because a hook runs on every prompt: keyword search only (loading the
embedding model would take a second), the library opened read-only, reranking off, short
prompts (fewer than :data:`MIN_WORDS` words) and weak matches (confidence below
``min_confidence``) skipped, output capped at a character budget. :func:`print_hook` is
what both ``hook`` commands run: every exception becomes silence.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Literal

from grimoire_beholder.library import BookRow, Library
from grimoire_beholder.text import MAX_QUERY_CHARS, clip, flat, plural
from grimoire_beholder.views import IngestedFolder, shelves

MIN_WORDS = 4
PROMPT_BUDGET = 1500
SESSION_BUDGET = 2000
PROMPT_HITS = 3
COLLECTION_NAMES = 5  # names shown of an ingested folder's files
MIN_ENTRY = 80  # characters an entry of the session table of contents always gets
ENTRY_MAX = 400  # and at most
HEADER = "Passages from the local book library (grimoire-beholder) that may help:"


def print_hook(hook: Literal["session-start", "prompt"], budget: int | None = None,
               config_path: str | os.PathLike[str] | None = None,
               library: str | os.PathLike[str] | None = None) -> None:
    """Print what ``hook session-start`` or ``hook prompt`` (its payload read from stdin)
    gives the assistant; on any failure print nothing: a hook must never break it."""
    try:
        if hook == "prompt":
            text = prompt_context(sys.stdin.read(), config_path, budget, library)
        else:
            text = session_context(config_path, budget, library)
    except Exception:
        return
    if text:
        sys.stdout.write(text + "\n")


def _open(config_path: str | os.PathLike[str] | None,
          library: str | os.PathLike[str] | None) -> Library:
    from grimoire_beholder.config import load_config

    cfg = load_config(config_path, library=library).with_overrides(
        retrieval_mode="keyword", reranker="none")
    return Library.open(config=cfg, read_only=True)


def prompt_text(raw: str) -> str:
    """The prompt in a UserPromptSubmit payload (``{"prompt": ...}``); plain text as is."""
    raw = raw.strip()
    if raw.startswith("{"):
        payload = json.loads(raw)
        prompt = payload.get("prompt") if isinstance(payload, dict) else None
        return prompt if isinstance(prompt, str) else ""
    return raw


def prompt_context(raw: str, config_path: str | os.PathLike[str] | None = None,
                   budget: int | None = None,
                   library: str | os.PathLike[str] | None = None) -> str:
    """The best passages for the prompt in ``raw``, or "" when it is short or unmatched."""
    prompt = prompt_text(raw)
    if len(prompt.split()) < MIN_WORDS:
        return ""

    limit = budget or PROMPT_BUDGET
    with _open(config_path, library) as lib:  # a long prompt is searched by its beginning
        found = lib.search(clip(prompt, MAX_QUERY_CHARS), top_k=PROMPT_HITS, mode="keyword")
        if not found.hits or found.low_confidence:
            return ""
        lines = [HEADER]
        used = len(HEADER)
        per_hit = max(120, (limit - used) // len(found.hits))
        for i, hit in enumerate(found.hits, start=1):
            head = f"[{i}] {hit.citation}"
            room = min(per_hit, limit - used) - len(head) - 2
            if room < 60:
                break
            lines += [head, clip(flat(hit.text), room)]
            used += len(head) + 2 + min(room, len(hit.text))
    return "\n".join(lines) if len(lines) > 1 else ""


def session_context(config_path: str | os.PathLike[str] | None = None,
                    budget: int | None = None,
                    library: str | os.PathLike[str] | None = None) -> str:
    """A compact table of contents within ``budget`` characters: the books ingested one by
    one first (real books before notes), each with its chapters, then each ingested folder
    as one entry (a collection: its file count and a few of its names), so a folder of a
    hundred notes cannot push the books out. Every entry gets a fair share of what is left
    (a short line leaves more to the next), so a book with a long table of contents cannot
    push the others out either; what does not fit is counted, not cut mid-line."""
    limit = budget or SESSION_BUDGET
    with _open(config_path, library) as lib:
        books = lib.list_books()
        if not books:
            return ""
        singles, folders = shelves(books)
        lines = [f"Local book library (grimoire-beholder, {plural(len(books), 'book')}; MCP tools "
                 "search_book, get_book_outline, get_section):"]
        entries: list[Callable[[], str]] = [partial(_book_line, lib, b) for b in singles]
        entries += [partial(_folder_line, f) for f in folders]
        used = len(lines[0])
        more = "… and {} more books or folders (list_books)"
        for shown, entry in enumerate(entries):
            left = len(entries) - shown
            share = (limit - used) // left - 1
            line = clip(flat(entry()), max(MIN_ENTRY, min(ENTRY_MAX, share)))
            # room is kept for the "… and N more" line while entries remain after this one
            reserve = len(more.format(left)) + 1 if left > 1 else 0
            if used + len(line) + 1 + reserve > limit:
                lines.append(more.format(left))
                break
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)


def _book_line(lib: Library, book: BookRow) -> str:
    chapters = [c.title for c in lib.outline(book.id).chapters]
    by = f" — {book.author}" if book.author else ""
    return f"- {book.slug}: {book.name}{by} ({len(chapters)} ch.): " + "; ".join(
        clip(flat(t), 60) for t in chapters)


def _folder_line(folder: IngestedFolder) -> str:
    """One ingested folder: how many files, its top-level groups, the first names."""
    books = folder.books
    groups = sorted(g for g, _ in folder.groups())
    names = ", ".join(b.name for b in books[:COLLECTION_NAMES])
    more = f", … ({len(books) - COLLECTION_NAMES} more)" if len(books) > COLLECTION_NAMES \
        else ""
    inside = f"; folders {', '.join(groups)}" if groups else ""
    return (f"- folder {folder.root} ({plural(len(books), 'file')}{inside}; search_book "
            f"path_prefix={folder.root!r} searches only it): {names}{more}")
