"""How the pipeline reports progress without knowing who listens (rich bar, MCP log, nothing)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


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


@runtime_checkable
class Retotals(Protocol):
    """A Progress that can take a better total for its current stage (the rich bar, MCP
    progress): a folder run starts from guesses and corrects them file by file."""

    def retotal(self, total: int) -> None:
        """The current stage's total is now ``total``."""
        ...


class NullProgress:
    """Reports nothing."""

    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def message(self, text: str) -> None:
        return None


# Bytes of a file per chunk it becomes, by format: a first guess for the folder ETA, before a
# file is parsed (measured on the bench books and Markdown dev sets; the guess only spreads
# the bar over the files, each file's real chunks take its share once it is parsed).
_BYTES_PER_CHUNK = {".pdf": 1600, ".epub": 2000}
_TEXT_BYTES_PER_CHUNK = 900


def estimate_chunks(path: str, size: int) -> int:
    """How many chunks a file of ``size`` bytes probably becomes (at least 1)."""
    suffix = path[path.rfind("."):].lower() if "." in path else ""
    return max(1, size // _BYTES_PER_CHUNK.get(suffix, _TEXT_BYTES_PER_CHUNK))


class FolderChunks:
    """A folder run's progress in chunks, so its ETA follows the embedding work, not files.

    ``start`` opens one ``chunks`` stage on the outer Progress, its total the estimated
    chunks of every file to do. ``file(estimate)`` returns the Progress for one file's own
    stages: its ``embeddings`` advances move the outer bar by that file's share (its estimate
    spread over the chunks it really embeds, so a book larger than guessed moves the bar more
    slowly, not past its end), and ``done()`` tops the file's share up when it ends (reused
    vectors, a failed or skipped file) — at least its last chunk, so every file ends with an
    advance after its outcome is announced. Every listener (rich bar, MCP progress, nothing)
    sees one stage that ends exactly at its total. A listener that ``Retotals`` is told the
    better total as soon as a file's embedding starts (its share becomes the chunks it really
    embeds), so its bar counts real chunks and ends at the number the summary reports;
    for any other the total never changes.
    """

    def __init__(self, outer: Progress) -> None:
        self.outer = outer
        self._total = 0
        self._share = 0
        self._moved = 0
        self._todo = 0
        self._embedded = 0
        self._embedding = False

    def start(self, estimates: list[int]) -> None:
        self._total = sum(estimates)
        self.outer.stage("chunks", self._total)

    def file(self, estimate: int) -> Progress:
        """Begin one file whose share of the bar is ``estimate`` chunks."""
        self._share, self._moved, self._todo, self._embedded = estimate, 0, 0, 0
        self._embedding = False
        return self

    def done(self) -> None:
        """The current file ended (however): move the bar to the end of its share."""
        self._forward(self._share - self._moved)

    # -- the Progress of one file's stages ------------------------------------------------
    def stage(self, name: str, total: int) -> None:
        self._embedding = name == "embeddings"
        if self._embedding:
            self._todo, self._embedded = total, 0
            if isinstance(self.outer, Retotals) and self._moved == 0 and total > 0:
                self._total += total - self._share
                self._share = total
                self.outer.retotal(self._total)

    def advance(self, n: int = 1) -> None:
        if not self._embedding or self._todo <= 0:
            return
        self._embedded = min(self._todo, self._embedded + n)
        # The share's last chunk waits for done(), which comes after the file's outcome is
        # announced: listeners that label an advance with the latest message name the file.
        reached = min(self._share * self._embedded // self._todo, self._share - 1)
        self._forward(reached - self._moved)

    def message(self, text: str) -> None:
        self.outer.message(text)

    def _forward(self, n: int) -> None:
        if n > 0:
            self._moved += n
            self.outer.advance(n)
