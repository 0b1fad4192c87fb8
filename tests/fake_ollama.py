"""An in-process stand-in for the Ollama daemon, speaking its real HTTP API.

Tests drive the real ``ollama`` Python client against this server, so what is exercised is
the exact wire traffic a user's machine would see — not a mocked client. The server is a
stdlib ``ThreadingHTTPServer`` on 127.0.0.1 with an OS-chosen port, run in a daemon thread.

Usage::

    with FakeOllama() as server:          # or FakeOllama(models=[...])
        client = ollama.Client(host=server.host)
        server.fail_next(2)               # the next two requests get HTTP 500
        ...
        assert server.requests_to("/api/embed")[0].model == "nomic-embed-text"

Fault knobs (all thread-safe): ``fail_next``, ``malformed_next``, ``wrong_dimension_next``,
``nonfinite_next``, ``drop_vector_next``, ``delay`` (seconds of latency per request),
``remove_model``/``add_model``, ``stop``. Every request is logged as a :class:`LoggedRequest`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\s\u3040-\u30ff"
                    r"\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")


@dataclass
class FakeModel:
    """One installed model: what /api/tags and /api/show report and what it can do."""

    name: str
    dimension: int = 768
    context_length: int = 2048
    architecture: str = "bert"
    capabilities: tuple[str, ...] = ("embedding",)

    @property
    def tag(self) -> str:
        """The canonical ``name:tag`` form Ollama lists."""
        return canonical(self.name)


def canonical(name: str) -> str:
    """``name`` with ``:latest`` added when it has no tag, as Ollama resolves names."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


DEFAULT_MODELS: tuple[FakeModel, ...] = (
    FakeModel("nomic-embed-text", dimension=768, context_length=2048, architecture="nomic-bert"),
    FakeModel("all-minilm", dimension=384, context_length=256),
    FakeModel("mxbai-embed-large", dimension=1024, context_length=512),
    FakeModel("toy-embed:v1", dimension=16, context_length=64, architecture="toybert"),
    FakeModel("llama3.2:3b", dimension=3072, context_length=131072, architecture="llama",
              capabilities=("completion", "tools")),
)


@dataclass
class LoggedRequest:
    """One request the server received; ``status`` is filled in once answered."""

    method: str
    path: str
    model: str | None
    body: dict[str, Any]
    status: int | None = None


@dataclass
class _Fault:
    kind: str
    path: str | None
    status: int = 500


@dataclass
class _State:
    models: dict[str, FakeModel] = field(default_factory=dict)
    log: list[LoggedRequest] = field(default_factory=list)
    faults: list[_Fault] = field(default_factory=list)
    delay: float = 0.0
    delay_path: str | None = None


def token_count(text: str) -> int:
    """The fake's own token count: one per whitespace word, one per CJK character."""
    return len(_TOKEN.findall(text))


def fake_vector(text: str, dimension: int) -> list[float]:
    """A deterministic unit vector: a signed, hashed bag of the text's lowercase words.

    Texts that share words get similar vectors, so retrieval-style assertions make sense.
    """
    vec = [0.0] * dimension
    words = _WORD.findall(text.lower()) or [""]
    for word in words:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dimension
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    if norm == 1.0 and not any(vec):
        vec[0] = 1.0
    return [v / norm for v in vec]


def fake_completion(model: str, prompt: str, max_words: int) -> str:
    """Deterministic text: a digest of the prompt plus a few words from its end."""
    digest = hashlib.sha256(f"{model}\n{prompt}".encode()).hexdigest()[:8]
    tail = [w for w in prompt.split() if w.strip()][-12:]
    words = ["Context", digest, "about", *tail]
    return " ".join(words[: max(1, max_words)])


