"""Claude Code hooks: a table of contents at session start, passages per prompt, and
silence (exit 0) whenever anything goes wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grimoire_beholder.cli.assistant_hooks import HEADER, prompt_text
from grimoire_beholder.cli.entry import app
from helpers import hook_library, run_cli


@pytest.fixture
def config(tmp_path: Path, sample_book: Path) -> Path:
    return hook_library(tmp_path, sample_book)


def _prompt(config: Path, payload: str, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["hook", "prompt", "-c", str(config), *extra],
                                input=payload)
    return result.exit_code, result.stdout


def test_prompt_hook_prints_passages_within_budget(config: Path) -> None:
    payload = json.dumps({"session_id": "x", "hook_event_name": "UserPromptSubmit",
                          "prompt": "how do copper tape and beer traps stop slugs?"})
    code, out = _prompt(config, payload, "--budget", "600")
    assert code == 0 and out.startswith(HEADER)
    garden = config.parent / "garden.md"  # cited as everywhere else: file:lines · breadcrumb
    assert re.search(rf"^\[1\] {re.escape(str(garden))}:\d+(-\d+)? · Pests › Slugs$", out, re.M)
    assert len(out) <= 601


def test_a_long_prompt_is_searched_by_its_beginning(config: Path) -> None:
    """Searches refuse questions over 2,000 characters; a pasted prompt still gets context."""
    prompt = "how do copper tape and beer traps stop slugs? " + "Pasted log line. " * 2_000
    code, out = _prompt(config, json.dumps({"prompt": prompt}))
    assert code == 0 and out.startswith(HEADER) and "Pests › Slugs" in out


def test_a_budget_too_small_for_three_passages_gets_the_best_one(tmp_path: Path) -> None:
    """The budget was shared by three passages whatever it was, and a share too small for
    any text printed nothing: a budget with room for one passage (and its citation) and
    not for three was silence. Now the best fewer passages take it."""
    from helpers import write_markdown_book

    book = write_markdown_book(tmp_path / "slugs.md", "Slugs in the Garden", {
        "Slugs": {f"{way} traps": f"Copper tape and beer traps stop slugs; {way} works. " * 8
                  for way in ("Copper", "Beer", "Wool")}})
    config = hook_library(tmp_path, book)
    payload = json.dumps({"prompt": "how do copper tape and beer traps stop slugs?"})
    whole = _prompt(config, payload)[1].splitlines()
    assert whole[0] == HEADER and len(whole) == 7, whole  # three passages by default
    citation = whole[1]
    budget = len(HEADER) + len(citation) + 100 + 3  # three newlines: one 100-character text
    assert (budget - 1 - len(HEADER)) // 3 < len(citation) + 62  # too small for three
    code, out = _prompt(config, payload, "--budget", str(budget))
    assert code == 0 and len(out) <= budget, out
    lines = out.splitlines()
    assert lines[:2] == [HEADER, citation] and len(lines) == 3, out
    assert len(lines[2]) >= 60, out


def test_prompt_hook_is_silent_when_it_should_be(config: Path, tmp_path: Path) -> None:
    assert _prompt(config, json.dumps({"prompt": "slugs?"})) == (0, "")  # short
    assert _prompt(config, "{not json") == (0, "")
    assert _prompt(config, json.dumps({"prompt": "zzyzx qwerty plugh xyzzy frobnicate"})) == (
        0, "")  # nothing matches
    missing = tmp_path / "nowhere.toml"
    assert _prompt(missing, json.dumps({"prompt": "copper tape beer traps slugs"})) == (0, "")


def test_prompt_text_accepts_payload_or_plain_text() -> None:
    assert prompt_text('{"prompt": "hello there"}') == "hello there"
    assert prompt_text("plain words") == "plain words"
    assert prompt_text('{"prompt": 3}') == ""


def test_session_start_lists_books_and_chapters(config: Path) -> None:
    result = CliRunner().invoke(app, ["hook", "session-start", "-c", str(config)])
    assert result.exit_code == 0
    assert "1 book;" in result.stdout
    assert "- the-garden-book: The Garden Book — Test Author (2 ch.): Soil; Pests" in result.stdout
    small = CliRunner().invoke(app, ["hook", "session-start", "--budget", "50", "-c",
                                     str(config)])  # no room for a header and an entry
    assert small.exit_code == 0 and small.stdout == "grimoire-beholder: 1 book (list_books)\n"
    counted = CliRunner().invoke(app, ["hook", "session-start", "--budget", "100", "-c",
                                       str(config)])
    assert counted.exit_code == 0 and len(counted.stdout) <= 100
    assert counted.stdout.splitlines() == ["Local book library (grimoire-beholder, 1 book):",
                                           "… and 1 more book or folder (list_books)"]
    broken = CliRunner().invoke(app, ["hook", "session-start", "-c", "/nonexistent.toml"])
    assert broken.exit_code == 0 and broken.stdout == ""


def test_session_start_shows_an_ingested_folder_as_one_entry(tmp_path: Path,
                                                             sample_book: Path) -> None:
    from mcp_helpers import write_config

    config = write_config(tmp_path)
    notes = tmp_path / "npm-docs"
    for n in range(40):
        (notes / "cli").mkdir(parents=True, exist_ok=True)
        (notes / "cli" / f"npm-command-{n}.md").write_text(
            f"# npm command {n}\n\nWhat npm command {n} does, in a few words of text.\n")
    runner = CliRunner()
    for path in (sample_book, notes):
        assert runner.invoke(app, ["ingest", str(path), "-q", "-c", str(config)]).exit_code == 0
    text = runner.invoke(app, ["hook", "session-start", "-c", str(config)]).stdout
    lines = text.splitlines()
    assert lines[1].startswith("- the-garden-book: The Garden Book")  # the book comes first
    [folder] = [line for line in lines if line.startswith("- folder ")]
    assert "40 files" in folder and str(notes.resolve()) in folder and "folders cli" in folder
    assert len(lines) == 3 and "(35 more)" in folder  # 41 books in three lines


def test_session_start_lists_real_books_first_and_gives_each_a_fair_share(
        tmp_path: Path) -> None:
    """A note ingested first comes after the books; a book with a long table of contents
    leaves room for the ones after it, so every book is named within the budget."""
    from helpers import make_epub, write_markdown_book
    from mcp_helpers import write_config

    config = write_config(tmp_path)
    note = write_markdown_book(tmp_path / "todo.md", "Shopping Note", {
        "List": {"Things": "Milk, eggs, flour and yeast for the weekend bread. " * 3}})
    long_toc = write_markdown_book(tmp_path / "manual.md", "The Long Manual", {
        f"Chapter {n} on the many settings of the machine": {
            "Body": f"Setting {n} changes how the machine behaves at night. " * 3}
        for n in range(40)})
    book = make_epub(tmp_path / "sea.epub", {
        "c1.xhtml": "<h1>Tides</h1><p>" + "The tide turns twice a day. " * 30 + "</p>"},
        [("Tides", "c1.xhtml")], title="The Sea Book")
    runner = CliRunner()
    for path in (note, long_toc, book):
        assert runner.invoke(app, ["ingest", str(path), "-q", "-c", str(config)]).exit_code == 0
    text = runner.invoke(app, ["hook", "session-start", "--budget", "500", "-c",
                               str(config)]).stdout
    lines = text.splitlines()
    assert len(text) <= 500 and "more books" not in text
    assert lines[1].startswith("- the-sea-book: The Sea Book")  # the EPUB before the notes
    assert [line.split(":")[0] for line in lines[2:]] == ["- shopping-note",
                                                          "- the-long-manual"]


@pytest.mark.parametrize("budget", ["0", "-5"])
@pytest.mark.parametrize("hook", ["session-start", "prompt"])
def test_a_budget_below_one_is_a_usage_error_not_the_default_or_a_header(
        config: Path, hook: str, budget: str) -> None:
    """``--budget 0`` printed the default 2,000 characters and ``--budget -5`` the header
    alone; both are now the parser's one-line error, through the console script too (exit 1
    there: the script is what an assistant's hook runs)."""
    result = CliRunner().invoke(app, ["hook", hook, "--budget", budget, "-c", str(config)],
                                input='{"prompt": "how do I keep the soil in good heart?"}')
    assert result.exit_code == 2 and result.stdout == ""
    assert "--budget" in result.output
    # without -c: the plain form an assistant's hook runs, which skips the option parser
    proc = run_cli("hook", hook, "--budget", budget,
                   env={"GRIMOIRE_BEHOLDER_CONFIG": str(config)},
                   stdin='{"prompt": "how do I keep the soil in good heart?"}')
    # exit 1, not the parser's 2: Claude Code takes a hook's 2 as "block this prompt" (and
    # erases it); any other code is an error shown beside the prompt, which goes on
    assert proc.returncode == 1 and proc.stdout == ""
    assert "--budget" in proc.stderr and "Traceback" not in proc.stderr
    unknown = run_cli("hook", hook, "--no-such-option",
                      env={"GRIMOIRE_BEHOLDER_CONFIG": str(config)}, stdin="{}")
    assert unknown.returncode == 1 and "--no-such-option" in unknown.stderr


