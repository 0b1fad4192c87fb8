"""What the embedded model's folder says about its sentence-transformers pipeline, checked.

:mod:`.embedded` reimplements the pooling, the normalisation and the window, so a folder
whose settings say otherwise (CLS pooling, no Normalize module, another width, a window the
model cannot run) would give wrong vectors without an error. Each function raises
``ModelError`` naming the file, also for a file that is not JSON of the expected shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grimoire_beholder.errors import ModelError

POSITIONS = 512
"""Rows of the model's position table (``config.json``'s ``max_position_embeddings``)."""


def read_json(path: Path, kind: type = dict) -> Any:
    """The JSON value in ``path``, which must be a ``kind`` (a dict or a list)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    if not isinstance(value, kind):
        raise ModelError(f"{path} is not a JSON {kind.__name__}; another model's?")
    return value


def window(model_dir: Path, default: int) -> int:
    """The window in pieces with ``[CLS]``/``[SEP]`` (``sentence_bert_config.json``'s
    ``max_seq_length``, else ``default``): 3 up to :data:`POSITIONS`."""
    path = model_dir / "sentence_bert_config.json"
    if not path.is_file():
        return default
    value = read_json(path).get("max_seq_length", default)
    if type(value) is not int or not 3 <= value <= POSITIONS:
        raise ModelError(f"{path}: max_seq_length {value!r} is not 3 to {POSITIONS}")
    return value


def check_pipeline(model_dir: Path, dimension: int) -> None:
    """Refuse a folder whose pipeline is not mean pooling of ``dimension``-wide vectors
    followed by a Normalize module."""
    pooling = model_dir / "1_Pooling" / "config.json"
    if pooling.is_file():
        config = read_json(pooling)
        if not config.get("pooling_mode_mean_tokens") or config.get(
            "word_embedding_dimension", dimension
        ) != dimension:
            raise ModelError(f"{pooling} is not {dimension}-d mean pooling; another model's?")
    modules = model_dir / "modules.json"
    if modules.is_file():
        types = [m.get("type") for m in read_json(modules, list) if isinstance(m, dict)]
        if not any(isinstance(t, str) and t.endswith("Normalize") for t in types):
            raise ModelError(f"{modules} has no Normalize module; another model's?")
