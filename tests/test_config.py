"""Configuration: defaults, relative db_path, and errors that name the key (which file is
read: tests/test_locate.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grimoire_beholder.config import CONFIG_ENV, Config, load_config
from grimoire_beholder.errors import ConfigError


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
    ("top_k = 101", "top_k"),
    ("top_k = 99999999999999999999", "top_k"),
    ("ollama_timeout = nan", "ollama_timeout"),
    ("ollama_timeout = inf", "ollama_timeout"),
    ("ollama_timeout = -1", "ollama_timeout"),
    ("fusion_alpha = nan", "fusion_alpha"),
    ("min_confidence = -inf", "min_confidence"),
    ("candidate_pool_size = 9223372036854775807", "candidate_pool_size"),
    ("ollama_retries = -1", "ollama_retries"),
    ("window_overlap = 300", "window_overlap"),
    ('db_path = "lib\\u0000.db"', "db_path"),
    ('db_path = ""', "db_path"),
    ('db_path = "."', "db_path"),
    ('embedding_model = "nomic\\u001b[2J"', "embedding_model"),
    ('ollama_host = "localhost:11434"', "ollama_host"),
    ('ocr_language = "eng; rm"', "ocr_language"),
    ("db_path = 5", "db_path"),
])
def test_bad_keys_are_named(tmp_path: Path, text: str, key: str) -> None:
    """Every value is checked when the file is loaded, not when a query first uses it: one
    line naming the key and the file, never a traceback later."""
    path = tmp_path / "config.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=key) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message


def test_top_k_bound_is_the_search_engines(tmp_path: Path) -> None:
    from grimoire_beholder.config import RANGES
    from grimoire_beholder.search.engine import MAX_TOP_K
    from grimoire_beholder.text import MOST_HITS

    assert RANGES["top_k"] == (1, MAX_TOP_K) == (1, MOST_HITS)


def test_a_config_path_that_is_a_folder_says_so(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path))
    with pytest.raises(ConfigError, match=r"names a folder") as info:
        load_config()
    assert "does not exist" not in str(info.value)
    with pytest.raises(ConfigError, match="folder"):
        load_config(tmp_path)


@pytest.mark.slow  # a subprocess per command
def test_bad_config_is_one_cli_line_for_every_command(tmp_path: Path) -> None:
    """Through the CLI: the values that used to end in tracebacks."""
    import subprocess
    import sys

    for text in ('db_path = "a\\u0000b.db"', "ollama_timeout = nan", "top_k = 1000"):
        (tmp_path / "config.toml").write_text("[grimoire-beholder]\n" + text + "\n")
        for args in (("list",), ("query", "lamps"), ("status",)):
            proc = subprocess.run([sys.executable, "-m", "grimoire_beholder.cli.entry", *args],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and "config.toml" in lines[0], proc.stderr


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


@pytest.mark.parametrize(("text", "said"), [
    ('top_k = "5"', "config key 'top_k' must be an integer (got string '5')"),
    ("top_k = true", "config key 'top_k' must be an integer (got boolean True)"),
    ("top_k = 1e3", "config key 'top_k' must be an integer (got float 1000.0)"),
    ("fusion_alpha = [1]", "config key 'fusion_alpha' must be a number (got array [1])"),
    ("db_path = 5", "config key 'db_path' must be a string (got integer 5)"),
])
def test_a_value_of_the_wrong_kind_is_named_in_toml_words(
        tmp_path: Path, text: str, said: str) -> None:
    """The kinds are TOML's (the file's language), not Python's: it said 'must be a int (got
    str '5')'."""
    path = tmp_path / "config.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{said} in {path}"


@pytest.mark.parametrize(("text", "said"), [
    ("min_confidence = 1" + "0" * 400, "'min_confidence' must be from 0.0 to 1.0 (got an integer"),
    ("top_k = " + "9" * 5000, "an integer has more than 4,300 digits"),
    ("x = " + "[" * 50_000 + "]" * 50_000, "not valid TOML (nested too deeply)"),
])
def test_a_number_python_cannot_hold_is_one_config_error(tmp_path: Path, text: str,
                                                         said: str) -> None:
    """A float key given an integer past 1e308 (OverflowError), an integer of more than
    4,300 digits (ValueError from tomllib) and arrays nested 50,000 deep (RecursionError)
    each ended every command in a traceback."""
    path = tmp_path / "config.toml"
    path.write_text("[grimoire-beholder]\n" + text + "\n")
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_config(path)
