"""Small libraries for the persisted search index's tests: built through the store functions
(random books of a fixed word list) or ingested by the CLI (three Markdown books). Test files
import from here, never from one another."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app
from grimoire_beholder.search import segment_files as seg
from helpers import add_book, open_library, write_markdown_book
from mcp_helpers import write_config

WORDS = [
    "lantern", "harbour", "tide", "keeper", "beacon", "fog", "rock", "signal", "storm", "gull",
    "rope", "café", "crème", "naïve", "running", "runs", "ran", "lamp", "lamps", "light",
    "lights", "the", "of", "and", "to", "a", "in", "is", "ship", "ships", "winter", "summer",
    "north", "south", "coast", "cliff", "wave", "waves", "oil", "wick", "glass", "lens",
]

TOPICS = ("lantern keeper fog", "harbour tide rope", "beacon storm gull")


def add_random_book(conn: sqlite3.Connection, slug: str, seed: int, sections: int = 6) -> int:
    """A book of ``sections`` chapters of eight random sentences of WORDS; its id."""
    rng = np.random.default_rng(seed)
    specs = [(f"Chapter {c}", f"Part {c}", [" ".join(rng.choice(WORDS, int(rng.integers(8, 40))))
                                            for _ in range(8)])
             for c in range(sections)]
    return add_book(conn, slug, specs, context=seed % 2 == 0)


def random_library(tmp_path: Path, n_books: int = 3) -> tuple[sqlite3.Connection, Path, list[int]]:
    """``n_books`` random books in a new library at ``tmp_path``: (connection, path, ids)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    conn = open_library(tmp_path)
    ids = [add_random_book(conn, f"book-{i}", seed=i) for i in range(n_books)]
    return conn, tmp_path / "library.db", ids


def cli(config: Path, *args: str) -> Any:
    """The CLI in-process with ``--config config``."""
    return CliRunner().invoke(app, [*args, "--config", str(config)])


def ingested_library(tmp_path: Path) -> Path:
    """Three books ingested by the CLI, with their search index; returns the config."""
    lib = tmp_path / "lib"
    lib.mkdir()
    config = write_config(lib)
    for n, topic in enumerate(TOPICS):
        book = write_markdown_book(lib / f"book{n}.md", f"Book {n}", {
            f"Part {c}": {f"Piece {s}": " ".join(
                f"{topic} {c}.{s}.{i} and the sea of words." for i in range(12))
                for s in range(4)} for c in range(3)})
        assert cli(config, "ingest", str(book), "--quiet").exit_code == 0
    assert seg.read_manifest(seg.folder_for(lib / "book.db")) is not None
    return config
