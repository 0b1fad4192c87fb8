"""``sync --watch`` names a file that keeps failing (a corrupt PDF) once: each batch tries it
again, and every batch that saw any other change in the folder printed its ``failed`` line
(and a skipped file's warning) again, so a person saving an unrelated note saw the same
failure after every save. It is named again when its own file changed and still fails, a
fixed one is told as added, and Ctrl-C says how many files are still failing.

Ctrl-C with files still failing exits 1, as a one-shot ``sync`` that left files failing
does (it exited 0, so a script could not tell), and 0 when none are; and stderr then holds
only the watch's own lines: watchfiles' "KeyboardInterrupt caught, stopping watch" came
through too, even under ``--quiet`` and ``--json``."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config
from watch_helpers import CLI_CONFIG as CONFIG
from watch_helpers import cli_watching as watching
from watch_helpers import pdf as _pdf


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
        assert watch.proc.wait(timeout=30) == 1  # still failing: as a one-shot sync
    assert watch.named("torn.pdf") == 1 and watch.named("broken.pdf") == 2
    assert [line for line in watch.err if "still failing" in line] == [
        "stopped; 1 file still failing: broken.pdf"], watch.err
    assert watch.err[-1] == "stopped; 1 file still failing: broken.pdf", watch.err


@pytest.mark.slow  # subprocesses
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event on Windows")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("mended", [False, True], ids=["still-failing", "mended"])
def test_ctrl_c_under_json_exits_1_while_a_file_fails_and_says_only_its_own_lines(
        tmp_path: Path, mended: bool) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nA note about tides and harbours.\n",
                                    encoding="utf-8")
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 torn off after the header")
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    with Library.open(config=fake_config(tmp_path), embedder=FakeEmbedder()) as lib:
        assert len(lib.ingest_folder(notes).failed) == 1

    with watching(config, "--json", "--quiet") as watch:
        for attempt in range(6 if mended else 0):  # the watcher may not listen yet at first
            _pdf(notes / "broken.pdf", f"The keeper trims the wick at dusk ({attempt}).")
            if watch.until(lambda: '"failed": 0' in watch.out[-1], 10):
                break
        assert ('"failed": 0' in watch.out[-1]) == mended, (watch.out, watch.err)
        if not mended:  # Ctrl-C while the watcher listens, as after the mend
            watch.edit(notes / "tides.md", "Neap tides")
        watch.proc.send_signal(signal.SIGINT)
        code = watch.proc.wait(timeout=30)
    reports = [json.loads(line) for line in watch.out]  # stdout: JSON lines, nothing else
    assert reports[-1]["counts"]["failed"] == (0 if mended else 1)
    if mended:
        assert (code, watch.err) == (0, [])
    else:
        assert (code, watch.err) == (1, ["stopped; 1 file still failing: broken.pdf"])
