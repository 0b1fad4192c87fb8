"""The shared half of the Ollama backends: the client, the model-presence check, the
model's reported facts, and the retry policy.

Transient trouble (daemon restarting, HTTP 5xx, timeouts, garbled JSON, a :class:`Malformed`
answer) is retried with exponential backoff; after ``retries`` it becomes a one-line
:class:`ModelError`, and a model that disappears is reported with the exact ``ollama pull``
command. We never pull on the user's behalf. An input the model refuses as longer than its
context raises :class:`TooLong`, for the embedder to cut it smaller. The ``ollama`` package
(and httpx/pydantic behind it) is imported only when a backend is built or called.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from grimoire_beholder.errors import ModelError

if TYPE_CHECKING:
    import ollama

T = TypeVar("T")

DEFAULT_HOST = "http://localhost:11434"
MAX_BACKOFF = 8.0


def canonical_model_name(name: str) -> str:
    """``name`` with ``:latest`` when untagged — how Ollama itself resolves a model name."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def display_model_name(name: str) -> str:
    """``name`` without a ``:latest`` tag, so both spellings stamp the same identity."""
    return name[: -len(":latest")] if name.endswith(":latest") else name



class Malformed(Exception):
    """A response that parsed but cannot be used (counts, NaNs); retried like a 5xx."""


class TooLong(Exception):
    """Ollama refused an input as longer than the context: our estimate was too low."""


def _is_loopback(host: str) -> bool:
    netloc = urlsplit(host if "://" in host else f"http://{host}").hostname or "localhost"
    return netloc in ("localhost", "::1") or netloc.startswith("127.")


class OllamaBackend:
    """Shared client setup, model presence check and the retry policy."""

    def __init__(self, model: str, host: str, timeout: float, retries: int,
                 backoff: float) -> None:
        import ollama  # deferred: only paid for when an Ollama backend is chosen

        if not model or not model.strip():
            raise ModelError("no Ollama model configured — set embedding_model / llm_model")
        self.model = model.strip()
        self.host = host or DEFAULT_HOST
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        # A proxy from the environment must not intercept a daemon on this very machine.
        extra: dict[str, Any] = {"trust_env": False} if _is_loopback(self.host) else {}
        self._client: ollama.Client = ollama.Client(host=self.host, timeout=self.timeout,
                                                    **extra)

    @property
    def identity(self) -> str:
        """Stable stamp, e.g. ``ollama:nomic-embed-text`` (``:latest`` is dropped)."""
        return f"ollama:{display_model_name(self.model)}"

    def _pull_hint(self) -> str:
        return (f"Ollama model '{self.model}' is not installed at {self.host} — "
                f"run `ollama pull {self.model}`")

    def _unreachable(self) -> str:
        return (f"cannot reach Ollama at {self.host} — start it with `ollama serve` "
                f"(or set ollama_host)")

    def _call(self, action: str, request: Callable[[], T]) -> T:
        """Run ``request`` under the retry policy; every failure ends as a ModelError."""
        import httpx
        import ollama
        import pydantic

        last = ""
        unreachable = False
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF))
            unreachable = False
            try:
                return request()
            except ollama.ResponseError as exc:
                status, error = exc.status_code, str(exc.error)
                if status == 404 and "page not found" in error.lower():
                    raise ModelError(f"Ollama at {self.host} has no API for {action} — "
                                     f"upgrade Ollama") from None
                if status == 404 or (400 <= status < 500 and "not found" in error.lower()):
                    raise ModelError(self._pull_hint()) from None
                if status == 400 and "context length" in error.lower():
                    raise TooLong(error) from None
                if 400 <= status < 500 and status not in (408, 429):
                    raise ModelError(f"Ollama rejected the {action} request for "
                                     f"'{self.model}': {error}") from None
                last = f"Ollama answered HTTP {status}: {error}"
            except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
                unreachable, last = True, "connection refused"
            except httpx.TimeoutException:
                last = (f"no answer within {self.timeout:g}s (raise ollama_timeout if the "
                        f"machine is slow)")
            except httpx.HTTPError as exc:
                last = f"connection problem: {exc}"
            except (json.JSONDecodeError, pydantic.ValidationError, Malformed) as exc:
                last = f"malformed response: {str(exc).splitlines()[0]}"
        if unreachable:
            raise ModelError(self._unreachable())
        attempts = self.retries + 1
        raise ModelError(f"Ollama {action} with '{self.model}' failed after {attempts} "
                         f"attempt{'s' if attempts > 1 else ''}: {last}")

    def _check_installed(self) -> None:
        """Raise ModelError unless the daemon answers and lists our model."""
        listing = self._call("model listing", self._client.list)
        installed = {canonical_model_name(m.model) for m in listing.models if m.model}
        if canonical_model_name(self.model) not in installed:
            raise ModelError(self._pull_hint())

    def _model_info(self) -> dict[str, Any]:
        """``/api/show``'s model_info (architecture keys such as ``bert.context_length``)."""
        shown = self._call("model info", lambda: self._client.show(self.model))
        return dict(shown.modelinfo or {})


def info_value(info: dict[str, Any], suffix: str) -> int | None:
    for key, value in info.items():
        if key.endswith(suffix) and isinstance(value, int) and value > 0:
            return value
    return None

