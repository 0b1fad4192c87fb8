"""Realistic vectors for the scale bench: drawn around real MiniLM embeddings, with clusters
and near-copies, so index choices are measured on data shaped like a real library.

Uniform random 384-d vectors (``scale_build``'s default) have no structure: every vector is
nearly orthogonal to every other, which hides what real libraries are full of — topics
(many chunks near each other), and near-copies (the same book as PDF and EPUB, two
editions, licence boilerplate, running headers) whose cosines differ in the fourth decimal.
``--vectors realistic`` builds libraries from:

* **bases**: the real embedded-MiniLM vectors of the SQuAD dev-set paragraphs
  (``../shared/bench/squad-dev``), embedded once and cached in ``bench/out/`` (never in the
  repository);
* **books**: each 1,000-chunk book takes its topic from one article — a run of its
  paragraphs — and every chunk is one of those paragraphs moved by noise drawn from the
  bases' own covariance (so vectors stay in the subspace real embeddings occupy), to a
  cosine of ~0.8 with its paragraph;
* **near-copies**: ``NEAR_COPY_SHARE`` of the chunks copy an earlier chunk (of any book) at
  a cosine of ~0.999 — another edition or format — and ``BOILERPLATE_SHARE`` are copies of
  one of a few licence-like paragraphs at the same closeness;
* **queries**: the real MiniLM embeddings of the dev-set questions (SQuAD, books-dev,
  markdown-dev), whose answers' paragraphs are among the bases.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
OUT = Path(os.environ.get("GRIMOIRE_BEHOLDER_SCALE_DIR")
           or Path(__file__).resolve().parent / "out")
NEAR_COPY_SHARE = 0.15
BOILERPLATE_SHARE = 0.02
TOPIC_COSINE = 0.8  # a chunk vs the paragraph it is drawn around (typical)
COPY_COSINE = 0.999  # a near-copy vs its original (typical)
_BOILERPLATES = 5


def _paragraphs() -> tuple[list[str], list[int]]:
    """Every SQuAD dev paragraph's text and its article's index."""
    texts, docs = [], []
    for doc, path in enumerate(sorted((SHARED / "squad-dev" / "corpus").glob("*.md"))):
        parts = re.split(r"^## .*$", path.read_text(encoding="utf-8"), flags=re.M)[1:]
        for part in parts:
            if part.strip():
                texts.append(part.strip())
                docs.append(doc)
    return texts, docs


def _questions() -> list[str]:
    files = [SHARED / "squad-dev" / "questions.jsonl", SHARED / "books-dev" / "questions.jsonl",
             *sorted((SHARED / "markdown-dev" / "questions").glob("*.jsonl"))]
    out = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["question"])
    return out


def bases() -> dict[str, np.ndarray]:
    """``passages`` (float32, unit), ``docs`` (article per passage), ``questions``: real
    MiniLM embeddings, computed once (a few minutes) and cached."""
    path = OUT / "realistic-bases.npz"
    if path.is_file():
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    if not SHARED.is_dir():
        raise SystemExit(f"--vectors realistic needs the dev set at {SHARED}")
    from grimoire_beholder.models.embedded import EmbeddedEmbedder

    model = EmbeddedEmbedder()
    texts, docs = _paragraphs()
    questions = _questions()
    print(f"embedding {len(texts)} paragraphs and {len(questions)} questions once "
          f"(cached in {path})", file=sys.stderr, flush=True)
    vectors = np.concatenate([model.embed_documents(texts[i:i + 64])
                              for i in range(0, len(texts), 64)])
    asked = np.stack([model.embed_query(q) for q in questions])
    OUT.mkdir(parents=True, exist_ok=True)
    data = {"passages": vectors.astype(np.float32), "docs": np.asarray(docs, np.int32),
            "questions": asked.astype(np.float32)}
    np.savez(path.with_suffix(".partial.npz"), **data)
    os.replace(path.with_suffix(".partial.npz"), path)
    return data


def _unit(matrix: np.ndarray) -> np.ndarray:
    return np.asarray(matrix / np.linalg.norm(matrix, axis=1, keepdims=True), dtype=np.float32)


class RealisticVectors:
    """Book after book of realistic vectors (see the module docstring), deterministic."""

    def __init__(self, seed: int, start: int = 0) -> None:
        """``start``: the number of books already made (a resumed build). The books' stream
        is seeded by ``(seed, start)``, so a resumed build never replays the vectors of the
        books it already holds (it did once: a library resumed twice held every vector two
        to four times, whose exact ties made the bench's recall drop)."""
        data = bases()
        self.passages = data["passages"]
        self.docs = data["docs"]
        self.rng = np.random.default_rng(seed)
        centred = self.passages - self.passages.mean(axis=0)
        # noise ~ N(0, covariance of the bases): z @ factor, factor = V S / sqrt(n)
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        self.factor = (vt.T * s).T / np.sqrt(len(centred))
        self.topic_scale = self._scale_for(TOPIC_COSINE)
        self.copy_scale = self._scale_for(COPY_COSINE)
        self.boilerplate = _unit(self.passages[self.rng.choice(len(self.passages),
                                                               _BOILERPLATES)]
                                 + self._noise(_BOILERPLATES, self.topic_scale))
        if start:
            self.rng = np.random.default_rng((seed, start))
        self.made: list[np.ndarray] = []  # earlier books, for near-copies
        self.kept = 0

    def _noise(self, count: int, scale: float) -> np.ndarray:
        return np.asarray(self.rng.standard_normal((count, self.factor.shape[0]))
                          @ self.factor * scale, dtype=np.float32)

    def _scale_for(self, cosine: float) -> float:
        """The noise scale that moves a unit base to ``cosine`` with itself, typically."""
        sample = self.passages[:256]
        lo, hi = 0.0, 64.0
        for _ in range(40):
            mid = (lo + hi) / 2
            z = np.random.default_rng(0).standard_normal((len(sample), self.factor.shape[0]))
            moved = _unit(sample + z @ self.factor * mid)
            if float(np.median(np.einsum("ij,ij->i", moved, sample))) > cosine:
                lo = mid
            else:
                hi = mid
        return lo

    def book(self, size: int) -> np.ndarray:
        """The next book's ``size`` unit vectors."""
        doc = int(self.rng.integers(self.docs.max() + 1))
        members = np.flatnonzero(self.docs == doc)
        around = self.passages[self.rng.choice(members, size)]
        out = _unit(around + self._noise(size, self.topic_scale))
        kinds = self.rng.random(size)
        copies = np.flatnonzero(kinds < NEAR_COPY_SHARE)
        if self.made and copies.size:
            pool = np.concatenate(self.made[-50:])  # recent books (bounded memory)
            src = pool[self.rng.integers(len(pool), size=copies.size)]
            out[copies] = _unit(src + self._noise(copies.size, self.copy_scale))
        plates = np.flatnonzero(kinds > 1 - BOILERPLATE_SHARE)
        if plates.size:
            src = self.boilerplate[self.rng.integers(_BOILERPLATES, size=plates.size)]
            out[plates] = _unit(src + self._noise(plates.size, self.copy_scale))
        self.made.append(out)
        if len(self.made) > 50:
            self.made.pop(0)
        return out


def queries() -> np.ndarray:
    """The dev-set questions' real MiniLM embeddings (unit)."""
    return bases()["questions"]


if __name__ == "__main__":
    print({k: v.shape for k, v in bases().items()})
