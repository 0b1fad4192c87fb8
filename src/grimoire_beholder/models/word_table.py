"""Rows of a BERT word-embedding table, read straight from ``model.safetensors``.

The query graph (``bert_onnx.build_bert_graph(word_input=True)``) holds no word table: a
query's few rows are read here instead, as float32, the values the full graph's ``Gather`` +
``Cast`` give. The file is opened once with ``safetensors.safe_open`` (which checks its
header and maps the file) and a row is a slice of that map.

The map stays on the file that was opened. :meth:`WordTable.changed` tells the caller when the
file at the path is no longer that one (replaced, rewritten, deleted), so that it loads the
table again with the graph that goes with it. A file truncated in place between that check
and a read ends the process (a bus error); ARCHITECTURE.md, "A search loads the query graph".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TABLE = "embeddings.word_embeddings.weight"
_DTYPES = ("F16", "F32")


def _identity(path: Path) -> tuple[int, int, int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


class WordTable:
    """A safetensors file's word table, opened for :meth:`rows`.

    :meth:`open` raises ``ValueError`` (not a safetensors file or a damaged one, no
    float16/float32 ``[vocab, hidden]`` table, a file that changed while it was opened) or
    ``OSError``; :meth:`rows` raises ``ValueError`` for a token id outside the table.
    """

    def __init__(self, path: Path, handle: Any, table: Any,
                 identity: tuple[int, int, int, int]) -> None:
        self.path = path
        self.vocab, self.hidden = (int(n) for n in table.get_shape())
        self._handle, self._table, self._identity = handle, table, identity  # the map lives on

    @classmethod
    def open(cls, path: Path) -> WordTable:
        """Open the table in the safetensors file at ``path`` (named as Hugging Face's
        ``BertModel`` writes it, optionally prefixed with ``bert.``)."""
        from safetensors import SafetensorError, safe_open

        before = _identity(path)
        try:
            handle = safe_open(str(path), framework="numpy")
            names = set(handle.keys())
            name = TABLE if TABLE in names else "bert." + TABLE
            table = handle.get_slice(name) if name in names else None
        except SafetensorError as exc:
            raise ValueError(f"{path.name} is not a whole safetensors file ({exc})") from exc
        if table is None or table.get_dtype() not in _DTYPES or len(table.get_shape()) != 2:
            raise ValueError(f"{path.name} has no float16/float32 {TABLE}")
        if _identity(path) != before:
            raise ValueError(f"{path.name} changed while it was being opened")
        return cls(path, handle, table, before)

    def changed(self) -> bool:
        """Whether the file at :attr:`path` is no longer the one opened (replaced, rewritten,
        deleted): the caller must open it again, with the graph that goes with it."""
        try:
            return _identity(self.path) != self._identity
        except OSError:
            return True

    def rows(self, ids: Sequence[int]) -> np.ndarray:
        """The rows of ``ids`` in order, float32 ``[len(ids), hidden]``."""
        out = np.empty((len(ids), self.hidden), np.float32)
        for row, token in enumerate(ids):
            if not 0 <= token < self.vocab:
                raise ValueError(f"token id {token} is outside the word table")
            out[row] = self._table[token:token + 1][0]
        return out
