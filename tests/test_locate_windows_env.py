"""A Windows-shaped path in GRIMOIRE_BEHOLDER_LIBRARY or GRIMOIRE_BEHOLDER_CONFIG on a system
that is not Windows is refused in one line, as the --library/--config options are: it was
taken as a relative name, and a library of that name made in the working folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from grimoire_beholder.errors import ConfigError
from grimoire_beholder.locate import CONFIG_ENV, LIBRARY_ENV, locate
from helpers import run_cli


@pytest.mark.skipif(sys.platform == "win32", reason="a drive letter is a path there")
@pytest.mark.parametrize(("variable", "value"), [
    (LIBRARY_ENV, "C:\\Books"), (LIBRARY_ENV, "d:/books/"), (LIBRARY_ENV, "\\\\server\\share"),
    (CONFIG_ENV, "C:\\lib\\config.toml"),
])
def test_a_windows_path_in_the_environment_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.delenv(LIBRARY_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.setenv(variable, value)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="Windows path"):
        locate()
    assert list(tmp_path.iterdir()) == []


def test_a_posix_path_in_the_environment_is_still_a_library_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.setenv(LIBRARY_ENV, str(tmp_path / "books"))
    assert locate().folder == tmp_path / "books"


@pytest.mark.parametrize("variable", [LIBRARY_ENV, CONFIG_ENV])
@pytest.mark.parametrize("command", [["list"], ["ingest", "notes.md"]])
def test_a_blank_name_in_the_environment_is_refused_and_makes_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str,
        command: list[str]) -> None:
    """Spaces only were a library folder named by spaces, made in the working folder."""
    (tmp_path / "notes.md").write_text("# Notes\n\nA line.\n")
    other = CONFIG_ENV if variable == LIBRARY_ENV else LIBRARY_ENV
    run = run_cli(*command, cwd=tmp_path, env={variable: "   ", other: None,
                                               "HOME": str(tmp_path / "home")})
    assert run.returncode != 0
    assert f"{variable} is blank" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
