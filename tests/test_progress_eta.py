"""The ingest bar's ETA agrees with the rate it shows: remaining chunks at the run's rate.

A folder run embeds in bursts (a file is parsed, then its chunks are embedded at once): an
ETA from the last few seconds' speed said "eta 0:00:01" beside "110.0/s" with 1,678 chunks
to go (it should be ~15 s)."""

from __future__ import annotations

import io
import re

import pytest

from grimoire_beholder.cli import rendering


def test_the_eta_is_the_remaining_chunks_at_the_shown_rate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    console = rendering._SafeConsole(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(rendering, "err", console)
    clock = [1000.0]
    monkeypatch.setattr(rendering.time, "perf_counter", lambda: clock[0])
    with rendering.RichProgress() as bar:
        bar.stage("chunks", 1000)
        clock[0] += 10.0  # ten seconds of parsing, then a burst of 100 chunks
        bar.advance(100)
        assert bar._bar is not None
        bar._bar.refresh()
    last = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue()).split("\r")[-1]
    frames = [f for f in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
              .replace("\r", "\n").splitlines() if "100/1000" in f]
    assert frames, last
    assert "10.0/s" in frames[-1]
    assert "eta 0:01:30" in frames[-1], frames[-1]
