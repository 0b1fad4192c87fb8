"""``web`` opens a browser only where there is a desktop. Over SSH or on a server, Python's
``webbrowser`` falls back to a text browser (Debian's ``www-browser``: w3m, lynx) and ran it
full-screen in the server's own terminal, over its lines and sharing its Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import run_cli, write_markdown_book
from test_web_browser import first_line, free_port

pytestmark = pytest.mark.slow  # two servers started and stopped, a few seconds each


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("launch")
    path = root / "config.toml"
    path.write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    book = write_markdown_book(root / "tides.md", "Tides", {"Sea": {"Currents": "Currents."}})
    assert run_cli("ingest", str(book), "-q", "--config", str(path)).returncode == 0
    return path


def _web(config: Path, tmp_path: Path, **env: str) -> tuple[str, bool]:
    """Run ``web`` (no --no-browser) with a text browser on PATH as ``www-browser``, without
    a display: its stderr, and whether the text browser was started."""
    marker = tmp_path / "text-browser-ran"
    fake = tmp_path / "bin" / "www-browser"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    fake.chmod(0o755)
    environ = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    environ.update(PATH=f"{fake.parent}{os.pathsep}{environ['PATH']}", **env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "grimoire_beholder", "web", "--port", str(free_port()),
         "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    assert first_line(proc).startswith("http://127.0.0.1:")
    time.sleep(1.5)  # the browser is started in the background right after the URL
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return err, marker.exists()


def test_without_a_desktop_no_text_browser_takes_the_terminal(config: Path,
                                                               tmp_path: Path) -> None:
    err, ran = _web(config, tmp_path)
    assert not ran
    assert "No desktop to open a browser on here: open the URL in one" in err


def test_a_browser_the_person_chose_is_still_opened(config: Path, tmp_path: Path) -> None:
    err, ran = _web(config, tmp_path, BROWSER="www-browser")
    assert ran and "No desktop" not in err
