"""Configuration: defaults, file lookup, relative db_path, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.config import CONFIG_ENV, Config, load_config
from grimoire_beholder.errors import ConfigError


def test_defaults_without_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    cfg = load_config()
    assert cfg.source is None
    assert cfg.chunk_size == 256 and cfg.chunk_overlap == 40
    assert cfg.section_split_tokens == 3000
    assert cfg.database_path == (tmp_path / "book.db").resolve()


def test_config_in_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text('top_k = 9\nretrieval_mode = "keyword"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    cfg = load_config()
    assert (cfg.top_k, cfg.retrieval_mode) == (9, "keyword")


def test_env_config_and_relative_db_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "lib.toml").write_text('db_path = "data/my.db"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CONFIG_ENV, str(conf_dir / "lib.toml"))
    cfg = load_config()
    assert cfg.database_path == (conf_dir / "data" / "my.db").resolve()


def test_missing_env_config_is_loud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config()


@pytest.mark.parametrize(("text", "key"), [
    ("chunk_sise = 500", "chunk_sise"),
    ('chunk_size = "big"', "chunk_size"),
    ("top_k = true", "top_k"),
    ('retrieval_mode = "semantic"', "retrieval_mode"),
    ("chunk_overlap = 700", "chunk_overlap"),
    ("top_k = 0", "top_k"),
])
def test_bad_keys_are_named(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=key):
        load_config(path)


def test_invalid_toml(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("top_k = = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_int_accepted_for_float_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("fusion_alpha = 1\n")
    assert load_config(path).fusion_alpha == 1.0


def test_repo_config_is_valid() -> None:
    repo_config = Path(__file__).resolve().parents[1] / "config.toml"
    cfg = load_config(repo_config)
    assert isinstance(cfg, Config) and cfg.embedding_backend == "embedded"


def test_embedding_model_defaults_to_a_name_the_backend_knows(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('embedding_backend = "ollama"\n')
    assert load_config(path).embedding_model_name == "nomic-embed-text"
    path.write_text('embedding_backend = "ollama"\nembedding_model = "all-minilm"\n')
    assert load_config(path).embedding_model_name == "all-minilm"
    assert Config().embedding_model_name == "all-MiniLM-L6-v2"
    path.write_text('embedding_model = "nomic-embed-text"\n')  # forgot the backend
    with pytest.raises(ConfigError, match="embedded backend runs only all-MiniLM-L6-v2"):
        load_config(path)


def test_the_package_registers_no_test_backend(tmp_path: Path) -> None:
    """``fake`` comes from the dev-only tests/fakes_plugin, never from the package itself."""
    from importlib.metadata import distribution

    groups = {ep.group for ep in distribution("grimoire-beholder-mcp").entry_points}
    assert groups == {"console_scripts"}
    path = tmp_path / "config.toml"
    path.write_text('embedding_backend = "gpt"\n')
    with pytest.raises(ConfigError, match=r"one of embedded, ollama, fake \(got 'gpt'\)"):
        load_config(path)
