"""The CLI on a library in a real PostgreSQL server: two ingests at once, the reading
commands, health and eval, the environment variable, a SIGKILLed ingest (of a file or of a
folder) resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write_markdown_book

pytest_plugins = ["pg_server"]  # the pg_admin_url and pg_url fixtures

pytestmark = pytest.mark.slow  # a real server and real subprocesses

CONFIG = """\
[grimoire-beholder]
db_path = "{url}"
embedding_backend = "fake"
llm_backend = "fake"
chunk_size = 60
chunk_overlap = 10
embed_batch_size = 3
"""


def _books(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for n, topic in enumerate(["rivers", "mountains"]):
        chapters = {f"{topic.title()} {c}": {
            f"Part {s}": " ".join(f"{topic} sentence {c}.{s}.{i} about flow and stone."
                                  for i in range(25)) for s in range(2)} for c in range(2)}
        out.append(write_markdown_book(folder / f"book{n}.md", f"Book of {topic}", chapters))
    return out


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GRIMOIRE_BEHOLDER_")}
    env.update(extra)
    return env


def _cli(*args: str, config: Path | None = None, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "grimoire_beholder.cli.entry", *args]
    if config is not None:
        cmd += ["--config", str(config)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          env=env or _env())


def _table(url: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sql)]  # type: ignore[arg-type]


def _state(url: str) -> list[tuple[object, ...]]:
    """Every chunk by its stable identity, with its context, status and vector."""
    return _table(url, "SELECT b.slug, c.chapter_index, c.section_index, c.chunk_index, "
                       "c.text, c.context, c.status, e.vector::text FROM chunks c "
                       "JOIN books b ON b.id = c.book_id "
                       "LEFT JOIN embeddings e ON e.chunk_id = c.id ORDER BY 1, 2, 3, 4")


def test_two_writers_then_every_reading_command(tmp_path: Path, pg_url: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=pg_url))
    first, second = _books(tmp_path / "books")
    cmd = [sys.executable, "-m", "grimoire_beholder.cli.entry", "ingest"]
    running = [subprocess.Popen([*cmd, str(book), "--config", str(config)], env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for book in (first, second)]
    for proc in running:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    listed = json.loads(_cli("list", "--json", config=config).stdout)
    assert sorted(b["slug"] for b in listed) == ["book-of-mountains", "book-of-rivers"]
    assert all(b["status"]["embedded"] == b["chunks"] > 0 for b in listed)

    found = json.loads(_cli("query", "mountains stone", "--json", config=config).stdout)
    assert found["results"] and found["results"][0]["slug"] == "book-of-mountains"
    outline = _cli("outline", "book-of-rivers", config=config)
    assert outline.returncode == 0 and "Rivers 1" in outline.stdout
    shown = _cli("show", "book-of-rivers", "1", "0", config=config)
    assert "rivers sentence 1.0.3 about flow and stone." in shown.stdout
    verified = _cli("verify", "rivers sentence 1.0.3 about flow", config=config)
    assert verified.returncode == 0 and "found" in verified.stdout
    checked = _cli("check", config=config)
    assert checked.returncode == 0 and ": ok" in checked.stdout, checked.stdout

    health = _cli("health", "book-of-rivers", "--json", config=config)
    assert health.returncode == 0, health.stderr
    assert json.loads(health.stdout)[0]["slug"] == "book-of-rivers"
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "rivers flow and stone",
                                     "gold_file": "book0.md",
                                     "evidence": "about flow and stone"}) + "\n")
    scored = _cli("eval", str(questions), "--json", config=config)
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["hybrid"]["recall@1"] == 1.0

    gone = _cli("delete", "book-of-rivers", "--yes", config=config)
    assert gone.returncode == 0, gone.stderr
    assert [b["slug"] for b in json.loads(_cli("list", "--json", config=config).stdout)] == [
        "book-of-mountains"]
    assert _table(pg_url, "SELECT count(*) FROM chunks c JOIN books b ON b.id = c.book_id "
                          "WHERE b.slug = 'book-of-rivers'") == [(0,)]
    assert _cli("check", config=config).returncode == 0


def test_the_environment_variable_names_the_library_like_the_flag(tmp_path: Path,
                                                                  pg_url: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=pg_url))
    book, _ = _books(tmp_path / "books")
    assert _cli("ingest", str(book), config=config).returncode == 0
    by_flag = _cli("list", "--json", "--library", pg_url)
    by_env = _cli("list", "--json", env=_env(GRIMOIRE_BEHOLDER_LIBRARY=pg_url))
    assert by_flag.returncode == by_env.returncode == 0, by_env.stderr
    assert json.loads(by_env.stdout) == json.loads(by_flag.stdout)
    assert [b["slug"] for b in json.loads(by_env.stdout)] == ["book-of-rivers"]
    status = _cli("status", env=_env(GRIMOIRE_BEHOLDER_LIBRARY=pg_url))
    assert "postgresql://" in status.stdout and "environment" in status.stdout
    assert not list(Path.cwd().glob("postgresql*"))  # a URL never becomes a folder


def test_a_url_naming_no_server_fails_in_one_line(tmp_path: Path) -> None:
    done = _cli("list", "--library", f"postgresql://nobody@/none?host={tmp_path}")
    assert done.returncode != 0
    assert "cannot connect to the PostgreSQL library" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def clean_chunks(pg_admin_url: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> list[tuple[object, ...]]:
    """The chunks of both books ingested without interruption."""
    from pg_server import fresh_database

    folder = tmp_path_factory.mktemp("clean")
    url = fresh_database(pg_admin_url)
    (folder / "config.toml").write_text(CONFIG.format(url=url))
    for book in _books(folder / "books"):
        assert _cli("ingest", str(book), config=folder / "config.toml").returncode == 0
    return _state(url)


# Inside the structure transaction, inside an embedding batch, and just after one commits.
@pytest.mark.parametrize("kill_at", ["structure.before_commit:1", "embeddings.before_commit:2",
                                     "embeddings.commit:3"])
def test_a_killed_ingest_resumes_to_the_same_chunks(tmp_path: Path, pg_url: str,
                                                    clean_chunks: list[tuple[object, ...]],
                                                    kill_at: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=pg_url))
    books = _books(tmp_path / "books")
    died = _cli("ingest", str(books[0]), config=config,
                env=_env(GRIMOIRE_BEHOLDER_KILL_AT=kill_at))
    assert died.returncode == -signal.SIGKILL
    for book in books:
        again = _cli("ingest", str(book), config=config)
        assert again.returncode == 0, again.stderr
    assert _state(pg_url) == clean_chunks
    assert _cli("check", config=config).returncode == 0


def test_a_killed_folder_ingest_resumes_to_the_same_chunks(
        tmp_path: Path, pg_url: str, clean_chunks: list[tuple[object, ...]]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=pg_url))
    _books(tmp_path / "books")
    # inside the second book's structure transaction: the first is whole, the second absent
    died = _cli("ingest", str(tmp_path / "books"), config=config,
                env=_env(GRIMOIRE_BEHOLDER_KILL_AT="structure.before_commit:2"))
    assert died.returncode == -signal.SIGKILL
    assert [b["slug"] for b in json.loads(_cli("list", "--json", config=config).stdout)] == [
        "book-of-rivers"]
    died = _cli("sync", config=config,  # and inside an embedding batch of the second
                env=_env(GRIMOIRE_BEHOLDER_KILL_AT="embeddings.before_commit:2"))
    assert died.returncode == -signal.SIGKILL
    again = _cli("sync", "--json", config=config)
    assert again.returncode == 0, again.stderr
    assert sorted(f["action"] for f in json.loads(again.stdout)["files"]) == [
        "resumed", "unchanged"]
    assert _state(pg_url) == clean_chunks
    assert _cli("check", config=config).returncode == 0


@pytest.mark.anyio
async def test_serve_mcp_over_stdio_on_a_postgresql_library(tmp_path: Path, pg_url: str) -> None:
    from mcp import Client, StdioServerParameters

    from mcp_helpers import call, cli_command, structured

    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=pg_url))
    book, _ = _books(tmp_path / "books")
    assert _cli("ingest", str(book), config=config).returncode == 0
    command, *args = cli_command()
    params = StdioServerParameters(command=command, args=[*args, "serve-mcp", "--config",
                                                          str(config)], env=_env())
    async with Client(params) as client:
        found = structured(await call(client, "search_book", question="rivers stone flow"))
        assert found["results"] and found["results"][0]["slug"] == "book-of-rivers"
        books = structured(await call(client, "list_books"))
        assert [b["slug"] for b in books["books"]] == ["book-of-rivers"]
        looked = structured(await call(client, "lookup_index", term="rivers"))
        assert looked["entries"] == []  # a Markdown book has no printed index