def test_the_budget_bounds_everything_printed_header_and_newline_included(
        tmp_path: Path, sample_book: Path) -> None:
    """``--budget`` is the most characters a hook prints, its final newline included:
    session-start printed its 102-character header and a "… and N more" line whatever the
    budget (146 characters for ``--budget 50``) and ignored the newline. Whatever fits
    is still said: the entries shown and the "… and N more" line count every book."""
    from helpers import write_markdown_book

    config = hook_library(tmp_path, sample_book)
    for n, topic in enumerate(["Beekeeping", "Bread Baking", "Knots at Sea"]):
        book = write_markdown_book(tmp_path / f"b{n}.md", topic, {
            f"{topic} basics": {"Start": f"The first steps of {topic.lower()}. " * 6}})
        assert run_cli("ingest", str(book), "-q", "-c", str(config)).returncode == 0
    payload = json.dumps({"prompt": "how do copper tape and beer traps stop slugs?"})
    shown_more = shown_all = prompted = 0
    for budget in [*range(1, 420, 35), 2000]:
        text = run_cli("hook", "session-start", "--budget", str(budget), "-c", str(config))
        assert text.returncode == 0 and len(text.stdout) <= budget, (budget, text.stdout)
        lines = text.stdout.splitlines()
        if budget >= 40:
            assert lines, budget  # the count at least: "grimoire-beholder: 4 books …"
        if lines and lines[-1].startswith("… and "):
            left = int(lines[-1].split()[2])
            assert len(lines) - 2 + left == 4, lines  # entries shown + the rest counted
            shown_more += len(lines) > 2
        shown_all += len(lines) == 5
        passages = _prompt(config, payload, "--budget", str(budget))[1]
        assert len(passages) <= budget, (budget, passages)
        prompted += bool(passages)
    assert shown_more and shown_all  # some budgets show entries and a count, some all
    assert prompted >= 3  # passages from a budget of a few hundred characters on
