"""A ``Library.watch`` running in a thread, and ``sync --watch`` run by the real CLI in a
subprocess, for the tests of ``sync --watch``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library

# A library's config.toml for the CLI watch: fake embedder, no LLM, small chunks.
CLI_CONFIG = ('[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
              'llm_backend = "none"\nchunk_size = 120\nchunk_overlap = 20\n')


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


@dataclass
class CliWatch:
    """``sync --watch`` running as a subprocess: the lines it wrote so far, each stream's."""

    proc: subprocess.Popen[str]
    out: list[str] = field(default_factory=list)  # one summary line per report
    err: list[str] = field(default_factory=list)

    def until(self, done: Callable[[], bool], seconds: float = 30) -> bool:
        """Poll ``done`` every 0.1 s for at most ``seconds``; its last answer."""
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.1)
        return done()

    def named(self, name: str) -> int:
        """How many stderr lines named ``name`` as failed or skipped."""
        return sum(1 for line in self.err if name in line and line.startswith(
            ("failed", "skipped", "warning: skipped")))

    def edit(self, path: Path, text: str) -> None:
        """Write ``text`` into ``path`` until a report follows (just after the first sync
        the watcher may not be listening yet)."""
        seen = len(self.out)
        for attempt in range(6):
            path.write_text(f"# Note\n\n{text} (draft {attempt}).\n", encoding="utf-8")
            if self.until(lambda: len(self.out) > seen, 10):
                return
        raise AssertionError(f"no report after editing {path.name}: {self.err}")


@contextmanager
def cli_watching(config: Path, *options: str) -> Iterator[CliWatch]:
    """``grimoire-beholder sync --watch`` (and ``options``) on ``config``'s library, run by
    the real CLI in a subprocess, past its first sync."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grimoire_beholder.cli.entry", "sync", "--watch", *options],
        env={**os.environ, "GRIMOIRE_BEHOLDER_CONFIG": str(config)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8")
    watch = CliWatch(proc)
    readers = [threading.Thread(target=lambda s=stream, into=lines: into.extend(
        line.rstrip("\n") for line in s), daemon=True)
        for stream, lines in ((proc.stdout, watch.out), (proc.stderr, watch.err))]
    for reader in readers:
        reader.start()
    try:
        assert watch.until(lambda: len(watch.out) == 1), watch.err  # the first sync
        yield watch
    finally:
        proc.kill()
        proc.wait(timeout=30)
        for reader in readers:
            reader.join(timeout=10)


def pdf(path: Path, text: str) -> None:
    """A real one-page PDF at ``path``, put in place at once (as a download finishes)."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    part = path.parent.parent / f"{path.name}.part"
    doc.save(part)
    doc.close()
    os.replace(part, path)
