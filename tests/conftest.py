"""Shared fixtures: real SQLite libraries in tmp dirs, on deterministic fake models.

Fixtures only; the helpers test files share are in helpers.py (and mcp_helpers.py for MCP).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from helpers import GARDEN_CHAPTERS, fake_config, write_markdown_book
from user_home import fresh_home

_USER_DIRS = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """No test may read or fill the real per-user library or cache: the platform's per-user folders
    (XDG on Linux) point into a throwaway folder for the session, subprocesses included, and
    the library-choosing and terminal-size variables of the developer's shell are dropped.

    uv's package cache is the exception: a test that installs (the MCP bundle's first start)
    links from the developer's cache, as a host with uv installed does, instead of
    downloading every package into the throwaway folder and copying it into the install."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # Started in the background by a shell without job control (`bash .ci/run &`, nohup),
        # every process would inherit Ctrl-C ignored, and the tests that press it on a CLI
        # or server they start would see nothing happen: they get Ctrl-C as a terminal has it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if "UV_CACHE_DIR" not in os.environ:
        uv_cache = _uv_cache_dir()
        if uv_cache is not None:
            os.environ["UV_CACHE_DIR"] = uv_cache
    user_dirs = Path(tempfile.mkdtemp(prefix="grimoire-user-dirs-"))
    config.stash[_USER_DIRS] = user_dirs
    os.environ["XDG_DATA_HOME"] = str(user_dirs / "data")
    os.environ["XDG_CONFIG_HOME"] = str(user_dirs / "config")
    os.environ["XDG_CACHE_HOME"] = str(user_dirs / "cache")  # the embedded model's graph
    for name in ("GRIMOIRE_BEHOLDER_CONFIG", "GRIMOIRE_BEHOLDER_LIBRARY", "GRIMOIRE_BEHOLDER_CACHE",
                 "COLUMNS", "LINES"):
        os.environ.pop(name, None)
    # The CLI's rich consoles read COLUMNS once, when they are built: built here, they follow
    # each test's COLUMNS, whichever test (on whichever xdist worker) first prints.
    import grimoire_beholder.cli.rendering  # noqa: F401


def pytest_unconfigure(config: pytest.Config) -> None:
    """The throwaway per-user folders (the embedded model's cached graph among them) go with
    the session, as pytest's own temporary folders of passing tests do."""
    user_dirs = config.stash.get(_USER_DIRS, None)
    if user_dirs is not None:
        shutil.rmtree(user_dirs, ignore_errors=True)


def _uv_cache_dir() -> str | None:
    """uv's cache folder as the developer's shell has it, or None without uv."""
    uv = shutil.which("uv")
    if uv is None:
        return None
    proc = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=False)
    folder = proc.stdout.strip()
    return folder if proc.returncode == 0 and folder else None


@pytest.fixture
def anyio_backend() -> str:
    """The event loop for ``@pytest.mark.anyio`` tests (the MCP client sessions)."""
    return "asyncio"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return fake_config(tmp_path)


@pytest.fixture
def library(config: Config) -> Iterator[Library]:
    lib = Library.open(config=config, embedder=FakeEmbedder())
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
def sample_book(tmp_path: Path) -> Path:
    return write_markdown_book(tmp_path / "garden.md", "The Garden Book", GARDEN_CHAPTERS)


@pytest.fixture(scope="session")
def garden_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library folder holding the garden book, ingested once per session (per xdist
    worker): copy it (``garden_library``), never open it for writing."""
    folder = tmp_path_factory.mktemp("garden-template")
    book = write_markdown_book(folder / "garden.md", "The Garden Book", GARDEN_CHAPTERS)
    with Library.open(config=fake_config(folder), embedder=FakeEmbedder()) as lib:
        lib.ingest(book)
    return folder


@pytest.fixture
def garden_library(garden_template: Path, tmp_path: Path) -> Iterator[Library]:
    """The ``library`` fixture with the garden book already in it: the session's library,
    copied into ``tmp_path`` (the book's recorded source stays the template's file)."""
    folder = tmp_path / "garden-library"
    shutil.copytree(garden_template, folder)
    lib = Library.open(config=fake_config(folder), embedder=FakeEmbedder())
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
def allowed_setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """For the add_book tool: a library, an allowed folder holding a book, a folder and
    links out of it, and a secret book outside; returns (config, allowed, secret)."""
    from mcp_helpers import folder_library

    config = folder_library(tmp_path)
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "shelf").mkdir(parents=True)
    outside.mkdir()
    write_markdown_book(allowed / "kites.md", "Kites", {
        "Flying": {"Launch": "Launch the kite with the wind at your back and let the line "
                             "run out through your fingers. " * 4}})
    write_markdown_book(allowed / "shelf" / "knots.md", "Knots", {
        "Loops": {"Bowline": "The bowline makes a fixed loop that will not slip or jam. " * 4}})
    secret = write_markdown_book(outside / "secret.md", "Secret", {
        "Vault": {"Code": "The vault code is heliotrope seven seven nine. " * 4}})
    (allowed / "link.md").symlink_to(secret)
    (allowed / "shelf" / "sneaky.md").symlink_to(secret)
    return config, allowed, secret


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh HOME holding an empty working folder (``home / "work"``); see user_home.py."""
    return fresh_home(tmp_path)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library that already holds one book, so 'unchanged' is a real claim (the hostile-input
    tests': a CLI config on the fake embedder, filled through the real CLI; hostile_cli.py)."""
    from hostile_cli import CONFIG, run_cli  # POSIX-only (resource): imported when asked for

    lib = tmp_path_factory.mktemp("lib")
    (lib / "config.toml").write_text(CONFIG)
    book = write_markdown_book(lib / "seed.md", "Seed Book", {
        "Ropes": {"Knots": "Bowline and clove hitch hold the boat. " * 30}})
    proc = run_cli(lib, "ingest", str(book), "-q")
    assert proc.returncode == 0, proc.stderr
    return lib
