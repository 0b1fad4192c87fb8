"""The offline all-MiniLM-L6-v2 embedder: fidelity to sentence-transformers and its policies.

The reference vectors in ``data/minilm_reference.json`` were computed once with
sentence-transformers + torch (see the file's ``how`` field); torch is never installed in
the project, so these tests compare against the committed numbers.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.embed_batches import window_spans
from grimoire_beholder.models.embedded import EmbeddedEmbedder
from grimoire_beholder.models.minilm_files import find_model_dir
from grimoire_beholder.models.protocols import Embedder

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"
PROSE = (
    "The library kept its rarest books in a cold room below the reading hall, where the "
    "archivist checked the humidity twice a day and wrote the numbers in a ledger. "
)


@pytest.fixture(scope="module")
def embedder() -> EmbeddedEmbedder:
    """One loaded model for the module: loading takes about a second."""
    emb = EmbeddedEmbedder()
    emb.check()
    return emb


@pytest.fixture(scope="module")
def reference() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(REFERENCE.read_text(encoding="utf-8"))["items"]
    return items


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_import_is_cheap_and_does_not_touch_the_model_package() -> None:
    code = (
        "import sys, grimoire_beholder.models.embedded as m; m.EmbeddedEmbedder(); "
        "heavy = {'onnxruntime', 'onnx', 'tokenizers', 'safetensors', 'torch', "
        "'grimoire_beholder_minilm', 'sentence_transformers'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_model_dir_is_found_without_importing_the_package() -> None:
    before = "grimoire_beholder_minilm" in sys.modules
    model_dir = find_model_dir()
    assert (model_dir / "model.safetensors").is_file()
    assert ("grimoire_beholder_minilm" in sys.modules) == before


def test_protocol_and_identity() -> None:
    emb = EmbeddedEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.identity == "embedded:all-MiniLM-L6-v2"
    assert emb.dimension == 384


def test_matches_sentence_transformers(
    embedder: EmbeddedEmbedder, reference: list[dict[str, Any]]
) -> None:
    texts = [item["text"] for item in reference]
    expected = np.array([item["vector"] for item in reference], dtype=np.float32)
    short = [i for i, item in enumerate(reference) if item["n_tokens_untruncated"] <= 256]
    assert len(short) < len(reference), "the fixture must include an over-long text"

    batch = embedder.embed_documents([texts[i] for i in short])
    for row, i in enumerate(short):
        assert _cosine(batch[row], expected[i]) >= 0.999, texts[i]
    # Every text through the query path (which truncates, as sentence-transformers does).
    for i, text in enumerate(texts):
        assert _cosine(embedder.embed_query(text), expected[i]) >= 0.999, text


def test_shape_dtype_and_unit_length(embedder: EmbeddedEmbedder) -> None:
    vectors = embedder.embed_documents(["one", "two words", PROSE])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("one")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_empty_batch(embedder: EmbeddedEmbedder) -> None:
    assert embedder.embed_documents([]).shape == (0, 384)


def test_order_is_preserved_across_mixed_lengths(embedder: EmbeddedEmbedder) -> None:
    texts = [PROSE * 3, "short", PROSE, "", "a medium length sentence about a lighthouse", "x"]
    alone = np.stack([embedder.embed_documents([text])[0] for text in texts])
    for other in (EmbeddedEmbedder(batch_size=2), EmbeddedEmbedder(max_batch_tokens=10_000),
                  EmbeddedEmbedder(max_batch_tokens=1)):
        together = other.embed_documents(texts)
        for row, text in enumerate(texts):
            assert _cosine(together[row], alone[row]) > 0.9999, text


def test_empty_and_blank_strings_give_unit_vectors(embedder: EmbeddedEmbedder) -> None:
    vectors = embedder.embed_documents(["", "   ", "\n\t"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # All tokenise to [CLS] [SEP]: the same vector.
    assert _cosine(vectors[0], vectors[1]) > 0.9999
    assert _cosine(vectors[0], vectors[2]) > 0.9999


def test_deterministic(embedder: EmbeddedEmbedder) -> None:
    texts = [PROSE, "Deterministic?", PROSE * 4]
    first = embedder.embed_documents(texts)
    second = embedder.embed_documents(texts)
    np.testing.assert_allclose(first, second, atol=1e-6)


def test_long_documents_are_windowed_not_truncated(embedder: EmbeddedEmbedder) -> None:
    head = PROSE * 8  # well over 256 tokens on its own
    tail = " ".join(["Quarterly tax returns for the shipping company were filed late."] * 12)
    text = head + tail
    before = embedder.windowed

    windowed = embedder.embed_documents([text, "short"])
    truncated = embedder.embed_query(text)  # the first window only, like sentence-transformers

    assert embedder.last_windowed == 1
    assert embedder.windowed == before + 1
    assert abs(float(np.linalg.norm(windowed[0])) - 1.0) < 1e-5
    assert _cosine(windowed[0], truncated) < 0.99
    # The tail, invisible to truncation, is visible to the windowed vector.
    about_tail = embedder.embed_query(tail)
    assert _cosine(windowed[0], about_tail) > _cosine(truncated, about_tail) + 0.05

    embedder.embed_documents(["short again"])
    assert embedder.last_windowed == 0
    assert embedder.windowed == before + 1


def test_text_just_under_the_window_is_not_windowed(embedder: EmbeddedEmbedder) -> None:
    words = ["word"] * 254  # "word" is one WordPiece: 254 + [CLS] + [SEP] = 256
    assert embedder.token_count(" ".join(words)) == 256
    embedder.embed_documents([" ".join(words)])
    assert embedder.last_windowed == 0
    embedder.embed_documents([" ".join([*words, "word"])])
    assert embedder.last_windowed == 1


def test_windows_cover_the_text_evenly_with_overlap() -> None:
    assert window_spans(10, 254, 32) == [(0, 10)]
    assert window_spans(254, 254, 32) == [(0, 254)]
    assert window_spans(255, 254, 32) == [(0, 144), (111, 255)]
    for n in (255, 300, 600, 1000, 4321):
        spans = window_spans(n, 254, 32)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(end - start <= 254 for start, end in spans)
        assert all(b[0] <= a[1] - 32 for a, b in itertools.pairwise(spans))
        # Each token is embedded about once: the windows add up to little more than the text.
        assert sum(end - start for start, end in spans) <= n + 32 * (len(spans) - 1) + len(spans)
        lengths = {end - start for start, end in spans}
        assert max(lengths) - min(lengths) <= 1


def test_missing_model_dir_is_a_model_error(tmp_path: Path) -> None:
    emb = EmbeddedEmbedder(model_dir=tmp_path)
    with pytest.raises(ModelError, match="incomplete"):
        emb.check()


@pytest.mark.parametrize("name, text", [
    ("sentence_bert_config.json", '{"max_seq_length": "256"}'),
    ("sentence_bert_config.json", '{"max_seq_length": 2}'),  # no room for a word piece
    ("sentence_bert_config.json", '{"max_seq_length": 100000}'),  # past the position table
    ("sentence_bert_config.json", "[256]"),
    ("modules.json", '{"type": "Normalize"}'),
    ("1_Pooling/config.json", "[]"),
])
def test_a_foreign_or_malformed_setting_file_is_a_model_error(tmp_path: Path, name: str,
                                                              text: str) -> None:
    """Not a traceback (CLI) or an unexplained tool error (MCP), nor a window the model
    cannot run or that cuts every query to nothing: one clear ModelError."""
    source = find_model_dir()
    for part in ("config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json",
                 "1_Pooling/config.json"):
        (tmp_path / part).parent.mkdir(exist_ok=True)
        (tmp_path / part).write_bytes((source / part).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"")  # counting pieces reads no weights
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=name.split("/")[-1].replace(".", r"\.")):
        EmbeddedEmbedder(model_dir=tmp_path).count_pieces("a question")


def test_missing_package_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match="grimoire-beholder-minilm"):
        find_model_dir()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        EmbeddedEmbedder(batch_size=0)
    with pytest.raises(ValueError):
        EmbeddedEmbedder(max_batch_tokens=0)
    with pytest.raises(ValueError):
        EmbeddedEmbedder(threads=0)
    with pytest.raises(ValueError):
        EmbeddedEmbedder(window_overlap=-1)


def test_batches_run_at_once_one_thread_each_with_the_same_vectors() -> None:
    """``threads`` onnxruntime calls run at the same time, each on one thread of its own
    (no hand-over between threads inside a call), and give the vectors of one call after
    another."""
    texts = [PROSE * (1 + i % 3) for i in range(12)]
    one_at_a_time = EmbeddedEmbedder(threads=1, max_batch_tokens=256).embed_documents(texts)
    parallel = EmbeddedEmbedder(threads=2, max_batch_tokens=256)
    parallel.check()
    session = parallel._session
    assert session.get_session_options().intra_op_num_threads == 1
    both_running = threading.Barrier(2, timeout=20)  # broken unless two calls overlap
    callers: set[int] = set()

    class Recorder:
        def run(self, *args: Any) -> Any:
            if threading.get_ident() not in callers:
                callers.add(threading.get_ident())
                both_running.wait()
            return session.run(*args)

    parallel._session = Recorder()
    vectors = parallel.embed_documents(texts)
    assert len(callers) == 2
    np.testing.assert_array_equal(vectors, one_at_a_time)


def test_int8_graph_stays_close_to_float32_and_ranks_alike(embedder: EmbeddedEmbedder) -> None:
    int8 = EmbeddedEmbedder(int8=True)
    texts = [PROSE, "Quarterly tax returns for the shipping company were filed late.",
             PROSE * 3, "a lighthouse beam reaches about twenty nautical miles"]
    exact, quantized = embedder.embed_documents(texts), int8.embed_documents(texts)
    for row in range(len(texts)):
        assert _cosine(exact[row], quantized[row]) > 0.98
    query = int8.embed_query("where were the rare books kept cold?")
    scores = quantized @ query
    assert int(np.argmax(scores)) in (0, 2) and scores[1] < scores[0]


def test_int8_vector_of_a_text_does_not_depend_on_the_texts_beside_it() -> None:
    """int8 (the default config) quantizes a call's activations with one scale: a text's
    vector must still be its own, whether embedded alone, beside longer texts (padding) or
    shorter ones, or as a query."""
    int8 = EmbeddedEmbedder(int8=True)
    short = "Quarterly tax returns for the shipping company were filed late."
    alone = int8.embed_documents([short])[0]
    for company in ([PROSE * 3], [PROSE, "Tea."], ["Tea.", PROSE * 2, PROSE * 9]):
        beside = int8.embed_documents([*company, short])[-1]
        assert _cosine(alone, beside) > 1 - 1e-6, company
    assert _cosine(alone, int8.embed_query(short)) > 1 - 1e-6


def test_one_file_ingested_in_other_batches_gets_the_same_vectors(tmp_path: Path) -> None:
    """The same book ingested with another ``embed_batch_size`` (or resumed, or re-embedded
    by a sync, in other company) stores the same vectors, on the default int8 model."""
    from grimoire_beholder.config import Config
    from grimoire_beholder.library import Library

    book = tmp_path / "archive.md"
    book.write_text("# Archive\n\n" + "\n\n".join(
        f"## Room {n}\n\n" + PROSE * n + f"Room {n} holds ledgers from year {1900 + n}."
        for n in (1, 2, 7, 3, 12, 1)), encoding="utf-8")
    vectors = []
    for batch in (32, 1):
        folder = tmp_path / f"lib{batch}"
        folder.mkdir()
        config = Config(base_dir=str(folder), db_path="book.db", embedding_backend="embedded",
                        llm_backend="none", embed_batch_size=batch, record_stats=False)
        assert config.embed_int8
        with Library.open(config=config) as lib:
            lib.ingest(book)
        with contextlib.closing(sqlite3.connect(folder / "book.db")) as db:
            rows = db.execute("SELECT c.text, e.vector FROM chunks c JOIN embeddings e "
                              "ON e.chunk_id = c.id ORDER BY c.id").fetchall()
        vectors.append(rows)
    assert len(vectors[0]) == len(vectors[1]) > 4
    for (text, a), (same_text, b) in zip(*vectors, strict=True):
        assert text == same_text
        cosine = _cosine(np.frombuffer(a, np.float32), np.frombuffer(b, np.float32))
        assert cosine > 1 - 1e-6, text[:60]


def test_a_context_is_cut_so_the_chunk_fits_one_window(embedder: EmbeddedEmbedder) -> None:
    chunk = PROSE * 5  # about 170 pieces: room for some context, not for all of it
    context = "Book › Chapter › Section. " + "The archivist wrote the numbers down. " * 20
    fitted = embedder.fit_context(context, chunk)
    assert fitted.endswith("\n\n" + chunk)  # the chunk is always whole
    head = fitted[: -len(chunk) - 2]
    assert context.startswith(head) and len(head) > 20  # the context's beginning
    assert embedder.token_count(fitted) <= embedder.max_seq_length
    embedder.embed_documents([fitted])
    assert embedder.last_windowed == 0
    # A short context is kept whole; a chunk too long for one window keeps its context.
    assert embedder.fit_context("Book › Chapter.", PROSE) == f"Book › Chapter.\n\n{PROSE}"
    assert embedder.fit_context(context, PROSE * 12) == f"{context}\n\n{PROSE * 12}"
    assert embedder.fit_context("", PROSE) == PROSE


def test_a_chunk_that_exactly_fills_the_window_drops_its_context(
        embedder: EmbeddedEmbedder) -> None:
    """A chunk of exactly max_seq_length pieces fits one window alone: its context must not
    be kept whole (that made it two or more windows; found by a randomized attack)."""
    words = (PROSE * 12).split()
    chunk = ""
    for count in range(len(words), 0, -1):
        chunk = " ".join(words[:count])
        if embedder.token_count(chunk) <= embedder.max_seq_length:
            break
    while embedder.token_count(chunk) < embedder.max_seq_length:
        chunk += " a"
    assert embedder.token_count(chunk) == embedder.max_seq_length
    fitted = embedder.fit_context("Book › Chapter › Section. The archivist wrote.", chunk)
    assert fitted == chunk
    assert embedder.token_count(fitted) <= embedder.max_seq_length


def test_the_pipeline_fits_contexts_only_for_a_model_with_a_window(
        embedder: EmbeddedEmbedder) -> None:
    from fakes import FakeEmbedder
    from grimoire_beholder.ingest.pipeline import embedding_texts
    from grimoire_beholder.store.records import ChunkWork

    context = "Book › Chapter. " + "Another sentence of the section summary. " * 30
    work = [ChunkWork(1, 1, 1, PROSE * 5, context, "h1"),
            ChunkWork(2, 1, 1, PROSE, None, "h2")]
    fitted = embedding_texts(embedder, work)
    assert embedder.token_count(fitted[0]) <= 256 and fitted[1] == PROSE
    assert embedding_texts(FakeEmbedder(), work)[0] == f"{context}\n\n{PROSE * 5}"


def test_a_books_context_and_a_navigation_pages_text_reach_the_model_short(
        embedder: EmbeddedEmbedder) -> None:
    """A chunk of a book (PDF, EPUB, Word, HTML) gives the model at most
    ``BOOK_CONTEXT_PIECES`` of its context, a Markdown chunk all the room its text leaves, and
    a contents or index page only the start of its text (``NAVIGATION_PIECES``)."""
    from grimoire_beholder.ingest import pipeline
    from grimoire_beholder.store.records import ChunkWork

    context = "Book › Chapter. " + "Another sentence of the section summary. " * 30
    work = [ChunkWork(1, 1, 1, PROSE, context, "h1", role="body", source_type="epub"),
            ChunkWork(2, 1, 1, PROSE, context, "h2", role="body", source_type="markdown"),
            ChunkWork(3, 1, 1, PROSE * 5, context, "h3", role="index", source_type="markdown")]
    book, notes, index = (text.split("\n\n") for text in pipeline.embedding_texts(embedder, work))
    assert book[1] == PROSE and notes[1] == PROSE
    assert 0 < embedder.count_pieces(book[0]) <= pipeline.BOOK_CONTEXT_PIECES
    assert embedder.count_pieces(notes[0]) > 3 * pipeline.BOOK_CONTEXT_PIECES
    assert 0 < embedder.count_pieces(index[0]) <= pipeline.BOOK_CONTEXT_PIECES
    assert (PROSE * 5).startswith(index[1]) and index[1] != PROSE * 5
    assert 0 < embedder.count_pieces(index[1]) <= pipeline.NAVIGATION_PIECES


def test_fit_context_cuts_the_text_itself_at_a_word_when_asked(embedder: EmbeddedEmbedder) -> None:
    cut = embedder.fit_context("", PROSE * 5, text_most=20)
    assert (PROSE * 5).startswith(cut) and 15 <= embedder.count_pieces(cut) <= 20
    assert embedder.fit_context("", PROSE, text_most=10_000) == PROSE


def test_a_text_cut_never_leaves_the_model_nothing(embedder: EmbeddedEmbedder) -> None:
    """A first word of more pieces than the cut allows (a hash, a blob of digits) keeps the
    text whole rather than embedding an empty string."""
    blob = "9f8e7d6c5b4a39281706f5e4d3c2b1a0" * 3 + " and then words"
    assert embedder.count_pieces(blob.split()[0]) > 8
    assert embedder.fit_context("Book › Index", blob, 16, text_most=8) == f"Book › Index\n\n{blob}"
