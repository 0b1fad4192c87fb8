"""Typed configuration: built-in defaults, overridden by a TOML file.

Which file (and which library folder) is ``locate.py``'s business: ``--config``/``--library``,
the environment, the nearest library folder, or the per-user library. Every key has a
default, so there may be no file at all. The keys sit under a ``[grimoire-beholder]`` table
(which is what marks a folder's ``config.toml`` as ours) or, in a file named explicitly, at
the top level.

A relative ``db_path`` resolves against the library folder (the config file's folder, or the
per-user data folder). Unknown keys and wrong types are errors naming the key.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from grimoire_beholder.errors import ConfigError, GrimoireError
from grimoire_beholder.locate import (
    CONFIG_ENV,
    LIBRARY_ENV,
    MARKER_TABLE,
    Location,
    is_server_url,
    is_url,
    locate,
    redacted,
    server_url,
)

__all__ = ["CONFIG_ENV", "LIBRARY_ENV", "Config", "ConfigError", "config_from_mapping",
           "config_keys", "load_config"]

# Allowed values for the keys that take one of a few words.
CHOICES: dict[str, tuple[str, ...]] = {
    "retrieval_mode": ("hybrid", "vector", "keyword"),
    "embedding_backend": ("embedded", "ollama"),
    "llm_backend": ("none", "ollama"),
    "fusion": ("rrf", "convex"),
    "chunk_mode": ("auto", "header", "window"),
    "ocr": ("auto", "off"),
    "reranker": ("none", "onnx", "ollama"),
}

# More backends may come from other installed packages: an entry point in the key's group,
# named by the config value, that takes the Config and returns an Embedder (or Generator).
# The test suite registers its deterministic fakes as "fake" this way (tests/fakes_plugin).
BACKEND_ENTRY_POINTS: dict[str, str] = {
    "embedding_backend": "grimoire_beholder.embedding_backends",
    "llm_backend": "grimoire_beholder.llm_backends",
}

# The model behind ``embedding_model = ""``, per backend. The embedded backend runs only
# all-MiniLM-L6-v2 (models/embedded.py); nomic-embed-text is Ollama's most pulled embedder.
DEFAULT_EMBEDDING_MODELS: dict[str, str] = {
    "embedded": "all-MiniLM-L6-v2",
    "ollama": "nomic-embed-text",
}


@dataclass(frozen=True)
class Config:
    """Every setting, with its default. See the configuration table in README.md."""

    db_path: str = "book.db"
    # models
    embedding_backend: str = "embedded"
    embedding_model: str = ""  # "": the backend's own (see embedding_model_name)
    llm_backend: str = "none"
    llm_model: str = "llama3.2:3b"
    ollama_host: str = "http://localhost:11434"
    ollama_timeout: float = 120.0
    ollama_retries: int = 3
    context_concurrency: int = 2
    embed_batch_size: int = 32
    # the embedded model's projections as int8 GEMMs (models/bert_onnx.py): about twice the
    # chunks per CPU-second, the dev sets within 0.005 of float32 (README, "Performance")
    embed_int8: bool = True
    # structure
    # Sized to the embedded MiniLM's 256-word-piece window (README, "Retrieval quality");
    # larger Ollama embedders work at this size too, and a config can trade it back.
    chunk_size: int = 256
    chunk_overlap: int = 40
    section_split_tokens: int = 3000
    # auto: heading-structured files chunk per section, headerless prose in windows
    chunk_mode: str = "auto"
    window_size: int = 256
    window_overlap: int = 40
    # PDF parsing (parse/pdf_tables.py, parse/pdf_ocr.py): ruled tables as one record per row;
    # OCR of pages without a text layer when Tesseract is installed ("auto") or never ("off")
    pdf_tables: bool = True
    ocr: str = "auto"
    ocr_language: str = "eng"
    # Calibre and Zotero libraries (sources/): which of an item's formats is read, in order
    source_formats: str = "epub,pdf,docx,html,htm,txt,md"
    # retrieval
    top_k: int = 5
    retrieval_mode: str = "hybrid"
    candidate_pool_size: int = 50
    rrf_k: int = 60
    # convex fusion and its alpha: chosen on the dev sets (README, "Retrieval quality")
    fusion: str = "convex"
    fusion_alpha: float = 0.7
    # reranking after fusion (search/rerank.py): none, a local ONNX cross-encoder, or Ollama
    reranker: str = "none"
    rerank_candidates: int = 30
    reranker_model: str = "qwen2.5:1.5b"
    reranker_path: str = ""
    # Below this a search is flagged low_confidence (0 = never; search/confidence.py): the
    # probability that the answer is among the hits (README, "Answer quality").
    min_confidence: float = 0.2
    # per-search token-savings counters in a small file beside the library (search/savings.py)
    record_stats: bool = True
    # where the config came from (not a TOML key)
    source: str | None = field(default=None, compare=False)
    base_dir: str = field(default=".", compare=False)
    # which rule of locate.py chose this library ("" when built in code)
    origin: str = field(default="", compare=False)
    # whether ``--library`` named the database file itself (``db_path`` is then that file)
    library_file: bool = field(default=False, compare=False)

    @property
    def database_url(self) -> str | None:
        """The ``postgresql://`` URL of a library in PostgreSQL, else None (a SQLite file)."""
        return server_url(self.db_path) if is_server_url(self.db_path) else None

    @property
    def database_path(self) -> Path:
        """The absolute path of the SQLite file. A URL is never a path: on a library in a
        server, what needs a file says in one line that it does not work there yet (a path
        made of the URL would put its password in a file name, a message or a tool's
        answer)."""
        if is_url(self.db_path):
            raise GrimoireError(
                f"this command does not work on a library in a database server yet "
                f"({redacted(self.db_path.strip())})")
        path = Path(self.db_path).expanduser()
        if not path.is_absolute():
            path = Path(self.base_dir) / path
        return path.resolve()

    @property
    def embedding_model_name(self) -> str:
        """The embedding model in use: ``embedding_model``, or the backend's default."""
        return (self.embedding_model
                or DEFAULT_EMBEDDING_MODELS.get(self.embedding_backend, self.embedding_backend))

    def with_overrides(self, **changes: Any) -> Config:
        """A copy with some keys changed, validated like a file would be."""
        return _validated(replace(self, **changes))


