"""The retrieval bench rebuilds a cached dev library, and re-embeds a cached vector, whenever
the code that made it changes (the fingerprint ``bench/retrieval_eval.py`` takes from
``bench/eval_sets.py``, ``bench/embed_cache.py``'s ``VECTOR_CODE``): otherwise a change to
chunking, the schema or the embedding arithmetic would be measured on libraries and vectors
the old code built. Code moved into a module of its own must stay covered."""

from __future__ import annotations

import ast
import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from grimoire_beholder.config import config_from_mapping

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "grimoire_beholder"
MODELS = SOURCE / "models"
# Imported by the embedder but not code that computes a vector: the backend factory, types.
NOT_VECTOR_CODE = {"__init__.py", "protocols.py"}


@pytest.fixture(scope="module")
def retrieval_eval() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("retrieval_eval")
    finally:
        sys.path.remove(str(ROOT / "bench"))


def _models_imported(path: Path) -> set[str]:
    """File names of the ``grimoire_beholder.models`` modules ``path`` imports, anywhere in
    it (the embedder imports onnxruntime's side inside its methods)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "grimoire_beholder.models":
                found |= {f"{alias.name}.py" for alias in node.names}
            elif node.module.startswith("grimoire_beholder.models."):
                found.add(node.module.rsplit(".", 1)[1] + ".py")
    return {name for name in found if (MODELS / name).is_file()}


def test_every_module_the_embedded_model_runs_is_vector_code(
        retrieval_eval: ModuleType) -> None:
    from embed_cache import VECTOR_CODE

    seen, todo = set(), ["embedded.py"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_models_imported(MODELS / name))
    assert seen - NOT_VECTOR_CODE - set(VECTOR_CODE) == set()


@pytest.mark.parametrize("part", ["store/migrations.py", "models/embed_batches.py",
                                  "models/minilm_files.py", "structure/piece_limit.py"])
def test_a_change_to_ingest_side_code_gives_a_new_library(
        retrieval_eval: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        part: str) -> None:
    copy = tmp_path / "grimoire_beholder"
    shutil.copytree(SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    # SOURCE as the module that defines fingerprint reads it (bench/eval_sets.py)
    monkeypatch.setattr(sys.modules[retrieval_eval.fingerprint.__module__], "SOURCE", copy)
    config = config_from_mapping({"embedding_backend": "embedded", "llm_backend": "none"},
                                 base_dir=str(tmp_path))
    before = retrieval_eval.fingerprint(config, ())
    with (copy / part).open("a", encoding="utf-8") as edited:
        edited.write("\n# changed\n")
    assert retrieval_eval.fingerprint(config, ()) != before
