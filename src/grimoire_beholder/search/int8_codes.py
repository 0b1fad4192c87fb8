"""The int8 codes of a segment's unit vectors, and the proven bound of their rounding.

A row's code is ``rint(vector · scale)`` with one scale per segment (its largest finite
component maps to 127); ``max_residual`` bounds ``||vector - code / scale||`` over the rows,
which is what makes the int8 shortlist of ``search/persisted.py`` provably exact.
"""

from __future__ import annotations

import math

import numpy as np


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, float]:
    """int8 codes of unit vectors and the scale used (largest finite component → 127; a
    component that is not finite is coded 0, and its row is never a hit, see persisted)."""
    peak = 0.0
    for start in range(0, len(vectors), 65536):  # block by block: no full-size temporary
        part = np.abs(vectors[start:start + 65536])
        part = part[np.isfinite(part)]
        peak = max(peak, float(part.max()) if part.size else 0.0)
    scale = 127.0 / peak if peak > 0 else 1.0
    codes = np.empty(vectors.shape, dtype=np.int8)
    for start in range(0, len(vectors), 65536):  # no full-size float temporary
        part = np.nan_to_num(vectors[start:start + 65536] * scale, nan=0.0, posinf=0.0,
                             neginf=0.0)
        codes[start:start + 65536] = np.clip(np.rint(part), -127, 127)
    return codes, scale


def max_residual(vectors: np.ndarray, codes: np.ndarray, scale: float) -> float:
    """The largest ``||vector - codes / scale||`` over the rows, rounded up (computed in
    float32, whose rounding is far below the relative 1e-4 and absolute 1e-7 added)."""
    worst = 0.0
    step = np.float32(1.0 / scale)
    for start in range(0, len(vectors), 65536):
        part = np.asarray(codes[start:start + 65536], dtype=np.float32) * step
        np.subtract(vectors[start:start + 65536], part, out=part)
        if part.size:
            worst = max(worst, float(np.einsum("ij,ij->i", part, part).max()))
    return math.sqrt(worst) * (1 + 1e-4) + 1e-7
