"""Context for AI-assistant hooks (Claude Code ``SessionStart`` and ``UserPromptSubmit``).

Why hooks as well as the MCP server: the assistant only calls ``search_book`` when it thinks
of it. A session-start table of contents tells it what the library holds; a per-prompt
lookup puts the few best passages in front of it before it answers, at a bounded cost in
context characters.

Constraints, because a hook runs on every prompt: keyword search only (loading the
embedding model would take a second), the library opened read-only, reranking off, short
prompts (fewer than :data:`MIN_WORDS` words) and weak matches (confidence below
``min_confidence``) skipped, output capped at a character budget: everything printed, its
header and final newline included, is at most ``--budget`` characters (a budget too small
for anything useful prints nothing). :func:`print_hook` is what both ``hook`` commands
run: every exception becomes silence.

The prompt hook's stdin is read bounded (:func:`read_payload`): at most
:data:`PAYLOAD_LIMIT` bytes and :data:`READ_SECONDS` seconds, so an endless or stalled pipe
can neither hang the assistant's prompt nor fill memory; a payload cut short is searched by
its prompt's beginning, as a long prompt is, or else skipped in silence.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import IO, Literal

from grimoire_beholder.library import BookRow, Library
from grimoire_beholder.text import MAX_QUERY_CHARS, clip, flat, plural
from grimoire_beholder.views import IngestedFolder, shelves

MIN_WORDS = 4
PROMPT_BUDGET = 1500
SESSION_BUDGET = 2000
PROMPT_HITS = 3
MIN_PASSAGE = 60  # characters of a passage's text, at least, or it is left out
COLLECTION_NAMES = 5  # names shown of an ingested folder's files
MIN_ENTRY = 80  # characters an entry of the session table of contents always gets
ENTRY_MAX = 400  # and at most
HEADER = "Passages from the local book library (grimoire-beholder) that may help:"
# Bounds on reading a prompt hook's payload from stdin. Claude Code's is a few hundred bytes
# plus the prompt, and only the prompt's first MAX_QUERY_CHARS are searched.
PAYLOAD_LIMIT = 1 << 20  # bytes
READ_SECONDS = 3.0  # for the whole payload; Claude Code writes it at once and closes
_POLL = 0.02
_PROMPT_KEY = re.compile(r'"prompt"\s*:\s*"')
_STRING_BODY = re.compile(r'(?:[^"\\]|\\.)*\\?')  # a JSON string's inside, to its end
TERMINAL_HINT = ("hook prompt reads a Claude Code UserPromptSubmit payload from stdin, e.g. "
                 "echo '{\"prompt\": \"how do slugs eat\"}' | grimoire-beholder hook prompt")


def print_hook(hook: Literal["session-start", "prompt"], budget: int | None = None,
               config_path: str | os.PathLike[str] | None = None,
               library: str | os.PathLike[str] | None = None) -> None:
    """Print what ``hook session-start`` or ``hook prompt`` (its payload read from stdin)
    gives the assistant; on any failure print nothing: a hook must never break it."""
    try:
        if hook == "prompt":
            if sys.stdin is None:
                return
            if sys.stdin.isatty():  # a person trying it by hand
                sys.stderr.write(TERMINAL_HINT + "\n")
                return
            raw, whole = read_payload(sys.stdin)
            text = prompt_context(raw, config_path, budget, library, whole=whole)
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


def read_payload(stream: IO[str], limit: int = PAYLOAD_LIMIT,
                 seconds: float = READ_SECONDS) -> tuple[str, bool]:
    """What ``stream`` holds, as text, and whether that is all of it: reading stops at
    end of input, after ``limit`` bytes, after ``seconds``, or as soon as a whole JSON
    object has come while the writer keeps the pipe open. A stream without a file
    descriptor (an in-process caller's) is read up to ``limit`` at once."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        text = stream.read(limit + 1)
        return text[:limit], len(text) <= limit
    chunks: list[bytes] = []
    ended = threading.Event()
    at_end: list[bool] = []

    def pump() -> None:  # os.read: a daemon thread blocked in it never holds exit up
        total = 0
        try:
            while total <= limit:
                piece = os.read(fd, min(1 << 16, limit + 1 - total))
                if not piece:
                    at_end.append(True)
                    break
                chunks.append(piece)
                total += len(piece)
        except OSError:
            pass
        finally:
            ended.set()

    threading.Thread(target=pump, name="hook-stdin", daemon=True).start()
    deadline, seen = time.monotonic() + seconds, 0
    while not ended.wait(_POLL) and time.monotonic() < deadline:
        if len(chunks) != seen:  # the pipe stays open: is a whole payload here already?
            seen = len(chunks)
            if chunks[seen - 1].rstrip().endswith(b"}") and _is_json(b"".join(chunks[:seen])):
                return b"".join(chunks[:seen]).decode("utf-8", "replace"), True
    data = b"".join(list(chunks))
    whole = bool(at_end) and len(data) <= limit
    return data[:limit].decode("utf-8", "replace"), whole


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def prompt_text(raw: str, *, whole: bool = True) -> str:
    """The prompt in a UserPromptSubmit payload (``{"prompt": ...}``); plain text as is.
    A payload cut short (``whole`` false) gives the beginning of its prompt, when it got
    that far; a long prompt is searched by its beginning anyway."""
    raw = raw.strip()
    if not raw.startswith("{"):
        return raw
    try:
        payload = json.loads(raw)
    except ValueError:
        if whole:
            raise
        return _prompt_beginning(raw)
    prompt = payload.get("prompt") if isinstance(payload, dict) else None
    return prompt if isinstance(prompt, str) else ""


def _prompt_beginning(raw: str) -> str:
    """The decoded beginning of the ``"prompt"`` string of a JSON payload cut short."""
    found = _PROMPT_KEY.search(raw)
    if found is None:
        return ""
    start = found.end()  # a bounded piece: the pattern's memory grows with what it reads
    body = _STRING_BODY.match(raw[start:start + 4 * MAX_QUERY_CHARS])
    text = body.group() if body else ""
    for cut in range(len(text), max(len(text) - 6, 0) - 1, -1):  # not inside an escape
        try:
            return str(json.loads(f'"{text[:cut]}"'))
        except ValueError:
            continue
    return ""


def prompt_context(raw: str, config_path: str | os.PathLike[str] | None = None,
                   budget: int | None = None,
                   library: str | os.PathLike[str] | None = None, *,
                   whole: bool = True) -> str:
    """The best passages for the prompt in ``raw`` (``whole``: as for :func:`prompt_text`),
    or "" when it is short or unmatched; with the newline :func:`print_hook` adds, at most
    ``budget`` characters. Up to :data:`PROMPT_HITS` share the budget equally; when it is
    too small for that many, the best fewer get it (one passage rather than silence)."""
    prompt = prompt_text(raw, whole=whole)
    if len(prompt.split()) < MIN_WORDS:
        return ""

    limit = (budget or PROMPT_BUDGET) - 1  # the final newline is printed too
    with _open(config_path, library) as lib:  # a long prompt is searched by its beginning
        found = lib.search(clip(prompt, MAX_QUERY_CHARS), top_k=PROMPT_HITS, mode="keyword")
        if not found.hits or found.low_confidence:
            return ""
        hits = [(str(hit.citation), flat(hit.text)) for hit in found.hits]
    for count in range(len(hits), 0, -1):  # fewer, longer passages when all would not fit
        lines = _passages(hits[:count], limit)
        if len(lines) == count * 2 + 1:
            return "\n".join(lines)
    return ""


def _passages(hits: list[tuple[str, str]], limit: int) -> list[str]:
    """The header, then each hit's citation line and its text clipped to an equal share of
    ``limit`` characters (lines joined by newlines), as far as each gets
    :data:`MIN_PASSAGE` characters of text."""
    lines, used = [HEADER], len(HEADER)
    per_hit = max(120, (limit - used) // len(hits))
    for i, (citation, text) in enumerate(hits, start=1):
        head = f"[{i}] {citation}"
        room = min(per_hit, limit - used) - len(head) - 2
        if room < MIN_PASSAGE:
            break
        lines += [head, clip(text, room)]
        used += len(head) + 2 + min(room, len(text))
    return lines


def session_context(config_path: str | os.PathLike[str] | None = None,
                    budget: int | None = None,
                    library: str | os.PathLike[str] | None = None) -> str:
    """A compact table of contents that, with the newline :func:`print_hook` adds, is at
    most ``budget`` characters: the books ingested one by one first (real books before
    notes), each with its chapters, then each ingested folder as one entry (a collection:
    its file count and a few of its names), so a folder of a hundred notes cannot push the
    books out. Every entry gets a fair share of what is left (a short line leaves more to
    the next), so a book with a long table of contents cannot push the others out either;
    what does not fit is counted ("… and N more"), not cut mid-line. A budget too small for
    the header naming the MCP tools gets a shorter one, and one too small for any entry the
    count alone (:func:`_layout`)."""
    limit = (budget or SESSION_BUDGET) - 1  # the final newline is printed too
    with _open(config_path, library) as lib:
        books = lib.list_books()
        if not books:
            return ""
        singles, folders = shelves(books)
        makers = [partial(_book_line, lib, b) for b in singles]
        makers += [partial(_folder_line, f) for f in folders]
        made: dict[int, str] = {}  # each entry read once, and only when it is reached

        def entry(n: int) -> str:
            if n not in made:
                made[n] = flat(makers[n]())
            return made[n]

        return _layout(plural(len(books), "book"), len(makers), entry, limit)


def _layout(books: str, count: int, entry: Callable[[int], str], limit: int) -> str:
    """The table of contents of ``count`` entries in at most ``limit`` characters: under
    the full header (it names the MCP tools) or, when that leaves no room for an entry, a
    short one; with neither room for an entry, the header and the "… and N more" line;
    else the count alone; else nothing."""
    headers = [f"Local book library (grimoire-beholder, {books}; MCP tools search_book, "
               "get_book_outline, get_section):",
               f"Local book library (grimoire-beholder, {books}):"]
    fallback: list[str] = []
    for header in headers:  # the short one is laid out only when the full one shows none
        lines, shown = _entries(header, count, entry, limit)
        if shown:
            return "\n".join(lines)
        fallback = fallback or lines
    if fallback:
        return "\n".join(fallback)
    alone = f"grimoire-beholder: {books} (list_books)"
    return alone if len(alone) <= limit else ""


def _more(left: int) -> str:
    return f"… and {left} more {'book or folder' if left == 1 else 'books or folders'} " \
           "(list_books)"


def _entries(header: str, count: int, entry: Callable[[int], str], limit: int
             ) -> tuple[list[str], int]:
    """``header`` and as many entries as fit in ``limit`` characters (lines joined by
    newlines), then the "… and N more" line for the rest, and how many entries that shows;
    ([], 0) when the header and that line do not fit together."""
    lines, used = [header], len(header)
    if used + 1 + len(_more(count)) > limit:
        return [], 0
    for shown in range(count):
        left = count - shown
        share = (limit - used) // left - 1
        line = clip(entry(shown), max(MIN_ENTRY, min(ENTRY_MAX, share)))
        # room is kept for the "… and N more" line while entries remain after this one
        reserve = len(_more(left - 1)) + 1 if left > 1 else 0
        if used + len(line) + 1 + reserve > limit:
            return [*lines, _more(left)], shown
        lines.append(line)
        used += len(line) + 1
    return lines, count


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
