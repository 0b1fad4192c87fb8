"""What every MCP tool family module (``*_tools.py``) shares: the state the server's lifespan
opens once, the ``book_id`` argument, the field descriptions of a located passage, and the one
way a tool makes its result — :func:`bounded_result`, which clips every string field before
the readable text and the structured content are made from it.

``server.py`` imports the tool modules and they import this one, so there is no cycle.
"""

from __future__ import annotations

import re
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.locate import file_identity, missing_library
from grimoire_beholder.mcp_server.allowed import Upkeep
from grimoire_beholder.text import clip

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

FIELD_MAX = 300  # any string not bounded where it is made (titles, names, the echoed
# question, paths, warnings): a 1 MB heading or question must not make a 1 MB response
SUMMARY_CHARS = 1_000  # a section's summary above its text

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

BookId = Annotated[int | str, Field(
    description="The book: its numeric id (e.g. 3) or its slug string (e.g. \"art-of-war\"), "
                "as returned by list_books or search_book. A number is always an id.")]


@dataclass
class ServerState:
    """What the lifespan opens once and every tool call shares."""

    library: Library
    upkeep: Upkeep | None = None  # the write tools the user allowed (upkeep_tools.py)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Over HTTP the upkeep is each request's token's (http_auth.TokenAuth.upkeep), not the
    # server's: called inside a request, it says what that request may do.
    grants: Callable[[], Upkeep] | None = None

    def __post_init__(self) -> None:
        self._file = self._library_file()

    def _library_file(self) -> tuple[int, int] | None:
        if self.library.server is not None:  # a PostgreSQL library: no file to follow
            return None
        return file_identity(self.library.config.database_path)

    def _follow_the_file(self) -> None:
        """Serve the library file that is at the library's path now. An open connection goes
        on reading a file deleted or replaced under it, so a library deleted and built again
        was served as it had been until the server restarted, its new books never seen; a
        library file that is gone is an error naming its path. Under ``lock``."""
        if self.library.server is not None:
            return
        now = self._library_file()
        if now == self._file:
            return
        if now is None:
            raise missing_library(self.library.config)
        old = self.library
        self.library = Library.open(config=old.config, read_only=True, embedder=old.embedder)
        self._file = now
        old.close()

    def allowed_upkeep(self) -> Upkeep | None:
        """The upkeep the current call may do: its token's over HTTP, else the server's."""
        return self.grants() if self.grants is not None else self.upkeep

    def run(self, fn: Callable[[Library], T]) -> T:
        """Call the Library under the lock, turning its user-facing errors into ToolErrors.

        Any other exception (a bug, a fault from below the library) is a ToolError too, one
        that names its kind and message, so the model and the user see what failed; its
        traceback is written once, plainly, to stderr (the server's log), and the server goes
        on answering."""
        with self.lock:
            try:
                self._follow_the_file()
                return fn(self.library)
            except GrimoireError as exc:
                raise ToolError(str(exc)) from exc
            except ToolError:
                raise
            except Exception as exc:
                traceback.print_exception(exc, file=sys.stderr)
                raise ToolError(f"unexpected error ({type(exc).__name__}): {exc}; the "
                                "server's log (stderr) has the details") from exc


def served(ctx: Context) -> ServerState:
    """The state of the server this tool call runs in (``server.create_server``)."""
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state


# Fields bounded where they are made (None), or with a budget of their own.
_FIELD_LIMITS: dict[str, int | None] = {"text": None, "context": None, "note": None,
                                        "summary": SUMMARY_CHARS}


def _clip_fields(value: Any, key: str = "") -> Any:
    """Every string in a dumped result clipped to its limit (FIELD_MAX unless listed)."""
    if isinstance(value, str):
        limit = _FIELD_LIMITS.get(key, FIELD_MAX)
        return value if limit is None else clip(value, limit)
    if isinstance(value, list):
        return [_clip_fields(v, key) for v in value]
    if isinstance(value, dict):
        return {k: _clip_fields(v, k) for k, v in value.items()}
    return value


def bounded(model: M) -> M:
    """A copy of ``model`` with every string field clipped to its limit."""
    return type(model).model_validate(_clip_fields(model.model_dump(mode="json")))


def bounded_result(render: Callable[[M], str], model: M,
                   extra: Sequence[ContentBlock] = ()) -> CallToolResult:
    """The tool result of ``model``: every string field bounded, then the readable text
    (``render`` of the bounded model) for the model to read, any ``extra`` content (a page
    image) after it, and the bounded model as structured content for clients that read it."""
    shown = bounded(model)
    return CallToolResult(content=[TextContent(type="text", text=render(shown)), *extra],
                          structured_content=shown.model_dump(mode="json"))


# Every line break Python's splitlines knows: book text and file names may hold any of them.
_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
QUOTE = "   │ "  # what starts every line of book text in a tool's text result


def one_line(text: str) -> str:
    """A name, heading or citation from a book or a file name, on one line: each line
    break written as ``⏎``, so it cannot start a line that looks like the result's own."""
    return _BREAKS.sub(" ⏎ ", text)


def quoted(text: str) -> str:
    """Book text as a quote: every line starts with QUOTE, so no excerpt can look like
    another hit, a citation or an instruction of the result's own (hits are forged by
    pasting ``\n\n2. policy.md:3 · …`` into a book otherwise)."""
    return "\n".join(QUOTE + line for line in _BREAKS.split(text))


def with_note(lines: list[str], note: str | None) -> str:
    """The lines, and the result's note as the last one when it has one."""
    return "\n".join([*lines, note] if note else lines)


# Field descriptions shared by the families' result shapes.
LOCATION = Field(description="Where it is, written as every tool writes it: "
                            "'pp. 19–20 (printed 15–16)' (PDF), 'loc. 18–19' (EPUB: "
                            "positions, not printed pages), 'notes/a.md:12-20' (Markdown/text).")
ROLE = ("What part of the book: body, front_matter, contents, index, notes, bibliography or "
        "glossary (search_book's role filter).")


class Located(BaseModel):
    """Where a passage is: the book, and the indices get_section takes."""

    book_id: int
    slug: str
    book: str
    chapter_index: int = Field(description="0-based; pass to get_section.")
    chapter: str
    section_index: int = Field(description="0-based within the chapter; pass to get_section.")
    section: str
    page_start: int | None
    page_end: int | None
    page_label: str | None = Field(description="The PDF's printed page label(s), if any.")
    line_start: int | None = Field(description="For Markdown/text books, 1-based.")
    line_end: int | None
    citation: str = Field(description="Book · chapter › section · location (Markdown/text: "
                                      "file:lines · chapter › section), for quoting as is.")
    location: str = LOCATION
