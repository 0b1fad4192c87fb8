"""Context for AI-assistant hooks (Claude Code ``SessionStart`` and ``UserPromptSubmit``).

Why hooks as well as the MCP server: the assistant only calls ``search_book`` when it thinks
of it. A session-start table of contents tells it what the library holds; a per-prompt
lookup puts the few best passages in front of it before it answers, at a bounded cost in
context characters.

Constraints, because a hook runs on every prompt: keyword search only (loading the
embedding model would take a second), the library opened read-only, reranking off, short
prompts (fewer than :data:`MIN_WORDS` words) and weak matches (confidence below
``min_confidence``) skipped, output capped at a character budget. Callers turn every
exception into silence (see ``cli_tools.py``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .library import Library

MIN_WORDS = 4
PROMPT_BUDGET = 1500
SESSION_BUDGET = 2000
PROMPT_HITS = 3
HEADER = "Passages from the local book library (grimoire-beholder) that may help:"


def _open(config_path: str | os.PathLike[str] | None) -> Library:
    from .config import load_config

    cfg = load_config(config_path).with_overrides(retrieval_mode="keyword", reranker="none")
    return Library.open(config=cfg, read_only=True)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def _where(hit: Any) -> str:
    """``Book · Chapter › Section · p. 12`` (or a line range) — compact, no rich markup."""
    parts = [hit.book, hit.section or hit.chapter]
    if hit.page_start is not None:
        label = hit.page_label or str(hit.page_start)
        parts.append(f"p. {label}")
    elif hit.line_start is not None:
        parts.append(f"lines {hit.line_start}-{hit.line_end}")
    return " · ".join(p for p in parts if p)


def prompt_text(raw: str) -> str:
    """The prompt in a UserPromptSubmit payload (``{"prompt": ...}``); plain text as is."""
    raw = raw.strip()
    if raw.startswith("{"):
        payload = json.loads(raw)
        prompt = payload.get("prompt") if isinstance(payload, dict) else None
        return prompt if isinstance(prompt, str) else ""
    return raw


def prompt_context(raw: str, config_path: str | os.PathLike[str] | None = None,
                   budget: int | None = None) -> str:
    """The best passages for the prompt in ``raw``, or "" when it is short or unmatched."""
    prompt = prompt_text(raw)
    if len(prompt.split()) < MIN_WORDS:
        return ""
    limit = budget or PROMPT_BUDGET
    with _open(config_path) as lib:
        found = lib.search(prompt, top_k=PROMPT_HITS, mode="keyword")
        if not found.hits or found.low_confidence:
            return ""
        lines = [HEADER]
        used = len(HEADER)
        per_hit = max(120, (limit - used) // len(found.hits))
        for i, hit in enumerate(found.hits, start=1):
            head = f"[{i}] {_where(hit)}"
            room = min(per_hit, limit - used) - len(head) - 2
            if room < 60:
                break
            lines += [head, _clip(hit.text, room)]
            used += len(head) + 2 + min(room, len(hit.text))
    return "\n".join(lines) if len(lines) > 1 else ""


def session_context(config_path: str | os.PathLike[str] | None = None,
                    budget: int | None = None) -> str:
    """A compact table of contents: each book with its chapters, within ``budget`` chars."""
    limit = budget or SESSION_BUDGET
    with _open(config_path) as lib:
        books = lib.list_books()
        if not books:
            return ""
        lines = [f"Local book library (grimoire-beholder, {len(books)} books; MCP tools "
                 "search_book, get_book_outline, get_section):"]
        used = len(lines[0])
        for shown, book in enumerate(books):
            chapters = [c.title for c in lib.outline(book.id).chapters]
            by = f" — {book.author}" if book.author else ""
            line = f"- {book.slug}: {book.name}{by} ({len(chapters)} ch.): " + "; ".join(
                _clip(t, 60) for t in chapters)
            line = _clip(line, max(80, min(400, limit - used - 1)))
            if used + len(line) + 1 > limit:
                lines.append(f"… and {len(books) - shown} more books (list_books)")
                break
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)
