"""``sync --watch`` names a file that keeps failing (a corrupt PDF) once: each batch tries it
again, and every batch that saw any other change in the folder printed its ``failed`` line
(and a skipped file's warning) again, so a person saving an unrelated note saw the same
failure after every save. It is named again when its own file changed and still fails, a
fixed one is told as added, and Ctrl-C says how many files are still failing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf
import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config

CONFIG = ('[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
          'llm_backend = "none"\nchunk_size = 120\nchunk_overlap = 20\n')


@dataclass
class Watch:
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
def watching(config: Path) -> Iterator[Watch]:
    """``grimoire-beholder sync --watch`` on ``config``'s library, past its first sync."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grimoire_beholder.cli.entry", "sync", "--watch"],
        env={**os.environ, "GRIMOIRE_BEHOLDER_CONFIG": str(config)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8")
    watch = Watch(proc)
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


def _pdf(path: Path, text: str) -> None:
    """A real one-page PDF at ``path``, put in place at once (as a download finishes)."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    part = path.parent.parent / f"{path.name}.part"
    doc.save(part)
    doc.close()
    os.replace(part, path)


@pytest.mark.slow  # ~2 s of real waiting or subprocesses: the fast tier stays under 2 min
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event on Windows")
@pytest.mark.timeout(180)
def test_a_failing_file_is_named_once_and_again_when_it_changes(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("tides", "lamps"):
        (notes / f"{name}.md").write_text(f"# {name}\n\nA note about {name} and harbours.\n",
                                          encoding="utf-8")
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 torn off after the header")
    (notes / "torn.pdf").write_bytes(b"%PDF-1.4 torn off too")
    (notes / "empty.md").write_text("# Only a heading\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        assert len(lib.ingest_folder(notes).failed) == 2

    with watching(config) as watch:
        # the first sync names every problem, as `sync` does
        assert [watch.named(n) for n in ("broken.pdf", "torn.pdf", "empty.md")] == [1, 1, 1]
        watch.edit(notes / "tides.md", "Spring tides")  # two saves of another note
        watch.edit(notes / "lamps.md", "Brass lamps")
        assert any(line.startswith("changed   lamps.md") for line in watch.err), watch.err
        assert [watch.named(n) for n in ("broken.pdf", "torn.pdf", "empty.md")] == [1, 1, 1], (
            watch.err)
        assert "skipped 1 · failed 2" in watch.out[-1]  # still counted in each report

        (notes / "broken.pdf").write_bytes(b"%PDF-1.4 torn off elsewhere")  # still broken
        assert watch.until(lambda: watch.named("broken.pdf") == 2), watch.err
        assert [watch.named(n) for n in ("torn.pdf", "empty.md")] == [1, 1]

        reports = len(watch.out)
        _pdf(notes / "torn.pdf", "The keeper trims the wick at dusk.")  # mended
        assert watch.until(lambda: len(watch.out) > reports), watch.err
        assert any(line.startswith("added     torn.pdf") for line in watch.err), watch.err
        assert "failed 1" in watch.out[-1]

        watch.proc.send_signal(signal.SIGINT)
        assert watch.proc.wait(timeout=30) == 0
    assert watch.named("torn.pdf") == 1 and watch.named("broken.pdf") == 2
    assert [line for line in watch.err if "still failing" in line] == [
        "stopped; 1 file still failing: broken.pdf"], watch.err
