"""The plain forms of ``query``, ``list``, ``hook`` and ``serve-mcp`` run without the option
parser (cli/shortcuts.py) and must be indistinguishable from the parser's run: the same output,
the same errors, the same exit code. Every other form goes through the parser."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grimoire_beholder.cli import shortcuts
from helpers import CliRun, fake_garden_env, run_cli

PLAIN = [
    ["query", "compost heap microbes"],
    ["query", "compost heap", "--json"],
    ["query", "--json", "aphids on new shoots", "-k", "2", "--explain"],
    ["query", "slugs at night", "--book", "the-garden-book", "--expand", "--top-k", "1"],
    ["query", "slugs", "--book", "no-such-book"],
    ["query", "slugs", "--json", "--until", "Pests", "--book", "no-such-book"],
    ["query", "drainage", "--author", "Test Author", "--tag", "x", "--series", "y",
     "--collection", "z", "--group", "g", "--path-prefix", "/nowhere"],
    ["query", "", "--json"],
    ["query", "compost", "-k", "100"],
    ["list"],
    ["list", "--json"],
    ["hook", "prompt"],
    ["hook", "prompt", "--budget", "700"],
    ["hook", "session-start"],
    ["hook", "session-start", "--budget", "150"],
]
PARSED = [
    [], ["--help"], ["query"], ["query", "--help"], ["query", "a", "b"], ["query", "a", "--"],
    ["query", "a", "--book=x"], ["query", "a", "--book"], ["query", "a", "--book", "-x"],
    ["query", "a", "-k", "two"], ["query", "a", "-k", "-1"], ["query", "a", "-k", "0"],
    ["query", "a", "-k", "101"], ["query", "a", "-k", "00"], ["query", "a", "-k", "٣"],
    ["query", "a", "-k", "9" * 5000], ["hook", "prompt", "--budget", "9" * 5000],
    ["query", "a", "--json", "--json"], ["query", "a", "--mode", "keyword"],
    ["query", "a", "--no-expand"], ["query", "a", "--library", "/x"], ["list", "extra"],
    ["list", "--config", "c.toml"], ["hook"], ["hook", "prompt", "--budget", "many"],
    ["hook", "prompt", "--config", "c.toml"], ["status"], ["ingest", "a.md"], ["qurey", "a"],
    ["serve-mcp", "--help"], ["serve-mcp", "--http", "8765"], ["serve-mcp", "--allow-add", "d"],
    ["serve-mcp", "--library", "postgresql://h/db"], ["serve-mcp", "--config", " "],
    ["serve-mcp", "--library", "C:\\lib"], ["serve-mcp", "extra"],
]
PAYLOAD = json.dumps({"prompt": "how do I keep aphids off the new shoots?"})


@pytest.fixture
def cli_env(garden_template: Path, tmp_path: Path) -> Iterator[dict[str, str | None]]:
    """The CLI's environment for a copy of the garden library on the fake models."""
    yield fake_garden_env(garden_template, tmp_path / "library")


def _comparable(run: CliRun) -> tuple[int, object, str]:
    """A run without what differs from one run to the next (the stage timings)."""
    try:
        data = json.loads(run.stdout)
    except ValueError:
        return run.returncode, run.stdout, run.stderr
    if isinstance(data, dict):
        data.pop("timings_ms", None)
    return run.returncode, data, run.stderr


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_form_runs_as_the_parser_runs_it(argv: list[str],
                                                  cli_env: dict[str, str | None],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert shortcuts.shortcut(argv) is not None
    stdin = PAYLOAD if argv[:2] == ["hook", "prompt"] else ""
    fast = run_cli(*argv, env=cli_env, stdin=stdin)
    monkeypatch.setattr(shortcuts, "shortcut", lambda _argv: None)
    parsed = run_cli(*argv, env=cli_env, stdin=stdin)
    assert _comparable(fast) == _comparable(parsed)
    if argv[0] == "hook":
        assert fast.stdout, "the hook found nothing: the comparison would prove little"


def test_the_forms_give_output_worth_comparing(cli_env: dict[str, str | None]) -> None:
    """Hits, books and errors, not one empty result compared with another."""
    hits = json.loads(run_cli("query", "aphids on new shoots", "--json", env=cli_env).stdout)
    assert hits["results"]
    assert json.loads(run_cli("list", "--json", env=cli_env).stdout)
    missing = run_cli("query", "slugs", "--book", "no-such-book", env=cli_env)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: no book 'no-such-book'")


@pytest.mark.parametrize("argv", [["query", "tea"], ["serve-mcp"],
                                  ["serve-mcp", "--allow-sync", "-c", "none.toml"]], ids=" ".join)
def test_a_missing_library_is_the_same_error(argv: list[str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    env: dict[str, str | None] = {"GRIMOIRE_BEHOLDER_CONFIG": None,
                                  "GRIMOIRE_BEHOLDER_LIBRARY": str(tmp_path / "none")}
    assert shortcuts.shortcut(argv) is not None
    fast = run_cli(*argv, env=env, cwd=tmp_path)
    monkeypatch.setattr(shortcuts, "shortcut", lambda _argv: None)
    parsed = run_cli(*argv, env=env, cwd=tmp_path)
    assert fast == parsed
    assert fast.returncode != 0 and fast.stderr.startswith("error: ")


@pytest.mark.parametrize("argv", PARSED, ids=lambda a: (" ".join(a) or "(none)")[:40])
def test_every_other_form_goes_through_the_parser(argv: list[str]) -> None:
    assert shortcuts.shortcut(argv) is None


def test_shell_completion_goes_through_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_GRIMOIRE_BEHOLDER_COMPLETE", "bash_complete")
    assert shortcuts.shortcut(["list"]) is None


def test_serve_mcp_with_rights_from_the_environment_goes_through_the_parser(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIMOIRE_BEHOLDER_ALLOW_REMOVE", "true")
    assert shortcuts.shortcut(["serve-mcp"]) is None


@pytest.mark.parametrize("argv", [["query", "a", "-k"], ["hook", "prompt", "--budget"]],
                         ids=" ".join)
def test_a_number_too_long_for_int_is_the_parsers_one_line_error(argv: list[str]) -> None:
    """5,000 digits: int() refuses more than 4,300; the parser's error, not a traceback."""
    run = run_cli(*argv, "9" * 5000, env={"GRIMOIRE_BEHOLDER_CONFIG": None})
    assert run.returncode == (1 if argv[0] == "hook" else 2)  # a hook's 2 blocks the prompt
    assert run.stderr.startswith("error: Invalid value for '--")
    assert len(run.stderr.splitlines()) == 1


@pytest.mark.parametrize("count", ["0", "-3", "101"])
@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_top_k_out_of_range_is_a_usage_error(count: str, json_out: bool,
                                               cli_env: dict[str, str | None]) -> None:
    """``query --top-k 0`` exited 1 with the search engine's error, as if the library had
    failed: a usage error, exit 2 and one line (a JSON object under ``--json``), as any other
    bad option value; ``eval`` takes the same range."""
    for argv in (["query", "compost", "--top-k", count], ["eval", "q.jsonl", "-k", count]):
        run = run_cli(*argv, *(["--json"] if json_out else []), env=cli_env)
        bound = "less than or equal to 100" if count == "101" else "greater than or equal to 1"
        line = (f"Invalid value for '--top-k' / '-k': Input should be {bound} "
                f"(see 'grimoire-beholder {argv[0]} --help')")
        assert (run.returncode, run.stdout) == (2, "")
        assert run.stderr == (json.dumps({"error": line, "exit_code": 2}) if json_out
                              else f"error: {line}") + "\n"
