"""A query the library will refuse (an empty question, an unknown book) is refused before the
embedding model starts loading: loading it costs most of a cold ``query``'s second and holds
the process at exit until it finishes, for an answer that needs no model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grimoire_beholder.library import Library
from helpers import run_cli


@pytest.fixture
def env(garden_template: Path, tmp_path: Path) -> dict[str, str | None]:
    folder = tmp_path / "library"
    shutil.copytree(garden_template, folder)
    (folder / "config.toml").write_text(
        '[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
        'llm_backend = "none"\nchunk_size = 120\nchunk_overlap = 20\n', encoding="utf-8")
    return {"GRIMOIRE_BEHOLDER_CONFIG": str(folder / "config.toml")}


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every model load a command began, by the question it was for."""
    began: list[str] = []
    monkeypatch.setattr(Library, "preload", lambda self: began.append("load"))
    return began


@pytest.mark.parametrize(("argv", "error"), [
    (["query", ""], "empty query"),
    (["query", "   ", "--json"], "empty query"),
    (["query", "slugs", "--book", "no-such-book"], "no-such-book"),
    (["query", "slugs", "--book", "no-such-book", "--mode", "hybrid"], "no-such-book"),
])
def test_a_refused_query_loads_no_model(argv: list[str], error: str, env: dict[str, str | None],
                                        loads: list[str]) -> None:
    run = run_cli(*argv, env=env)
    assert run.returncode != 0
    assert error in run.stderr + run.stdout
    assert loads == []


def test_an_answerable_query_still_loads_the_model_early(env: dict[str, str | None],
                                                        loads: list[str]) -> None:
    run = run_cli("query", "slugs at night", "--book", "the-garden-book", env=env)
    assert run.returncode == 0, run.stderr
    assert loads == ["load"]
