"""The CLI used as a new user would, away from the checkout: a fresh HOME, an empty folder.

Only ``ingest`` creates a library: every other command, with no library, creates no file and
says in one line where it looked and how to create one. ``ingest`` creates the per-user
library, which every later command finds from any folder. ``--library`` and
``GRIMOIRE_BEHOLDER_LIBRARY`` choose another; ``status`` says why.

The CLI runs in-process (``helpers.run_cli``: the script's entry point, its streams and
environment swapped for the call); a first ingest on the default embedded model and
``--version`` run as real subprocesses, as a user starts them.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pytest

from helpers import run_cli
from mcp_helpers import cli_command
from user_home import SAMPLE, run, run_process, tree, user_db, user_env

READERS = [("list",), ("query", "lighthouse beam"), ("status",), ("stats",), ("check",),
           ("eval", "questions.jsonl"), ("outline", "some-book"), ("show", "some-book", "0", "0"),
           ("verify", "the lamp was lit"), ("page", "some-book", "1"), ("health",),
           ("lookup", "lamp"),
           ("serve-mcp",), ("serve-mcp", "--allow-sync")]
WRITERS = [("sync",), ("delete", "some-book", "--yes"), ("reindex-fts",)]  # not ingest
FAKE_LIBRARY = '[grimoire-beholder]\nembedding_backend = "fake"\nchunk_size = 120\n' \
               'chunk_overlap = 20\n'


@pytest.mark.parametrize("args", READERS + WRITERS,
                         ids=[" ".join(a) for a in READERS + WRITERS])
def test_commands_but_ingest_without_a_library_fail_in_one_line_and_create_nothing(
        home: Path, args: tuple[str, ...]) -> None:
    (home / "work" / "questions.jsonl").write_text(
        '{"id": "q1", "question": "x?", "answerable": false}\n')
    before = tree(home)
    proc = run(home, *args)
    assert proc.returncode != 0 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(user_db(home)) in lines[0] and "grimoire-beholder ingest FILE" in lines[0]
    assert tree(home) == before


def test_a_deleted_working_folder_falls_back_to_the_per_user_library(home: Path) -> None:
    """A shell still standing in a folder removed under it (a switched branch, a cleaned
    temporary folder) gets the usual one-line answer, not a traceback."""
    gone = home / "work" / "gone"
    gone.mkdir()
    with contextlib.chdir(gone):
        gone.rmdir()
        proc = run_cli("list", env=user_env(home))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(user_db(home)) in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("hook", ["session-start", "prompt"])
def test_hooks_without_a_library_print_nothing_and_succeed(home: Path, hook: str) -> None:
    before = tree(home)
    proc = run(home, "hook", hook, stdin='{"prompt": "how far does a lighthouse beam reach?"}')
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert tree(home) == before


def test_another_tools_config_toml_is_neither_read_nor_written(home: Path) -> None:
    site = home / "work"
    (site / "config.toml").write_text('baseURL = "https://example.org/"\ntitle = "Blog"\n')
    before = tree(home)
    proc = run(home, "list", cwd=site)
    assert proc.returncode == 1 and str(user_db(home)) in proc.stderr
    assert "unknown config key" not in proc.stderr
    assert tree(home) == before


@pytest.mark.slow  # the default embedded model, in real subprocesses
def test_ingest_from_an_empty_folder_fills_the_per_user_library_found_from_anywhere(
        home: Path, tmp_path: Path) -> None:
    proc = run_process(home, "ingest", str(SAMPLE), "-q")
    assert proc.returncode == 0, proc.stderr
    assert user_db(home).is_file()
    assert not list((home / "work").iterdir())  # nothing lands in the working folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = run_process(home, "query", "how far can a lighthouse beam reach?", "--json",
                        cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["book"] == "The Lighthouse Keeper's Handbook"
    status = json.loads(run_process(home, "status", "--json", cwd=elsewhere).stdout)
    assert status["database"] == str(user_db(home))
    assert status["chosen_by"].startswith("user default")
    checked = run_process(home, "check", cwd=elsewhere)
    assert checked.returncode == 0 and ": ok · 1 book, " in checked.stdout, checked.stdout
    assert not list(elsewhere.iterdir())
    # The embedded model's runtime leaves no telemetry (~/.cache/Microsoft/.../deviceid);
    # the one thing in the user's cache folder is the model's own graph.
    assert {p.relative_to(home).parts[0] for p in tree(home)} == {"work", ".local", ".cache"}
    cached = [p.relative_to(home / ".cache") for p in tree(home / ".cache") if p.is_file()]
    assert {p.parts[:2] for p in cached} == {("grimoire-beholder", "models")}
    # the default graph (embed_int8) for ingest, its query graph for the search
    assert sorted(p.name.split("-")[0] for p in cached) == ["int8", "query"]


def test_library_option_and_environment_choose_the_library_and_status_says_why(
        home: Path) -> None:
    shelf = home / "shelf"
    shelf.mkdir()
    (shelf / "config.toml").write_text(FAKE_LIBRARY)
    proc = run(home, "ingest", str(SAMPLE), "-q", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert (shelf / "book.db").is_file() and not user_db(home).exists()

    by_flag = json.loads(run(home, "status", "--json", "--library", str(shelf)).stdout)
    assert (by_flag["database"], by_flag["chosen_by"]) == (str(shelf / "book.db"),
                                                           "flag --library")
    by_env = run(home, "status", GRIMOIRE_BEHOLDER_LIBRARY=str(shelf))
    assert "chosen by:  environment GRIMOIRE_BEHOLDER_LIBRARY" in by_env.stdout
    assert f"config:     {shelf / 'config.toml'}" in by_env.stdout
    (shelf / "notes" / "deep").mkdir(parents=True)
    by_folder = json.loads(run(home, "list", "--json", cwd=shelf / "notes" / "deep").stdout)
    assert [b["slug"] for b in by_folder] == ["the-lighthouse-keepers-handbook"]


@pytest.mark.parametrize("args", [("ingest", str(SAMPLE), "--library", ""),
                                  ("list", "--library", " "), ("status", "--config", "")],
                         ids=["ingest", "list", "status"])
def test_an_empty_library_or_config_option_is_refused_not_taken_as_the_working_folder(
        home: Path, args: tuple[str, ...]) -> None:
    """``--library "$LIB"`` with LIB unset must not make the working folder a library."""
    before = tree(home)
    proc = run(home, *args)
    assert proc.returncode == 2 and "is empty; name a path" in proc.stderr
    assert tree(home) == before


@pytest.mark.parametrize("args", [("ingest", ""), ("ingest", " ", "--json"), ("sync", ""),
                                  ("unfollow", ""), ("eval", "")],
                         ids=["ingest", "ingest-json", "sync", "unfollow", "eval"])
def test_an_empty_path_argument_is_refused_not_taken_as_the_working_folder(
        home: Path, args: tuple[str, ...]) -> None:
    """``ingest "$BOOK"`` with BOOK unset ingested every file under the working folder (a
    home folder: every PDF in it) and followed it for sync."""
    work = home / "work"
    (work / "notes.md").write_text("# Notes\n\nSome notes about tides.\n")
    (home / "lib").mkdir()
    (home / "lib" / "config.toml").write_text(FAKE_LIBRARY)
    before = tree(home)
    proc = run(home, *args, "--library", str(home / "lib"))
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert "is empty; name a file or folder" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert tree(home) == before


def test_a_quoted_tilde_is_the_home_folder_and_a_url_is_refused(home: Path) -> None:
    """The README's own `ingest "~/Calibre Library"`: inside quotes the shell leaves `~`
    alone, and the CLI said "~/Calibre Library: file not found" (`--library` expanded it).
    A URL was folded into `https:/…` and reported as a missing file."""
    (home / "My Notes").mkdir()
    (home / "My Notes" / "tides.md").write_text("# Tides\n\nTides turn at the harbour.\n")
    (home / "lib").mkdir()
    (home / "lib" / "config.toml").write_text(FAKE_LIBRARY)
    lib = ("--library", str(home / "lib"))
    proc = run(home, "ingest", "~/My Notes", *lib)
    assert proc.returncode == 0, proc.stderr
    assert "added 1" in proc.stdout
    listed = json.loads(run(home, "list", "--json", *lib).stdout)
    assert [b["source_path"] for b in listed] == [str(home / "My Notes" / "tides.md")]
    assert run(home, "sync", "~/My Notes", "--dry-run", *lib).returncode == 0
    url = run(home, "ingest", "https://example.org/book.pdf", *lib)
    assert url.returncode == 2
    assert "https://example.org/book.pdf is a URL; name a file or folder" in url.stderr


@pytest.mark.parametrize("args", [("ingest", "~no-such-user-x/book.md"),
                                  ("sync", "~no-such-user-x/notes"),
                                  ("list", "--library", "~no-such-user-x/lib")])
def test_a_tilde_naming_no_user_is_one_line_not_a_traceback(
        home: Path, args: tuple[str, ...]) -> None:
    """Python's expanduser raises for ``~name`` of no user (the shell leaves it as typed):
    every file argument and --library gave a RuntimeError traceback."""
    (home / "lib").mkdir()
    (home / "lib" / "config.toml").write_text(FAKE_LIBRARY)
    before = tree(home)
    lib = () if "--library" in args else ("--library", str(home / "lib"))
    proc = run(home, *args, *lib)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "no home folder for '~no-such-user-x'" in proc.stderr
    assert tree(home) == before


def test_a_file_url_names_the_path_to_give(home: Path) -> None:
    (home / "lib").mkdir()
    (home / "lib" / "config.toml").write_text(FAKE_LIBRARY)
    proc = run(home, "ingest", "file:///srv/my%20books/a.pdf", "--library", str(home / "lib"))
    assert proc.returncode == 2
    assert "is a file URL; name the file itself: /srv/my books/a.pdf" in proc.stderr


@pytest.mark.slow  # the default embedded model, in a real subprocess
def test_a_new_library_folder_is_created_marked(home: Path) -> None:
    shelf = home / "new-shelf"
    proc = run_process(home, "ingest", str(SAMPLE), "-q", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert "[grimoire-beholder]" in (shelf / "config.toml").read_text()
    status = run(home, "status", cwd=shelf)
    assert "chosen by:  folder" in status.stdout and str(shelf / "book.db") in status.stdout


def test_the_repository_quick_start_uses_the_checkout_library(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In the checkout, the repository's own config.toml is the library (developer quick
    start), found from any folder below it."""
    from grimoire_beholder.config import load_config

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root / "samples")
    cfg = load_config()
    assert cfg.source == str(root / "config.toml") and cfg.database_path == root / "book.db"


def test_version() -> None:
    from importlib.metadata import version

    proc = subprocess.run([*cli_command(), "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (0, f"grimoire-beholder "
                                                 f"{version('grimoire-beholder-mcp')}\n")


def test_every_command_that_takes_config_takes_library() -> None:
    from grimoire_beholder.cli.app import every_command

    def commands(group: object) -> list[object]:
        subs = getattr(group, "commands", {})
        return [c for sub in subs.values() for c in ([sub] if not hasattr(sub, "commands")
                                                     else commands(sub))]

    for command in commands(every_command()):
        options = {o for p in command.params for o in getattr(p, "opts", [])}  # type: ignore[attr-defined]
        if "--config" in options:
            assert "--library" in options, command.name  # type: ignore[attr-defined]
