"""A ``Library.watch`` running in a thread, for the tests of ``sync --watch``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library


@dataclass
class Watching:
    """What the watcher told (its reports, best first as they came) and what it raised."""

    config: Config
    reports: list[Any] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def until(self, done: Callable[[], bool], seconds: float = 10) -> bool:
        """Poll ``done`` every 0.1 s for at most ``seconds``; its last answer."""
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            time.sleep(0.1)
        return done()

    def has(self, slug: str, seconds: float = 10) -> bool:
        """Whether the book ``slug`` is in the library, fully embedded, within ``seconds``."""
        def there() -> bool:
            with Library.open(config=self.config, read_only=True,
                              embedder=FakeEmbedder()) as lib:
                return any(b.slug == slug and b.status["embedded"] == b.chunks > 0
                           for b in lib.list_books())
        return self.until(there, seconds)


@contextmanager
def watching(config: Config) -> Iterator[Watching]:
    """A watch on ``config``'s library in a thread, past its first sync and settled; on
    leaving, it is stopped and must have stopped without raising."""
    seen = Watching(config)
    stop = threading.Event()

    def run() -> None:
        try:
            with Library.open(config=config, embedder=FakeEmbedder()) as watcher:
                watcher.watch(stop_event=stop, on_report=seen.reports.append, debounce_ms=200)
        except BaseException as exc:  # surfaced when the block ends
            seen.errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        seen.until(lambda: bool(seen.reports or seen.errors))  # the initial sync is done
        assert not seen.errors, seen.errors
        time.sleep(0.5)  # let the watcher settle before the change
        yield seen
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive() and not seen.errors, seen.errors
