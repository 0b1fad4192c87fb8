"""A query the library will refuse (an empty question, an unknown book) is refused before the
embedding model starts loading: loading it costs most of a cold ``query``'s second and holds
the process at exit until it finishes, for an answer that needs no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.library import Library
from helpers import fake_garden_env, run_cli


@pytest.fixture
def env(garden_template: Path, tmp_path: Path) -> dict[str, str | None]:
    return fake_garden_env(garden_template, tmp_path / "library")


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
