"""Reranking: the real ONNX loading/scoring path on a tiny cross-encoder the test builds, the
Ollama grader against FakeOllama, and the engine's rerank stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fake_ollama import FakeOllama
from fakes import FakeEmbedder
from grimoire_beholder.errors import ModelError
from grimoire_beholder.library import Library
from grimoire_beholder.models import make_reranker
from grimoire_beholder.models.rerank_ollama import UNPARSED, OllamaReranker, parse_grade
from grimoire_beholder.models.rerank_onnx import OnnxReranker
from helpers import fake_config

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "fog", "beam", "cat", "dog", "slugs", "copper"]
# Per-token weights of the toy model: score = Σ weight(token) over the pair (padding masked)
# + TYPE_WEIGHT · (number of segment-B tokens). Only fog, beam, slugs and copper count.
WEIGHTS = {"fog": 3.0, "beam": 1.0, "slugs": 5.0, "copper": 2.0}
TYPE_WEIGHT = 0.5


def build_cross_encoder(folder: Path) -> Path:
    """A tiny 'cross-encoder' with a hand-computable logit, plus a WordPiece tokenizer.json."""
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece

    folder.mkdir(parents=True, exist_ok=True)
    table = np.array([WEIGHTS.get(tok, 0.0) for tok in VOCAB], np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["tok"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["typef"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["typef", "maskf"], ["typem"]),
        helper.make_node("Mul", ["typem", "half"], ["typew"]),
        helper.make_node("Mul", ["tok", "maskf"], ["tokm"]),
        helper.make_node("Add", ["tokm", "typew"], ["per_token"]),
        helper.make_node("ReduceSum", ["per_token", "axes"], ["logits"], keepdims=1),
    ]
    ints = ["batch", "seq"]
    graph = helper.make_graph(
        nodes, "toy_cross_encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ints)
         for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[numpy_helper.from_array(table, "table"),
                     numpy_helper.from_array(np.array(TYPE_WEIGHT, np.float32), "half"),
                     numpy_helper.from_array(np.array([1], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    tokenizer = Tokenizer(WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 16}))
    return folder


def expected(query: str, passage: str, window: int = 16) -> float:
    """The toy model's score, computed by hand from the pair layout [CLS] q [SEP] p [SEP]."""
    q, p = query.lower().split(), passage.lower().split()
    q = q[: window // 2 - 2]
    p = p[: window - len(q) - 3]
    return sum(WEIGHTS.get(t, 0.0) for t in q + p) + TYPE_WEIGHT * (len(p) + 1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cross_encoder(tmp_path_factory.mktemp("xenc"))


def test_onnx_reranker_scores_the_pair_as_built(model_dir: Path) -> None:
    passages = ["fog fog beam", "cat", "dog cat fog copper copper", "beam " * 30]
    reranker = OnnxReranker(model_dir, batch_size=2)
    scores = reranker.score("Beam in the fog?", passages)
    # [UNK] for "in"/"the"/"?"... the query's fog and beam count, as do segment-B types.
    assert scores == pytest.approx([expected("beam in the fog ?", p) for p in passages])
    assert scores == reranker.score("Beam in the fog?", passages)  # deterministic
    assert reranker.score("x", []) == []
    assert reranker.identity == f"onnx:{model_dir.name}"


def test_onnx_reranker_explains_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="needs reranker_path"):
        OnnxReranker("")
    with pytest.raises(ModelError, match="not a folder"):
        OnnxReranker(tmp_path / "nowhere").score("q", ["p"])
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelError, match=r"lacks model\.onnx"):
        OnnxReranker(tmp_path / "half").score("q", ["p"])


def _library(tmp_path: Path, sample_book: Path, **overrides: Any) -> Library:
    tmp_path.mkdir(parents=True, exist_ok=True)
    lib = Library.open(config=fake_config(tmp_path, **overrides), embedder=FakeEmbedder())
    lib.ingest(sample_book)
    return lib


def test_engine_reranks_the_head_by_the_model(tmp_path: Path, sample_book: Path,
                                              model_dir: Path) -> None:
    lib = _library(tmp_path, sample_book, reranker="onnx", reranker_path=str(model_dir),
                   rerank_candidates=8)
    with lib:
        result = lib.search("copper slugs compost drainage aphids", top_k=3)
        scores = [h.rerank_score for h in result.hits]
        assert all(s is not None for s in scores)
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        assert result.hits[0].section.endswith("Slugs")  # slugs and copper weigh most
        assert "rerank" in result.timings_ms
        assert "rerank_score" in result.to_dict()["results"][0]
    plain = _library(tmp_path / "plain", sample_book)
    with plain:
        assert "rerank_score" not in plain.search("slugs").to_dict()["results"][0]


def test_make_reranker_resolves_relative_paths(tmp_path: Path) -> None:
    config = fake_config(tmp_path, reranker="onnx", reranker_path="models/xenc")
    reranker = make_reranker(config)
    assert isinstance(reranker, OnnxReranker) and reranker.identity == "onnx:xenc"
    assert make_reranker(fake_config(tmp_path)) is None


def test_parse_grade_is_forgiving() -> None:
    assert parse_grade("8") == 8.0
    assert parse_grade("Score: 7/10") == 7.0
    assert parse_grade("10.") == 10.0
    assert parse_grade("Yes, it answers it") == 10.0
    assert parse_grade("no") == 0.0
    assert parse_grade("I cannot tell") is None


def test_ollama_reranker_grades_against_fake_ollama() -> None:
    def reply(model: str, prompt: str, body: dict[str, Any]) -> str:
        passage = prompt.split("Question:")[0]
        if "slugs" in passage:
            return "Score: 9/10"
        return "unsure" if "mystery" in passage else "2"

    with FakeOllama(reply=reply) as server:
        reranker = OllamaReranker("llama3.2:3b", host=server.host, retries=2, backoff=0.0,
                                  concurrency=2)
        server.fail_next(1, path="/api/generate")  # retried, not fatal
        scores = reranker.score("what eats lettuce?", ["aphids on roses", "slugs at night",
                                                       "a mystery"])
        assert scores == [2.0, 9.0, UNPARSED]
        assert reranker.unparsed == 1
        sent = server.requests_to("/api/generate")
        assert len(sent) == 4 and all(r.model == "llama3.2:3b" for r in sent)
        assert "what eats lettuce?" in sent[-1].body["prompt"]