_INTERNAL = {"source", "base_dir", "origin", "library_file"}


def _key_types() -> dict[str, type]:
    hints = {"str": str, "int": int, "float": float, "bool": bool}
    out: dict[str, type] = {}
    for f in fields(Config):
        if f.name in _INTERNAL:
            continue
        out[f.name] = hints[str(f.type).split("|")[0].strip()]
    return out


def plugin_backends(key: str) -> tuple[str, ...]:
    """The backend names other installed packages add for ``key`` (BACKEND_ENTRY_POINTS)."""
    from importlib.metadata import entry_points

    group = BACKEND_ENTRY_POINTS.get(key)
    return tuple(ep.name for ep in entry_points(group=group)) if group else ()


# (least, most) for every number. The maxima lie far past any useful value; they keep each
# one inside what SQLite's integers and the model clients accept. top_k's is the search
# engine's MAX_TOP_K (tests/test_config.py holds them equal).
RANGES: dict[str, tuple[float, float]] = {
    "ollama_timeout": (0.1, 86_400.0),
    "ollama_retries": (0, 100),
    "context_concurrency": (1, 256),
    "embed_batch_size": (1, 100_000),
    "chunk_size": (1, 1_000_000),
    "chunk_overlap": (0, 1_000_000),
    "section_split_tokens": (1, 100_000_000),
    "window_size": (1, 1_000_000),
    "window_overlap": (0, 1_000_000),
    "top_k": (1, 100),
    "candidate_pool_size": (1, 1_000_000),
    "rrf_k": (1, 1_000_000),
    "fusion_alpha": (0.0, 1.0),
    "rerank_candidates": (1, 100_000),
    "min_confidence": (0.0, 1.0),
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _validated(cfg: Config) -> Config:
    """``cfg`` if every value is usable; else a ConfigError naming the key (and the file)."""
    where = f" in {cfg.source}" if cfg.source else ""

    def fail(message: str) -> ConfigError:
        return ConfigError(message + where)

    for key, allowed in CHOICES.items():
        value = getattr(cfg, key)
        if value not in allowed and value not in plugin_backends(key):
            names = ", ".join(allowed + plugin_backends(key))
            raise fail(f"config key '{key}' must be one of {names} (got {value!r})")
    embedded = DEFAULT_EMBEDDING_MODELS["embedded"]
    if cfg.embedding_backend == "embedded" and cfg.embedding_model not in ("", embedded):
        raise fail(
            f"config key 'embedding_model' names {cfg.embedding_model!r}, but the embedded "
            f'backend runs only {embedded}: set embedding_backend = "ollama" for another model'
        )
    for key, (least, most) in RANGES.items():
        value = getattr(cfg, key)
        if not (math.isfinite(value) and least <= value <= most):
            raise fail(f"config key '{key}' must be from {least} to {most} (got {value!r})")
    if cfg.chunk_overlap >= cfg.chunk_size:
        raise fail(f"config key 'chunk_overlap' must be between 0 and chunk_size - 1 "
                   f"(got {cfg.chunk_overlap} with chunk_size {cfg.chunk_size})")
    if cfg.window_overlap >= cfg.window_size:
        raise fail(f"config key 'window_overlap' must be below window_size (got "
                   f"{cfg.window_overlap} with window_size {cfg.window_size})")
    for f in fields(Config):
        value = getattr(cfg, f.name)
        if f.name not in _INTERNAL and isinstance(value, str) and _CONTROL.search(value):
            shown = redacted(value) if is_url(value) else value
            raise fail(f"config key '{f.name}' contains a control character (got {shown!r})")
    _check_paths_and_names(cfg, fail)
    return cfg


def _check_paths_and_names(cfg: Config, fail: Any) -> None:
    if not cfg.db_path.strip():
        raise fail("config key 'db_path' is empty; name the library file, e.g. \"book.db\"")
    if is_url(cfg.db_path):
        if not is_server_url(cfg.db_path):
            raise fail(f"config key 'db_path' is a URL ({redacted(cfg.db_path.strip())}); "
                       "a library is a file or a postgresql:// URL")
    elif cfg.database_path.is_dir():
        raise fail(f"config key 'db_path' names a folder ({cfg.database_path}); name the "
                   "library file in it, e.g. \"book.db\"")
    if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s]*)?", cfg.ollama_host):
        raise fail("config key 'ollama_host' must be an http:// or https:// address, e.g. "
                   f"\"http://localhost:11434\" (got {cfg.ollama_host!r})")
    if not re.fullmatch(r"[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*", cfg.ocr_language):
        raise fail("config key 'ocr_language' must be Tesseract language codes joined by '+', "
                   f"e.g. 'eng' or 'eng+deu' (got {cfg.ocr_language!r})")
    if not re.fullmatch(r"\s*[A-Za-z0-9]+\s*(,\s*[A-Za-z0-9]+\s*)*", cfg.source_formats):
        raise fail("config key 'source_formats' must be format names joined by commas, e.g. "
                   f"\"epub,pdf,docx\" (got {cfg.source_formats!r})")


