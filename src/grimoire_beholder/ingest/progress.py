"""How the pipeline reports progress without knowing who listens (rich bar, MCP log, nothing)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def stage(self, name: str, total: int) -> None:
        """A stage starts with ``total`` units of work."""
        ...

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current stage are done (and committed)."""
        ...

    def message(self, text: str) -> None:
        """A one-line note or warning for the user (goes to stderr in the CLI)."""
        ...


class NullProgress:
    """Reports nothing."""

    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def message(self, text: str) -> None:
        return None
