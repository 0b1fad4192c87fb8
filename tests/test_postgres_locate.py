"""Naming a library in PostgreSQL: the URL reaches the config as typed (never a folder), from
the flag, the environment or ``db_path``; messages hide its password; ``mcp-config`` pins the
server to it. No server needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.cli.client_configs import server_args
from grimoire_beholder.config import load_config
from grimoire_beholder.locate import BY_LIBRARY_ENV, BY_LIBRARY_FLAG, is_server_url, redacted

URL = "postgresql://team:s3cret@db.example:5433/books?sslmode=require"


def test_the_flag_and_the_environment_give_the_url_as_typed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    by_flag = load_config(library=URL)
    assert by_flag.database_url == URL and by_flag.origin == BY_LIBRARY_FLAG
    monkeypatch.setenv("GRIMOIRE_BEHOLDER_LIBRARY", URL)
    by_env = load_config()
    assert by_env.database_url == URL and by_env.origin == BY_LIBRARY_ENV
    assert not any(tmp_path.iterdir())  # locating touched nothing


def test_db_path_in_a_config_file_may_be_a_url(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[grimoire-beholder]\ndb_path = "{URL}"\nembedding_backend = "fake"\n')
    loaded = load_config(config)
    assert loaded.database_url == URL and loaded.embedding_backend == "fake"
    assert load_config(library=tmp_path).database_url == URL
    assert load_config(library=tmp_path / "elsewhere").database_url is None  # a folder


def test_the_password_never_shows() -> None:
    assert redacted(URL) == "postgresql://team:***@db.example:5433/books?sslmode=require"
    assert redacted("postgresql://team@db/books") == "postgresql://team@db/books"
    assert is_server_url("postgres://x/y") and not is_server_url("postgresql-notes/")


def test_mcp_config_pins_the_server_to_the_url() -> None:
    assert server_args(load_config(library=URL)) == ["serve-mcp", "--library", URL]
