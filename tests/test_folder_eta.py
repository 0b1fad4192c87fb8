"""A folder ingest reports its progress in chunks, so its ETA follows the embedding work.

One big book and several small notes: counted in files, the bar would be nearly done after
the notes while most of the work (the big book's chunks) is still ahead.
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.ingest.progress import FolderChunks, estimate_chunks
from grimoire_beholder.library import Library
from helpers import fake_config


class Recorder:
    """A Progress that keeps every stage and advance, in order."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, int]] = []
        self.advances: list[int] = []
        self.messages: list[str] = []

    def stage(self, name: str, total: int) -> None:
        self.stages.append((name, total))

    def advance(self, n: int = 1) -> None:
        self.advances.append(n)

    def message(self, text: str) -> None:
        self.messages.append(text)


def _book(path: Path, paragraphs: int, topic: str) -> Path:
    body = [f"# {topic.title()}", ""]
    for i in range(paragraphs):
        body += [f"## Part {i}", "", " ".join(f"{topic} word{i} number{j}" for j in range(60)),
                 ""]
    path.write_text("\n".join(body), encoding="utf-8")
    return path


def test_folder_progress_is_one_chunks_stage_ending_at_its_total(tmp_path: Path) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    big = _book(folder / "a-big.md", 40, "harbour")
    notes = [_book(folder / f"note{i}.md", 1, f"lantern{i}") for i in range(4)]
    recorder = Recorder()
    config = fake_config(tmp_path, embed_batch_size=4)
    with Library.open(config=config) as lib:
        report = lib.ingest_folder(folder, progress=recorder)
        stored = {b.slug: b.chunks for b in lib.list_books()}
    assert report.counts().get("added") == 5
    expected = [estimate_chunks(str(p), p.stat().st_size) for p in [big, *notes]]
    assert recorder.stages == [("chunks", sum(expected))]
    assert sum(recorder.advances) == sum(expected)
    # The big book (first in name order) moves the bar batch by batch while it is embedded,
    # and takes its own share of it, not one file's worth out of five.
    big_chunks = max(stored.values())
    assert big_chunks >= 12
    assert len(recorder.advances) >= big_chunks // 4
    assert sum(recorder.advances[:-4]) == expected[0]
    assert recorder.advances[-4:] == expected[1:]


def test_a_book_larger_than_guessed_never_runs_past_its_share() -> None:
    recorder = Recorder()
    chunks = FolderChunks(recorder)
    chunks.start([10, 5])
    first = chunks.file(10)
    first.stage("embeddings", 40)  # four times the guess
    for _ in range(40):
        first.advance(1)
    assert sum(recorder.advances) == 9  # the last one comes when the file is done
    chunks.done()
    assert sum(recorder.advances) == 10
    second = chunks.file(5)
    second.stage("embeddings", 2)  # fewer than guessed (or most vectors reused)
    second.advance(2)
    chunks.done()
    assert recorder.stages == [("chunks", 15)] and sum(recorder.advances) == 15


def test_a_failed_file_still_completes_its_share() -> None:
    recorder = Recorder()
    chunks = FolderChunks(recorder)
    chunks.start([3, 7])
    chunks.file(3)
    chunks.done()  # parsing failed: no stage ran
    assert sum(recorder.advances) == 3


class Retotalling(Recorder):
    """A listener that takes a better total once a file's chunks are known (the rich bar,
    MCP progress), so the bar counts real chunks."""

    def __init__(self) -> None:
        super().__init__()
        self.totals: list[int] = []

    def retotal(self, total: int) -> None:
        self.totals.append(total)


def test_the_bar_counts_the_chunks_really_embedded(tmp_path: Path) -> None:
    """The final frame reads N/N with N the chunks embedded, as the summary line says, not
    the first guess made from the files' sizes."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    _book(folder / "a-big.md", 40, "harbour")
    for i in range(3):
        _book(folder / f"note{i}.md", 1, f"lantern{i}")
    recorder = Retotalling()
    with Library.open(config=fake_config(tmp_path, embed_batch_size=4)) as lib:
        report = lib.ingest_folder(folder, progress=recorder)
    assert recorder.totals and recorder.totals[-1] == report.embedded
    assert sum(recorder.advances) == report.embedded != recorder.stages[0][1]


def test_a_file_larger_than_guessed_grows_the_total() -> None:
    recorder = Retotalling()
    chunks = FolderChunks(recorder)
    chunks.start([10, 5])
    first = chunks.file(10)
    first.stage("embeddings", 40)  # four times the guess: the total grows by 30
    first.advance(40)
    chunks.done()
    chunks.file(5)
    chunks.done()  # failed before any stage: its guess is counted as done
    assert recorder.totals == [45] and sum(recorder.advances) == 45