class FakeOllama:
    """The fake daemon. Start/stop it explicitly or use it as a context manager."""

    def __init__(self, models: Iterable[FakeModel] = DEFAULT_MODELS,
                 reply: Callable[[str, str, dict[str, Any]], str] | None = None) -> None:
        """``reply(model, prompt, body)`` overrides the generated text when given."""
        self._lock = threading.Lock()
        self._state = _State(models={m.tag: m for m in models})
        self.reply = reply
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeOllama:
        """Bind to 127.0.0.1 (reusing the previous port after a stop) and serve in a thread."""
        handler = _make_handler(self)
        server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-ollama", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering: later connections are refused, like a daemon that went away."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def host(self) -> str:
        """The base URL to give ``ollama.Client(host=...)``."""
        return f"http://127.0.0.1:{self.port}"

    # models ---------------------------------------------------------------------------
    def add_model(self, model: FakeModel) -> None:
        with self._lock:
            self._state.models[model.tag] = model

    def remove_model(self, name: str) -> None:
        """Forget a model, e.g. ``ollama rm`` while an ingest is running."""
        with self._lock:
            self._state.models.pop(canonical(name), None)

    def find_model(self, name: str | None) -> FakeModel | None:
        with self._lock:
            return self._state.models.get(canonical(name)) if name else None

    # request log ----------------------------------------------------------------------
    @property
    def requests(self) -> list[LoggedRequest]:
        """A snapshot of every request so far, oldest first."""
        with self._lock:
            return list(self._state.log)

    def requests_to(self, path: str) -> list[LoggedRequest]:
        return [r for r in self.requests if r.path == path]

    def clear_log(self) -> None:
        with self._lock:
            self._state.log.clear()

    # fault knobs ----------------------------------------------------------------------
    def _add_faults(self, kind: str, n: int, path: str | None, status: int = 500) -> None:
        with self._lock:
            self._state.faults.extend(_Fault(kind, path, status) for _ in range(n))

    def fail_next(self, n: int = 1, *, status: int = 500, path: str | None = None) -> None:
        """The next ``n`` matching requests get ``status`` with an Ollama-style error body."""
        self._add_faults("error", n, path, status)

    def malformed_next(self, n: int = 1, *, path: str | None = None) -> None:
        """The next ``n`` matching requests get HTTP 200 with a body that is not JSON."""
        self._add_faults("malformed", n, path)

    def wrong_dimension_next(self, n: int = 1) -> None:
        """The next ``n`` embed responses have vectors one element short."""
        self._add_faults("wrong_dimension", n, "/api/embed")

    def nonfinite_next(self, n: int = 1) -> None:
        """The next ``n`` embed responses contain a NaN."""
        self._add_faults("nonfinite", n, "/api/embed")

    def drop_vector_next(self, n: int = 1) -> None:
        """The next ``n`` embed responses return one vector fewer than inputs."""
        self._add_faults("drop_vector", n, "/api/embed")

    def set_delay(self, seconds: float, *, path: str | None = None) -> None:
        """Add ``seconds`` of latency before answering (all paths, or only ``path``)."""
        with self._lock:
            self._state.delay = seconds
            self._state.delay_path = path

    @property
    def delay(self) -> float:
        with self._lock:
            return self._state.delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self.set_delay(seconds)

    # used by the handler --------------------------------------------------------------
    def _begin(self, entry: LoggedRequest) -> tuple[float, _Fault | None]:
        with self._lock:
            self._state.log.append(entry)
            delay = self._state.delay if self._state.delay_path in (None, entry.path) else 0.0
            for i, fault in enumerate(self._state.faults):
                if fault.path in (None, entry.path):
                    return delay, self._state.faults.pop(i)
            return delay, None

    def _models_payload(self) -> list[dict[str, Any]]:
        with self._lock:
            models = list(self._state.models.values())
        return [_tags_entry(m) for m in models]


def _details(m: FakeModel) -> dict[str, Any]:
    return {"parent_model": "", "format": "gguf", "family": m.architecture,
            "families": [m.architecture], "parameter_size": "137M",
            "quantization_level": "F16"}


def _tags_entry(m: FakeModel) -> dict[str, Any]:
    return {"name": m.tag, "model": m.tag, "modified_at": "2024-08-01T10:00:00.000000+00:00",
            "size": 274302450, "digest": hashlib.sha256(m.tag.encode()).hexdigest(),
            "details": _details(m)}


def _show_payload(m: FakeModel) -> dict[str, Any]:
    arch = m.architecture
    return {
        "license": "Apache-2.0", "modelfile": f"FROM {m.tag}\n", "parameters": "",
        "template": "{{ .Prompt }}", "details": _details(m),
        "model_info": {"general.architecture": arch, "general.parameter_count": 136727040,
                       f"{arch}.context_length": m.context_length,
                       f"{arch}.embedding_length": m.dimension,
                       f"{arch}.block_count": 12},
        "capabilities": list(m.capabilities), "modified_at": "2024-08-01T10:00:00+00:00",
    }


