"""The Ollama backends, driven through the real ``ollama`` client against the fake daemon."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import ollama
import pytest

from fake_ollama import FakeModel, FakeOllama, token_count
from grimoire_beholder.config import Config
from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.ollama import OllamaEmbedder, OllamaGenerator
from grimoire_beholder.models.ollama_inputs import (
    conservative_tokens,
    embedding_model_spec,
    split_windows,
)
from grimoire_beholder.models.protocols import Embedder, Generator

FAST = {"timeout": 5.0, "retries": 2, "backoff": 0.001}


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as srv:
        yield srv


def embedder(server: FakeOllama, model: str = "nomic-embed-text", **kw: Any) -> OllamaEmbedder:
    return OllamaEmbedder(model, server.host, **{**FAST, **kw})


def generator(server: FakeOllama, model: str = "llama3.2:3b", **kw: Any) -> OllamaGenerator:
    return OllamaGenerator(model, server.host, **{**FAST, **kw})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the fake itself, through the real client --------------------------------------------

def test_fake_speaks_the_real_client_protocol(server: FakeOllama) -> None:
    client = ollama.Client(host=server.host)
    assert "nomic-embed-text:latest" in [m.model for m in client.list().models]
    info = client.show("nomic-embed-text").modelinfo or {}
    assert info["nomic-bert.context_length"] == 2048
    assert info["nomic-bert.embedding_length"] == 768
    streamed = "".join(p.response or "" for p in
                       client.generate(model="llama3.2:3b", prompt="hello world", stream=True))
    assert streamed == client.generate(model="llama3.2:3b", prompt="hello world").response
    chat = client.chat(model="llama3.2:3b", messages=[{"role": "user", "content": "hi"}])
    assert chat.message.content
    with pytest.raises(ollama.ResponseError) as err:
        client.embed(model="nope", input="x")
    assert err.value.status_code == 404 and "model 'nope' not found" in err.value.error
    assert [r.path for r in server.requests][:2] == ["/api/tags", "/api/show"]
    assert httpx.get(f"{server.host}/api/version", trust_env=False).json()["version"]


def test_from_config_and_empty_model_name(server: FakeOllama) -> None:
    cfg = Config(ollama_host=server.host, embedding_model="all-minilm", embed_batch_size=5,
                 ollama_retries=1, ollama_timeout=3.0)
    emb = OllamaEmbedder.from_config(cfg)
    assert (emb.model, emb.batch_size, emb.retries, emb.timeout) == ("all-minilm", 5, 1, 3.0)
    assert emb.max_tokens == 256
    assert OllamaGenerator.from_config(cfg).model == cfg.llm_model
    with pytest.raises(ModelError, match="no Ollama model configured"):
        OllamaEmbedder("  ", server.host)


# --- construction and check() -------------------------------------------------------------

def test_importing_the_module_does_not_import_ollama() -> None:
    code = ("import sys, grimoire_beholder.models.ollama as m; "
            "print('ollama' in sys.modules, 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_check_accepts_name_with_or_without_latest(server: FakeOllama) -> None:
    plain, tagged = embedder(server), embedder(server, "nomic-embed-text:latest")
    plain.check()
    tagged.check()
    assert plain.identity == tagged.identity == "ollama:nomic-embed-text"
    assert plain.dimension == 768
    assert isinstance(plain, Embedder)
    assert "/api/pull" not in [r.path for r in server.requests]


def test_check_refuses_when_daemon_is_down() -> None:
    host = f"http://127.0.0.1:{free_port()}"
    emb = OllamaEmbedder("nomic-embed-text", host, timeout=2, retries=1, backoff=0.001)
    with pytest.raises(ModelError) as err:
        emb.check()
    assert str(err.value) == (f"cannot reach Ollama at {host} — start it with `ollama serve` "
                              f"(or set ollama_host)")
    gen = OllamaGenerator("llama3.2:3b", host, timeout=2, retries=0)
    with pytest.raises(ModelError, match="cannot reach Ollama"):
        gen.check()


def test_check_refuses_missing_model_with_pull_command(server: FakeOllama) -> None:
    with pytest.raises(ModelError, match=r"run `ollama pull bge-m3`"):
        embedder(server, "bge-m3").check()
    with pytest.raises(ModelError, match=r"`ollama pull qwen2.5:7b`"):
        generator(server, "qwen2.5:7b").check()
    assert all(r.path in ("/api/tags",) for r in server.requests)


# --- embedding: batching, prefixes, normalisation -------------------------------------

def test_batches_by_batch_size_with_document_prefix(server: FakeOllama) -> None:
    emb = embedder(server, batch_size=3)
    texts = [f"passage number {i} about dragons" for i in range(7)]
    vectors = emb.embed_documents(texts)
    assert vectors.shape == (7, 768) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    calls = server.requests_to("/api/embed")
    assert [len(c.body["input"]) for c in calls] == [3, 3, 1]
    assert all(c.model == "nomic-embed-text" for c in calls)
    assert all(c.body["truncate"] is False for c in calls)
    sent = [t for c in calls for t in c.body["input"]]
    assert sent == [f"search_document: {t}" for t in texts]
    emb.embed_query("where do dragons sleep")
    assert server.requests_to("/api/embed")[-1].body["input"] == [
        "search_query: where do dragons sleep"]


def test_query_prefix_table_and_unknown_models(server: FakeOllama) -> None:
    mxbai = embedding_model_spec("mxbai-embed-large:335m")
    assert mxbai is not None and mxbai.document_prefix == ""
    assert mxbai.query_prefix.startswith("Represent this sentence")
    minilm = embedding_model_spec("all-minilm")
    assert minilm is not None and minilm.max_tokens == 256
    assert embedding_model_spec("someone/custom-embed") is None
    emb = embedder(server, "mxbai-embed-large")
    emb.embed_documents(["plain passage"])
    emb.embed_query("a question")
    sent = [c.body["input"][0] for c in server.requests_to("/api/embed")]
    assert sent == ["plain passage",
                    "Represent this sentence for searching relevant passages: a question"]
    toy = embedder(server, "toy-embed:v1")
    toy.embed_documents(["no prefix here"])
    assert server.requests_to("/api/embed")[-1].body["input"] == ["no prefix here"]
    assert toy.max_tokens == 64  # from /api/show's toybert.context_length
    server.add_model(FakeModel("bge-m3", dimension=32, context_length=1024))
    assert embedder(server, "bge-m3").max_tokens == 1024  # the tag's context beats the table


def test_similar_texts_get_similar_vectors(server: FakeOllama) -> None:
    emb = embedder(server)
    docs = emb.embed_documents(["the dragon guards a hoard of gold in the mountain",
                                "tax forms are due in april for most residents"])
    query = emb.embed_query("dragon gold hoard")
    assert float(docs[0] @ query) > float(docs[1] @ query)
    again = embedder(server).embed_documents(["the dragon guards a hoard of gold in the mountain"])
    np.testing.assert_array_equal(again[0], docs[0])


def test_empty_document_list(server: FakeOllama) -> None:
    assert embedder(server, "toy-embed:v1").embed_documents([]).shape == (0, 16)


# --- long inputs: split deliberately, never truncated ------------------------------------

def test_split_windows_cover_the_text_within_budget() -> None:
    text = " ".join(f"word{i}" for i in range(500))
    windows = split_windows(text, 50)
    assert "".join(windows) == text
    assert all(conservative_tokens(w) <= 50 for w in windows) and len(windows) > 5
    cjk = "書" * 400
    assert all(conservative_tokens(w) <= 30 for w in split_windows(cjk, 30))
    assert "".join(split_windows(cjk, 30)) == cjk
    blob = "x" * 5000  # one giant "word"
    assert all(conservative_tokens(w) <= 40 for w in split_windows(blob, 40))
    assert split_windows("short text", 50) == ["short text"]


def test_long_input_is_split_counted_and_not_truncated(server: FakeOllama) -> None:
    emb = embedder(server, "toy-embed:v1", batch_size=4)
    base = " ".join(f"alpha{i}" for i in range(150))
    long_a, long_b = base + " ending dragons", base + " ending taxes"
    vectors = emb.embed_documents([long_a, "short one", long_b])
    assert emb.windowed == 2
    for call in server.requests_to("/api/embed"):
        assert call.status == 200
        assert all(token_count(t) <= 64 for t in call.body["input"])
    # The last words reached the model: a truncating backend would make these identical.
    assert not np.allclose(vectors[0], vectors[2])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_overoptimistic_limit_is_recovered_by_resplitting(server: FakeOllama) -> None:
    emb = embedder(server, "toy-embed:v1", max_tokens=300)  # the model really takes 64
    vec = emb.embed_documents([" ".join(f"w{i}" for i in range(200))])
    assert vec.shape == (1, 16) and emb.windowed == 1
    statuses = [c.status for c in server.requests_to("/api/embed")]
    assert 400 in statuses and statuses[-1] == 200


# --- retries and failures ---------------------------------------------------------------

def test_500_then_success_is_retried(server: FakeOllama) -> None:
    emb = embedder(server)
    server.fail_next(2, path="/api/embed")
    assert emb.embed_documents(["retry me"]).shape == (1, 768)
    assert [c.status for c in server.requests_to("/api/embed")] == [500, 500, 200]


def test_retries_exhausted_is_a_model_error(server: FakeOllama) -> None:
    emb = embedder(server)
    server.fail_next(10, path="/api/embed")
    with pytest.raises(ModelError, match=r"failed after 3 attempts: Ollama answered HTTP 500"):
        emb.embed_documents(["never"])
    assert len(server.requests_to("/api/embed")) == 3


def test_slow_responses_past_the_timeout(server: FakeOllama) -> None:
    emb = embedder(server, timeout=0.2, retries=1)
    server.set_delay(0.6, path="/api/embed")
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"no answer within 0.2s"):
        emb.embed_documents(["slow"])
    assert time.monotonic() - started < 2.0
    assert len(server.requests_to("/api/embed")) == 2


def test_malformed_json_is_retried_then_refused(server: FakeOllama) -> None:
    emb = embedder(server)
    server.malformed_next(1, path="/api/embed")
    assert emb.embed_documents(["ok after one bad answer"]).shape == (1, 768)
    assert [c.status for c in server.requests_to("/api/embed")] == [200, 200]
    server.clear_log()
    server.malformed_next(10, path="/api/embed")
    with pytest.raises(ModelError, match="malformed response"):
        emb.embed_documents(["never"])
    assert len(server.requests_to("/api/embed")) == 3


def test_bad_vectors_are_retried_never_returned(server: FakeOllama) -> None:
    emb = embedder(server, batch_size=2)
    server.nonfinite_next(1)
    server.drop_vector_next(1)
    vectors = emb.embed_documents(["one", "two"])
    assert np.all(np.isfinite(vectors)) and vectors.shape == (2, 768)
    assert len(server.requests_to("/api/embed")) == 3


def test_wrong_dimension_is_refused_not_returned(server: FakeOllama) -> None:
    emb = embedder(server)
    emb.check()
    server.wrong_dimension_next(1)
    with pytest.raises(ModelError, match=r"dimension 767, expected 768"):
        emb.embed_documents(["anything"])
    assert emb.dimension == 768


def test_model_removed_mid_run(server: FakeOllama) -> None:
    emb = embedder(server)
    emb.check()
    server.remove_model("nomic-embed-text")
    with pytest.raises(ModelError, match=r"not installed .* run `ollama pull nomic-embed-text`"):
        emb.embed_documents(["gone"])
    assert [c.status for c in server.requests_to("/api/embed")][-1] == 404
    assert len(server.requests_to("/api/embed")) == 2  # the probe, then one try: no retries


def test_daemon_stopped_mid_run(server: FakeOllama) -> None:
    emb = embedder(server, retries=1)
    emb.check()
    server.stop()
    with pytest.raises(ModelError, match="cannot reach Ollama"):
        emb.embed_documents(["nobody home"])


# --- generator --------------------------------------------------------------------------

def test_generator_request_shape(server: FakeOllama) -> None:
    gen = generator(server)
    gen.check()
    assert isinstance(gen, Generator) and gen.identity == "ollama:llama3.2:3b"
    text = gen.generate("Summarise the dragons.", system="Be brief.", max_tokens=40)
    assert text and text == text.strip()
    call = server.requests_to("/api/generate")[-1]
    assert call.model == "llama3.2:3b" and call.body["stream"] is False
    assert call.body["system"] == "Be brief." and call.body["prompt"] == "Summarise the dragons."
    assert call.body["options"]["num_predict"] == 40
    assert call.body["options"]["temperature"] == 0
    assert call.body["options"]["num_ctx"] == 8192
    assert call.body["keep_alive"] == "30m"


def test_generator_retries_strips_thinking_and_reports_missing_model(
        server: FakeOllama) -> None:
    server.reply = lambda model, prompt, body: "<think>hmm, let me see</think>\n  The answer. \n"
    gen = generator(server)
    server.fail_next(1, path="/api/generate")
    assert gen.generate("q") == "The answer."
    server.fail_next(5, path="/api/generate")
    with pytest.raises(ModelError, match=r"generation with 'llama3\.2:3b' failed after 3"):
        gen.generate("q")
    server.remove_model("llama3.2:3b")
    with pytest.raises(ModelError, match=r"ollama pull llama3.2:3b"):
        gen.generate("q")
