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


def test_a_password_anywhere_in_the_url_never_shows() -> None:
    from grimoire_beholder.locate import scrubbed, unencoded_password

    assert redacted("postgresql://me@db/books?sslmode=require&password=Q1w2") == (
        "postgresql://me@db/books?sslmode=require&password=***")
    assert redacted("postgresql:///books?host=/run/pg&PASS%77ORD=Q1w2&sslpassword=Z9") == (
        "postgresql:///books?host=/run/pg&PASS%77ORD=***&sslpassword=***")
    typed = "postgresql://me:p@ss%w/rd:x#?@db:5432/books"  # not percent-encoded
    assert redacted(typed) == "postgresql://me:***@db:5432/books"
    assert unencoded_password(typed) is not None
    assert unencoded_password("postgresql://me:p%40ss@db/books") is None
    assert "ss%w" not in scrubbed('invalid percent-encoded token: "ss%w"', typed)


def test_a_url_is_never_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grimoire_beholder.errors import ConfigError, GrimoireError

    monkeypatch.chdir(tmp_path)
    assert load_config(library="PostgreSQL://me:pw9@db/books").database_url == (
        "postgresql://me:pw9@db/books")  # schemes ignore case; libpq wants lower case
    for url in ("mysql://me:pw9@db/books", "SQLITE:///me:pw9@x"):
        with pytest.raises(ConfigError) as refused:
            load_config(library=url)
        assert "pw9" not in str(refused.value) and "a folder or a postgresql" in str(
            refused.value)
    config = tmp_path / "config.toml"
    config.write_text('[grimoire-beholder]\ndb_path = "mysql://me:pw9@db/books"\n')
    with pytest.raises(ConfigError, match="a file or a postgresql") as refused:
        load_config(config)
    assert "pw9" not in str(refused.value)
    on_server = load_config(library="postgresql://me:pw9@db/books")
    with pytest.raises(GrimoireError, match="does not work on a library in a database server"
                       ) as refused:
        _ = on_server.database_path  # a path made of the URL would hold its password
    assert "pw9" not in str(refused.value)
    assert not any(tmp_path.iterdir()) or [p.name for p in tmp_path.iterdir()] == [
        "config.toml"]
