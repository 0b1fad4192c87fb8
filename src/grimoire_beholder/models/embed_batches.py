"""From token sequences to onnxruntime calls and back to vectors, for the embedded model.

The windows a long text is cut into (:func:`window_spans`), the batches of sequences each
call runs (:func:`plan_batches`), and what becomes of the calls' token vectors: mean pooling
over the attention mask and L2 normalisation, as sentence-transformers does. Pure arithmetic
on lists and numpy arrays: no model, no tokenizer.
"""

from __future__ import annotations

import numpy as np


def window_spans(n_tokens: int, width: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` token spans of the fewest windows of at most ``width`` tokens that cover
    ``n_tokens``, each sharing at least ``overlap`` tokens with the next, all of nearly equal
    length (so no window is a short tail and no token is embedded more often than needed)."""
    if n_tokens <= width:
        return [(0, n_tokens)]
    overlap = min(overlap, width // 2)
    count = -(-(n_tokens - overlap) // (width - overlap))  # ceil
    size = -(-(n_tokens + (count - 1) * overlap) // count)
    last = n_tokens - size
    return [(start, start + size)
            for start in (round(i * last / (count - 1)) for i in range(count))]


def plan_batches(order: list[int], sequences: list[list[int]], *, batch_size: int,
                 max_batch_tokens: int, one_each: bool) -> list[list[int]]:
    """Split ``order`` (ascending length) into runs within both per-call limits,
    ``batch_size`` sequences and ``max_batch_tokens`` padded tokens (one sequence always
    goes through); with ``one_each`` (``int8``), one sequence per call: the int8 GEMMs
    quantize their input with one scale per call, so a batch would make each text's vector
    depend on the texts (and the padding) beside it."""
    if one_each:
        return [[i] for i in order]
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Ascending order: sequence i is the longest so far, so it sets the padded width.
        fits = (len(current) + 1) * len(sequences[i]) <= max_batch_tokens
        if current and (len(current) >= batch_size or not fits):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors where ``mask`` is 1 (sentence-transformers' mean pooling)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled: np.ndarray = summed / counts
    return pooled


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (a zero row stays zero, as torch's normalize leaves it)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalised: np.ndarray = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised
