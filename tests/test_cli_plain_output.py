"""A query's hits written to a pipe without rich are the bytes rich would write there.

``cli/plain_output.py`` skips rich only where rich changes nothing; these hits carry what
rich treats specially (markup-like brackets, backslashes, emoji codes, wide and combining
characters, control characters, lines longer than the console), and the lines rich would
change (tabs, whitespace ending a long line) must go to rich.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from grimoire_beholder.cli import hit_lines, rendering
from grimoire_beholder.cli.plain_output import lines_stay_plain

TEXTS = [
    "[bold]not bold[/bold] and [/] and [link=https://x.y]z[/link] \\[escaped] \\\\[both]",
    "ends in a backslash \\",
    "emoji codes stay words: :fire: :thumbs_up: :smiley-emoji: 12:30:45",
    ("東京の灯台 🔥 e\u0301 ﬁ — wide, combining and ligature " * 4).strip(),
    "escape \x1b[2J and bell \x07 and \u202eoverride\u202c and C1 \x9b made visible",
    "a long line " + "word " * 60 + "end",
]


def _hit(rank: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"rank": rank, "citation": f"{text[:70]} · Chapter [1] › Section \\", "text": text,
            "open": f"grimoire-beholder show {text[:8]!r} 0 {rank}", "number": None,
            "role": "body", "ranks": {"vector": rank, "keyword": None}, "score": 0.5 / rank,
            **extra}


CASES: dict[str, dict[str, Any]] = {
    "plain": {"results": [_hit(i + 1, t) for i, t in enumerate(TEXTS)]},
    "roles, links, numbers, notes": {
        "results": [_hit(1, TEXTS[0], role="notes", link="https://example.org/[x]?a=:fire:",
                         number="5.7.2"),
                    _hit(2, TEXTS[2], role="index", number="xii")],
        "low_confidence": True, "confidence": 0.125, "note": "a [note] :fire: \x1b[31m"},
    "expanded sections": {"results": [
        _hit(1, TEXTS[1], section_text="first line\nthird [b]line[/b]\n" + TEXTS[3]),
        _hit(2, TEXTS[4], section_text=TEXTS[5])]},
    "no hit": {"results": [], "note": "nothing [here] :fire:"},
}


def _printed(capsys: pytest.CaptureFixture[str], data: dict[str, Any], **kw: bool
             ) -> tuple[str, str]:
    hit_lines.print_hits(data, explain=kw["explain"], expand=kw["expand"])
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("explain", [False, True])
def test_a_pipe_gets_what_rich_would_write(name: str, explain: bool,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data, expand = CASES[name], name == "expanded sections"
    lines = [line.text for line in hit_lines.hit_lines(data, explain=explain, expand=expand)]
    assert lines_stay_plain(lines) and lines_stay_plain(hit_lines.notes(data))
    plain = _printed(capsys, data, explain=explain, expand=expand)
    monkeypatch.setattr(hit_lines, "plain_stream", lambda stderr=False: None)
    for width in (80, 30):  # rich's width, when it is not a terminal, cuts nothing
        for console in ("out", "err"):
            monkeypatch.setattr(rendering, console, rendering._SafeConsole(
                stderr=console == "err", highlight=False, soft_wrap=True, emoji=False,
                width=width))
        assert _printed(capsys, data, explain=explain, expand=expand) == plain
    assert "\x1b" not in plain[0] + plain[1]


@pytest.mark.parametrize("text", ["a\ttab", "ends in a space ", "ends in a no-break\xa0",
                                  "blank then   \nmore"])
def test_what_rich_would_change_goes_to_rich(text: str, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"results": [_hit(1, "x", section_text=text + " " * 90)]}
    lines = [line.text for line in hit_lines.hit_lines(data, explain=False, expand=True)]
    assert not lines_stay_plain(lines)
    monkeypatch.setattr(rendering, "out", rendering._SafeConsole(
        highlight=False, soft_wrap=True, emoji=False, width=40))
    printed = _printed(capsys, data, explain=False, expand=True)
    if "\t" in text:  # rich expands tabs (and some versions cut the whitespace ending a line)
        assert printed[0] != "".join(f"{line}\n" for line in lines)
    monkeypatch.setattr(hit_lines, "plain_stream", lambda stderr=False: None)
    assert _printed(capsys, data, explain=False, expand=True) == printed


@pytest.mark.parametrize("encoding, errors", [
    ("utf-8", "strict"),           # PYTHONIOENCODING=utf-8: a lone surrogate raised
    ("utf-8", "surrogateescape"),  # the C and C.UTF-8 locales: it was written as a raw byte
    ("ascii", "strict"),           # PYTHONIOENCODING=ascii: '·' came out as \xb7, not JSON
    ("latin-1", "strict")])
def test_json_on_stdout_and_stderr_is_valid_utf8_json_whatever_the_stream(
        encoding: str, errors: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``query $'lamp \\xff' --json``: the question's undecodable byte, and hits with wide,
    right-to-left and emoji text, give JSON a strict UTF-8 reader takes, meaning the same
    data; so does an error under ``--json``."""
    import io
    import json
    import sys

    from grimoire_beholder.cli import running, terminal
    from grimoire_beholder.cli.plain_output import print_json

    raw_out, raw_err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw_out, encoding, errors))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(raw_err, encoding, errors))
    monkeypatch.setitem(running.ERRORS_AS_JSON, "on", True)
    terminal.install()
    data = {"query": "lamp \udcff", "citation": "שלום · 東京 🧙\u200d♂️ \u202e \x1b[2J",
            "score": 0.5}
    print_json(data)
    print(running.error_line("no library at /tmp/ñ\udcff/book.db", 1), file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    assert json.loads(raw_out.getvalue().decode("utf-8")) == data
    assert json.loads(raw_err.getvalue().decode("utf-8")) == {
        "error": "no library at /tmp/ñ\udcff/book.db", "exit_code": 1}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIONREAD on a pipe")
def test_long_json_into_a_pipe_whose_reader_goes_away_is_an_exit_1_not_0() -> None:
    """``query … --json | head -c 1`` with more JSON than the pipe holds: the reader leaves
    while the write waits, and CPython's buffered writer returned a short count without an
    error — the JSON was cut and the command exited 0. (A plain interpreter, not the CLI:
    the stdout it is given at start is what the bug needs.)"""
    import fcntl
    import os
    import subprocess
    import termios
    import time

    code = ("from grimoire_beholder.cli import terminal, plain_output; terminal.install(); "
            "plain_output.print_json({'results': ['x' * 1000] * 2000})")
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=write_end,
                            stderr=subprocess.PIPE)
    os.close(write_end)
    waiting = bytearray(4)
    while fcntl.ioctl(read_end, termios.FIONREAD, waiting) == 0 and (
            int.from_bytes(waiting, sys.byteorder) < 4096):  # the write has begun
        time.sleep(0.01)
    os.read(read_end, 1)
    os.close(read_end)
    assert proc.wait(timeout=60) == 1
    assert proc.stderr is not None and proc.stderr.read() == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_note_that_stderr_cannot_take_does_not_cost_the_results(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``query … 2>/dev/full``: the low-confidence note goes first, to stderr, and its
    failure (ENOSPC) ended the command with no hit written and exit code 1."""
    import io

    from grimoire_beholder.cli import terminal

    raw_out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw_out, "utf-8"))
    monkeypatch.setattr(sys, "stderr", open("/dev/full", "w", encoding="utf-8"))  # noqa: SIM115
    terminal.install()
    data = CASES["roles, links, numbers, notes"]
    hit_lines.print_hits(data, explain=False, expand=False)
    sys.stderr.flush()
    sys.stdout.flush()
    printed = raw_out.getvalue().decode()
    assert printed.startswith("1. ") and "read it:" in printed


def test_ctrl_c_in_a_reading_command_says_interrupted_as_json_under_json(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``query … --json`` and Ctrl-C: the line on stderr is JSON like every other error
    under ``--json``, and a command that writes nothing promises no work to resume."""
    import json

    from grimoire_beholder.cli import running

    monkeypatch.setitem(running.ERRORS_AS_JSON, "on", True)
    with pytest.raises(SystemExit) as exited, running.reported_errors(writes=False):
        raise KeyboardInterrupt
    assert exited.value.code == 130
    assert json.loads(capsys.readouterr().err) == {"error": "interrupted", "exit_code": 130}