class _Handler(BaseHTTPRequestHandler):
    """Answers one request; the owning FakeOllama is set as a class attribute."""

    fake: FakeOllama
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = self.path.split("?", 1)[0]
        entry = LoggedRequest(method, path, body.get("model") if isinstance(body, dict) else None,
                              body if isinstance(body, dict) else {})
        delay, fault = self.fake._begin(entry)
        if delay:
            time.sleep(delay)
        if fault is not None and fault.kind == "error":
            self._json(entry, fault.status, {"error": f"fake server error {fault.status}"})
            return
        if fault is not None and fault.kind == "malformed":
            self._send(entry, 200, b'{"embeddings": [[0.1, 0.2', "application/json")
            return
        routes: dict[tuple[str, str], Callable[[LoggedRequest, _Fault | None], None]] = {
            ("GET", "/api/tags"): self._tags, ("GET", "/api/version"): self._version,
            ("POST", "/api/show"): self._show, ("POST", "/api/embed"): self._embed,
            ("POST", "/api/generate"): self._generate, ("POST", "/api/chat"): self._chat,
        }
        route = routes.get((method, path))
        if route is None:
            self._send(entry, 404, b"404 page not found", "text/plain")
            return
        route(entry, fault)

    # responses ------------------------------------------------------------------------
    def _send(self, entry: LoggedRequest, status: int, data: bytes, ctype: str) -> None:
        entry.status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
            self.wfile.write(data)

    def _json(self, entry: LoggedRequest, status: int, payload: Any) -> None:
        self._send(entry, status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _model_or_404(self, entry: LoggedRequest) -> FakeModel | None:
        model = self.fake.find_model(entry.model)
        if model is None:
            self._json(entry, 404, {"error": f"model '{entry.model}' not found"})
        return model

    def _tags(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        self._json(entry, 200, {"models": self.fake._models_payload()})

    def _version(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        self._json(entry, 200, {"version": "0.5.7-fake"})

    def _show(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        model = self._model_or_404(entry)
        if model is not None:
            self._json(entry, 200, _show_payload(model))

    def _embed(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        model = self._model_or_404(entry)
        if model is None:
            return
        raw = entry.body.get("input", "")
        inputs = [raw] if isinstance(raw, str) else list(raw)
        truncate = entry.body.get("truncate", True)
        limit = int(entry.body.get("options", {}).get("num_ctx") or model.context_length)
        limit = min(limit, model.context_length)
        vectors = []
        for text in inputs:
            if token_count(text) > limit:
                if truncate is False:
                    self._json(entry, 400, {"error": "the input length exceeds the context "
                                                     "length"})
                    return
                text = " ".join(_TOKEN.findall(text)[:limit])  # silent truncation, as Ollama
            vectors.append(fake_vector(text, model.dimension))
        kind = fault.kind if fault is not None else None
        if kind == "wrong_dimension":
            vectors = [v[:-1] for v in vectors]
        elif kind == "nonfinite" and vectors:
            vectors[0][0] = math.nan
        elif kind == "drop_vector":
            vectors = vectors[:-1]
        self._json(entry, 200, {"model": model.tag, "embeddings": vectors,
                                "total_duration": 1000, "load_duration": 10,
                                "prompt_eval_count": sum(token_count(t) for t in inputs)})

    def _completion(self, model: FakeModel, prompt: str, body: dict[str, Any]) -> str:
        if self.fake.reply is not None:
            return self.fake.reply(model.tag, prompt, body)
        max_words = int(body.get("options", {}).get("num_predict") or 64)
        return fake_completion(model.tag, prompt, max_words)

    def _generate(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        model = self._model_or_404(entry)
        if model is not None:
            text = self._completion(model, str(entry.body.get("prompt") or ""), entry.body)
            self._answer(entry, model, text, lambda part: {"response": part})

    def _chat(self, entry: LoggedRequest, fault: _Fault | None) -> None:
        model = self._model_or_404(entry)
        if model is None:
            return
        messages = entry.body.get("messages") or []
        prompt = "\n".join(str(m.get("content") or "") for m in messages)
        text = self._completion(model, prompt, entry.body)
        self._answer(entry, model, text,
                     lambda part: {"message": {"role": "assistant", "content": part}})

    def _answer(self, entry: LoggedRequest, model: FakeModel, text: str,
                shape: Callable[[str], dict[str, Any]]) -> None:
        base = {"model": model.tag, "created_at": "2024-08-01T10:00:00.000000Z"}
        final = {"done": True, "done_reason": "stop", "total_duration": 1000,
                 "prompt_eval_count": 10, "eval_count": len(text.split())}
        if entry.body.get("stream") is False:
            self._json(entry, 200, {**base, **shape(text), **final})
            return
        # Ollama streams NDJSON unless told stream=false.
        entry.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        try:
            for piece in _pieces(text):
                self.wfile.write((json.dumps({**base, **shape(piece), "done": False}) + "\n")
                                 .encode())
                self.wfile.flush()
            self.wfile.write((json.dumps({**base, **shape(""), **final}) + "\n").encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


def _pieces(text: str) -> Iterator[str]:
    for match in re.finditer(r"\S+\s*|\s+", text):
        yield match.group(0)


def _make_handler(fake: FakeOllama) -> type[_Handler]:
    return type("BoundHandler", (_Handler,), {"fake": fake})
