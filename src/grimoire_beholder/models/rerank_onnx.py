"""A cross-encoder reranker on onnxruntime: scores (question, passage) pairs jointly.

Why a cross-encoder: the embedding model encodes the question and the passage apart, so it
cannot see which passage word answers which question word; a cross-encoder reads both in
one sequence and is markedly better at ordering the few dozen candidates fusion returns.

What the user provides (``reranker_path``): a directory with ``model.onnx`` and a BERT
uncased WordPiece ``tokenizer.json`` (read by :mod:`.wordpiece`), e.g.
``cross-encoder/ms-marco-MiniLM-L-6-v2`` exported once with ``optimum-cli export onnx``.
Nothing is downloaded here. The graph must take ``input_ids`` and ``attention_mask`` (int64,
``[batch, seq]``) and, if it declares it, ``token_type_ids``;
its first output is the logits, ``[batch, 1]`` (a relevance logit) or ``[batch, 2]`` (two
classes: the score is ``logit[1] - logit[0]``).

Pairs are built here, not by the tokenizer's post-processor (exports differ in whether they
keep one): ``[CLS] question [SEP] passage [SEP]`` with token types 0 for the first segment
and 1 for the second, cut to the model's window by trimming the passage (the question is
capped at half the window). onnxruntime and the tokenizer load on first use.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.lazy import LoadsOnce
from grimoire_beholder.models.wordpiece import WordPieceTokenizer
from grimoire_beholder.text import without_lone_surrogates

REQUIRED_FILES = ("model.onnx", "tokenizer.json")
DEFAULT_MAX_LENGTH = 512
DEFAULT_BATCH_SIZE = 16
_HINT = ("set reranker_path to a folder holding model.onnx and tokenizer.json of a "
         "cross-encoder (e.g. ms-marco-MiniLM-L-6-v2 exported with `optimum-cli export onnx "
         "--model cross-encoder/ms-marco-MiniLM-L-6-v2 DIR`), or set reranker = \"none\"")


class OnnxReranker(LoadsOnce):
    """Relevance scores from a local ONNX cross-encoder; higher is more relevant."""

    def __init__(self, model_dir: str | Path, *, batch_size: int = DEFAULT_BATCH_SIZE,
                 max_length: int | None = None, threads: int | None = None) -> None:
        if not str(model_dir).strip():
            raise ModelError(f"reranker = \"onnx\" needs reranker_path; {_HINT}")
        self._dir = Path(model_dir).expanduser()
        self._batch_size = max(1, batch_size)
        self._max_length = max_length
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: set[str] = set()
        self._cls = self._sep = self._pad = 0
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"onnx:{self._dir.name}"

    def check(self) -> None:
        """Load the model and score one pair, raising ModelError with a fix on failure."""
        self.score("check", ["check"])

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in the passages' order."""
        if not passages:
            return []
        self._ensure_loaded()
        pairs = [self._pair(query, p) for p in passages]
        out = np.empty(len(pairs), dtype=np.float64)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]))
        for start in range(0, len(order), self._batch_size):
            batch = order[start:start + self._batch_size]
            out[batch] = self._run([pairs[i] for i in batch])
        if not np.isfinite(out).all():
            raise ModelError("the reranker produced non-finite scores")
        return [float(x) for x in out]

    # -- internals ---------------------------------------------------------------------------

    def _pair(self, query: str, passage: str) -> tuple[list[int], list[int]]:
        """(token ids, token types) of ``[CLS] q [SEP] p [SEP]`` within the window."""
        limit = self._max_length or DEFAULT_MAX_LENGTH
        pair = [without_lone_surrogates(query), without_lone_surrogates(passage)]
        q_ids, p_ids = (self._tokenizer.encode(text) for text in pair)
        q_ids = q_ids[: max(1, limit // 2 - 2)]
        p_ids = p_ids[: max(0, limit - len(q_ids) - 3)]
        ids = [self._cls, *q_ids, self._sep, *p_ids, self._sep]
        types = [0] * (len(q_ids) + 2) + [1] * (len(p_ids) + 1)
        return ids, types

    def _run(self, pairs: list[tuple[list[int], list[int]]]) -> np.ndarray:
        width = max(len(ids) for ids, _ in pairs)
        ids = np.full((len(pairs), width), self._pad, dtype=np.int64)
        types = np.zeros((len(pairs), width), dtype=np.int64)
        mask = np.zeros((len(pairs), width), dtype=np.int64)
        for row, (pair_ids, pair_types) in enumerate(pairs):
            ids[row, : len(pair_ids)] = pair_ids
            types[row, : len(pair_types)] = pair_types
            mask[row, : len(pair_ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            logits = np.asarray(self._session.run(
                None, {k: v for k, v in feed.items() if k in self._inputs})[0], np.float64)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(f"the reranker in {self._dir} failed to run: {exc}") from exc
        logits = logits.reshape(len(pairs), -1)
        if logits.shape[1] == 2:
            return logits[:, 1] - logits[:, 0]
        return logits[:, 0]

    def _load(self) -> None:
        if not self._dir.is_dir():
            raise ModelError(f"reranker_path {self._dir} is not a folder; {_HINT}")
        missing = [name for name in REQUIRED_FILES if not (self._dir / name).is_file()]
        if missing:
            raise ModelError(f"the reranker folder {self._dir} lacks {', '.join(missing)}; "
                             f"{_HINT}")
        # Looked up, not imported: cpu_session imports it once telemetry is switched off.
        if importlib.util.find_spec("onnxruntime") is None:
            raise ModelError("the onnx reranker needs onnxruntime; run `uv sync`")
        from grimoire_beholder.models.bert_onnx import cpu_session

        try:
            tokenizer = WordPieceTokenizer.from_file(self._dir / "tokenizer.json")
            session = cpu_session(str(self._dir / "model.onnx"), self._threads)
        except Exception as exc:  # corrupt files: json, tokenizer and onnxruntime errors
            raise ModelError(f"cannot load the reranker from {self._dir}: {exc}") from exc
        inputs = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ModelError(f"{self._dir / 'model.onnx'} is not a BERT-style cross-encoder "
                             f"(inputs {sorted(inputs)}, want input_ids and attention_mask)")
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise ModelError(f"the tokenizer in {self._dir} has no [CLS]/[SEP] tokens")
        pad = tokenizer.token_to_id("[PAD]")
        if self._max_length is None:
            self._max_length = _window(self._dir)
        self._tokenizer, self._inputs = tokenizer, inputs
        self._cls, self._sep, self._pad = cls, sep, 0 if pad is None else pad
        self._session = session


def _window(model_dir: Path) -> int:
    """The model's window: ``max_position_embeddings`` from config.json, at most 512."""
    path = model_dir / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        config = {}
    return min(DEFAULT_MAX_LENGTH, int(config.get("max_position_embeddings",
                                                  DEFAULT_MAX_LENGTH)))
