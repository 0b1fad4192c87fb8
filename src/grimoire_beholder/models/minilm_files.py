"""The embedded model's files: where ``grimoire-beholder-minilm`` keeps them, whether they are
all there, and the WordPiece tokenizer with the window size they define.

Nothing here imports onnxruntime, safetensors or numpy: locating the folder and reading
``tokenizer.json`` is all that sizing a chunk to the window needs
(``EmbeddedEmbedder.count_pieces``). Every failure is a :class:`ModelError` that says how to
repair the install; nothing is ever fetched from a model hub.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models import model_folder
from grimoire_beholder.models.wordpiece import WordPieceTokenizer

MODEL_PACKAGE = "grimoire_beholder_minilm"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
DEFAULT_MAX_SEQ_LENGTH = 256
_REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")
_INSTALL_HINT = (
    "reinstall grimoire-beholder (`uv tool install --reinstall …`, or `uv sync` in a checkout), "
    'or set embedding_backend = "ollama"'
)


def find_model_dir() -> Path:
    """The ``model`` folder of ``grimoire-beholder-minilm``, located without importing it."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "model"
        if candidate.is_dir():
            return candidate
    raise ModelError(
        f"the embedded model {MODEL_NAME} is not installed (Python package "
        f"grimoire-beholder-minilm not found); {_INSTALL_HINT}"
    )


def checked_model_dir(model_dir: Path | None) -> Path:
    """``model_dir`` (the installed model's folder when None), once it holds every file the
    model needs and a pipeline giving ``DIMENSION``-d vectors; else ModelError with the fix."""
    model_dir = model_dir or find_model_dir()
    missing = [name for name in _REQUIRED_FILES if not (model_dir / name).is_file()]
    if missing:
        raise ModelError(
            f"the embedded model in {model_dir} is incomplete (missing "
            f"{', '.join(missing)}); {_INSTALL_HINT}"
        )
    model_folder.check_pipeline(model_dir, DIMENSION)
    return model_dir


def read_tokenizer(model_dir: Path) -> tuple[WordPieceTokenizer, int, int, int]:
    """The tokenizer of ``model_dir``, its ``[CLS]`` and ``[SEP]`` ids and its window (tokens
    per window, ``[CLS]``/``[SEP]`` included); ModelError for a corrupt or foreign one."""
    try:
        # Windows are cut here: the tokenizer neither truncates nor pads.
        tokenizer = WordPieceTokenizer.from_file(model_dir / "tokenizer.json")
    except Exception as exc:  # corrupt tokenizer.json: json, KeyError, ValueError
        raise ModelError(f"cannot load the embedded model from {model_dir}: {exc}") from exc
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise ModelError(f"the tokenizer in {model_dir} has no [CLS]/[SEP] tokens")
    window = model_folder.window(model_dir, DEFAULT_MAX_SEQ_LENGTH)
    return tokenizer, cls_id, sep_id, window