# What TOML calls a value of each type the config's keys take ("must be a int" before).
_TOML_KINDS: dict[type, str] = {int: "an integer", float: "a number", str: "a string",
                                bool: "true or false"}


def _toml_kind(value: object) -> str:
    """TOML's name for a parsed value's kind: ``boolean`` before ``integer`` (a bool is an
    int in Python)."""
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"),
                       (list, "array"), (dict, "table")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def config_from_mapping(data: dict[str, Any], *, source: str | None = None,
                        base_dir: str = ".") -> Config:
    """Build a validated Config from parsed TOML; errors name the offending key."""
    types = _key_types()
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in types:
            raise ConfigError(f"unknown config key '{key}'" + (f" in {source}" if source else ""))
        want = types[key]
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                value = float(value)
            except OverflowError:  # an integer past 1e308: out of every range
                least, most = RANGES[key]
                raise ConfigError(f"config key '{key}' must be from {least} to {most} (got "
                                  f"an integer of {len(str(abs(value)))} digits)"
                                  + (f" in {source}" if source else "")) from None
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ConfigError(
                f"config key '{key}' must be {_TOML_KINDS[want]} (got {_toml_kind(value)} "
                f"{value!r})" + (f" in {source}" if source else "")
            )
        values[key] = value
    return _validated(Config(source=source, base_dir=base_dir, **values))


def load_config(config_path: str | os.PathLike[str] | None = None, *,
                library: str | os.PathLike[str] | None = None) -> Config:
    """Find (``locate.locate``), read and validate the configuration of a library."""
    return read_config(locate(config_path, library))


def read_config(where: Location) -> Config:
    """The validated Config of a located library (defaults when it has no config file)."""
    path = where.config_file
    if path is None:
        config = Config(base_dir=str(where.folder), origin=where.origin)
        if where.file is not None:
            return replace(config, db_path=str(where.file), library_file=True)
        return replace(config, db_path=where.url) if where.url else config
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except ValueError as exc:  # Python reads no integer of more than 4,300 digits
        raise ConfigError(f"config file {path}: an integer has more than 4,300 digits") from exc
    except RecursionError as exc:  # arrays in arrays thousands deep
        raise ConfigError(f"config file {path} is not valid TOML (nested too deeply)") from exc
    table = data.get(MARKER_TABLE)
    if isinstance(table, dict):
        data = table
    if where.url or where.file:
        data = {**data, "db_path": where.url or str(where.file)}
    config = config_from_mapping(data, source=str(path), base_dir=str(where.folder))
    return replace(config, origin=where.origin, library_file=where.file is not None)


def config_keys() -> list[str]:
    """Every TOML key, for documentation checks."""
    return [f.name for f in fields(Config) if f.name not in _INTERNAL]
