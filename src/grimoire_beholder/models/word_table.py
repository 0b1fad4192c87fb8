"""Rows of a BERT word-embedding table, read straight from ``model.safetensors``.

The query graph (``bert_onnx.build_bert_graph(word_input=True)``) holds no word table: a
query's few rows are read here instead — the file's JSON header once, then one short read
per token — as float32, the values the full graph's ``Gather`` + ``Cast`` give. Only ``json``,
``struct`` and numpy are used (not the ``safetensors`` package, which reads the whole file).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TABLE = "embeddings.word_embeddings.weight"
_DTYPES: dict[str, np.dtype[Any]] = {"F16": np.dtype("<f2"), "F32": np.dtype("<f4")}
_MAX_HEADER = 100 << 20  # safetensors' own bound on its JSON header


class WordTable:
    """Where a safetensors file keeps its word table; :meth:`rows` reads rows of it.

    Raises ``ValueError`` (not a safetensors file, no float16/float32 ``[vocab, hidden]``
    table, a token id outside it, a file shorter than its header) or ``OSError``.
    """

    def __init__(self, path: Path, offset: int, vocab: int, hidden: int,
                 dtype: np.dtype[Any]) -> None:
        self.path, self.vocab, self.hidden = path, vocab, hidden
        self._offset, self._dtype = offset, dtype

    @classmethod
    def open(cls, path: Path) -> WordTable:
        """Read the header of the safetensors file at ``path`` (names as Hugging Face's
        ``BertModel`` writes them, optionally prefixed with ``bert.``)."""
        with path.open("rb") as file:
            head = file.read(8)
            if len(head) != 8:
                raise ValueError(f"{path} is not a safetensors file")
            (size,) = struct.unpack("<Q", head)
            if size > _MAX_HEADER:
                raise ValueError(f"{path} is not a safetensors file (header too large)")
            entries: dict[str, Any] = json.loads(file.read(size))
        entry = entries.get(TABLE) or entries.get("bert." + TABLE)
        if not isinstance(entry, dict) or entry.get("dtype") not in _DTYPES \
                or len(entry.get("shape", ())) != 2:
            raise ValueError(f"{path} has no float16/float32 {TABLE}")
        vocab, hidden = (int(n) for n in entry["shape"])
        dtype = _DTYPES[entry["dtype"]]
        start, end = entry["data_offsets"]
        if end - start != vocab * hidden * dtype.itemsize:
            raise ValueError(f"{path}: {TABLE}'s offsets do not match its shape")
        return cls(path, 8 + size + int(start), vocab, hidden, dtype)

    def rows(self, ids: Sequence[int]) -> np.ndarray:
        """The rows of ``ids`` in order, float32 ``[len(ids), hidden]``."""
        width = self.hidden * self._dtype.itemsize
        out = np.empty((len(ids), self.hidden), self._dtype)
        with self.path.open("rb") as file:
            for row, token in enumerate(ids):
                if not 0 <= token < self.vocab:
                    raise ValueError(f"token id {token} is outside the word table")
                file.seek(self._offset + token * width)
                data = file.read(width)
                if len(data) != width:
                    raise ValueError(f"{self.path} is shorter than its header says")
                out[row] = np.frombuffer(data, self._dtype)
        return out.astype(np.float32)
