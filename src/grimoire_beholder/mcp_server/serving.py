"""What every MCP tool module (``mcp_server``, ``reading_tools``, ``upkeep_tools``) shares: the
state the server's lifespan opens once, the ``book_id`` argument, and results whose every
string is bounded.

Kept apart so the tool modules import it and ``mcp_server`` imports them, with no cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server import tool_text
from grimoire_beholder.mcp_server.allowed import Upkeep
from grimoire_beholder.mcp_server.tool_text import tool_result
from grimoire_beholder.text import clip

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

FIELD_MAX = 300  # any string not bounded where it is made (titles, names, the echoed
# question): a 1 MB heading or question must not make a 1 MB response

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

BookId = Annotated[int | str, Field(
    description="The book: its numeric id (e.g. 3) or its slug string (e.g. \"art-of-war\"), "
                "as returned by list_books or search_book. A number is always an id.")]


@dataclass
class ServerState:
    """What the lifespan opens once and every tool call shares."""

    library: Library
    upkeep: Upkeep | None = None  # the write tools the user allowed (mcp_server/upkeep_tools.py)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, fn: Callable[[Library], T]) -> T:
        """Call the Library under the lock, turning its user-facing errors into ToolErrors."""
        with self.lock:
            try:
                return fn(self.library)
            except GrimoireError as exc:
                raise ToolError(str(exc)) from exc


def served(ctx: Context) -> ServerState:
    """The state of the server this tool call runs in (``mcp_server.create_server``)."""
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state


# Fields bounded where they are made (None), or with a budget of their own.
_FIELD_LIMITS: dict[str, int | None] = {"text": None, "context": None, "note": None,
                                        "summary": tool_text.SUMMARY_CHARS}


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


def bounded_result(render: Callable[[M], str], model: M) -> CallToolResult:
    """The tool result (text and structure) of ``model`` with every string field bounded."""
    bounded = type(model).model_validate(_clip_fields(model.model_dump(mode="json")))
    return tool_result(render(bounded), bounded)
