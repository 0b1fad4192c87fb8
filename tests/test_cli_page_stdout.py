"""``grimoire-beholder page BOOK N -o -`` writes the PNG to stdout, as ``-`` means for other
tools — before, it wrote a file literally named ``-`` — and nothing else goes there (what is
said goes to stderr). A terminal as stdout, or ``--json`` alongside, is refused with one line.
Each case runs the real CLI as a subprocess, so the bytes checked are those on the pipe."""

from __future__ import annotations

import os
import pty
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from books_gen import cli_library, keeper_pdf
from grimoire_beholder.library import Library
from mcp_helpers import cli_command

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page-stdout")
    return cli_library(root, keeper_pdf(root / "keeper.pdf"))


@pytest.fixture
def cwd(tmp_path: Path) -> Iterator[Path]:
    """The working folder of each run: nothing may be written in it but what is asked."""
    yield tmp_path
    assert not (tmp_path / "-").exists()


def page(config: Path, cwd: Path, *args: str, **kwargs: Any
         ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*cli_command(), "page", "keeper", *args, "--config", str(config)],
                          cwd=cwd, timeout=120, check=False, **kwargs)


@pytest.mark.slow  # two CLI subprocesses
def test_dash_writes_the_png_alone_to_stdout(config: Path, cwd: Path) -> None:
    with Library.open(config, read_only=True) as lib:
        expected = lib.page_image("keeper", "i").png
    run = page(config, cwd, "i", "-o", "-", capture_output=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected  # the image's bytes and nothing else
    pix = pymupdf.Pixmap(run.stdout)
    assert run.stdout.startswith(PNG) and pix.width > 0 and pix.height == 1400
    said = run.stderr.decode()
    assert "wrote the PNG to standard output: page 1 (printed i) of 4" in said
    assert list(cwd.iterdir()) == []
    # the highlight not found: still the page on stdout, the note on stderr, exit code 1
    missed = page(config, cwd, "2", "-o", "-", "--highlight", "no such words here at all",
                  capture_output=True)
    assert missed.returncode == 1 and missed.stdout.startswith(PNG)
    pymupdf.Pixmap(missed.stdout)
    assert "not found on this page" in missed.stderr.decode()


def test_dash_refuses_a_terminal_and_json(config: Path, cwd: Path) -> None:
    leader, follower = pty.openpty()
    try:
        run = page(config, cwd, "2", "-o", "-", stdout=follower, stderr=subprocess.PIPE)
        os.set_blocking(leader, False)
        try:
            on_terminal = os.read(leader, 1 << 20)
        except BlockingIOError:
            on_terminal = b""
    finally:
        os.close(follower)
        os.close(leader)
    assert run.returncode == 1 and PNG not in on_terminal
    assert run.stderr.decode().splitlines() == [
        "error: not writing a PNG image to a terminal (-o -): redirect standard output "
        "(> page.png, | viewer) or give -o a file name"]
    both = page(config, cwd, "2", "-o", "-", "--json", capture_output=True)
    assert both.returncode == 1 and both.stdout == b""
    assert "--json" in both.stderr.decode() and len(both.stderr.decode().splitlines()) == 1
    assert list(cwd.iterdir()) == []


@pytest.mark.slow  # two CLI subprocesses
def test_a_closed_pipe_ends_it_quietly_and_dot_slash_dash_is_a_file(config: Path,
                                                                   cwd: Path) -> None:
    proc = subprocess.Popen([*cli_command(), "page", "keeper", "2", "-o", "-", "--config",
                             str(config)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before a byte is written (`… | head -c 0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in err and "Broken pipe" not in err
    assert list(cwd.iterdir()) == []
    named = page(config, cwd, "2", "-o", "./-", capture_output=True)
    assert named.returncode == 0, named.stderr
    assert (cwd / "-").read_bytes().startswith(PNG)
    (cwd / "-").unlink()


@pytest.mark.slow  # three CLI subprocesses
def test_a_name_for_another_image_format_is_refused_before_anything_is_written(
        config: Path, cwd: Path) -> None:
    # a PNG's bytes under a .jpg name mislead the person and some viewers
    for name in ("page.jpg", "SCAN.TIFF"):
        run = page(config, cwd, "2", "-o", name, capture_output=True)
        said = run.stderr.decode()
        assert run.returncode != 0 and said.startswith("error:") and "PNG" in said
        assert f"{Path(name).stem}.png" in said and "Traceback" not in said
        assert list(cwd.iterdir()) == []
    plain = page(config, cwd, "2", "-o", "page-two", capture_output=True)  # no suffix: fine
    assert plain.returncode == 0, plain.stderr
    assert (cwd / "page-two").read_bytes().startswith(PNG)
    (cwd / "page-two").unlink()
