"""A reranker that asks a local Ollama model to grade each (question, passage) pair.

Why a generative grader: a user who already runs Ollama for contexts may not have a
cross-encoder exported to ONNX, yet a small instruction model judges relevance well enough
to reorder a few dozen candidates. Each pair is one ``/api/generate`` call (greedy, a few
output tokens) asking for a grade from 0 to 10; requests go out ``concurrency`` at a time.

Parsing is deliberately forgiving, because small models ramble: the first number from 0 to
10 in the reply wins ("Score: 7/10" → 7, "8." → 8), else a leading yes/no (10/0), else the
pair scores :data:`UNPARSED` (below any real grade, so it sinks but keeps its fused order
among other unparsed ones) and is counted in :attr:`OllamaReranker.unparsed`. Transport
trouble (daemon down, 5xx, timeouts) goes through :class:`OllamaGenerator`'s retry policy
and ends as a one-line ModelError, never as silently wrong scores.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from grimoire_beholder.models.ollama import OllamaGenerator
from grimoire_beholder.models.ollama_client import DEFAULT_HOST

PASSAGE_CHARS = 2000  # enough for one chunk; keeps each prompt small and fast
UNPARSED = -1.0
SYSTEM = ("You grade search results. Given a question and a passage, answer with one "
          "number from 0 to 10: 10 if the passage answers the question, 0 if it is "
          "unrelated. Answer with the number only.")
_NUMBER = re.compile(r"(?<![\d.])(10|[0-9])(?:\.\d+)?(?![\d])")
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def build_prompt(query: str, passage: str) -> str:
    """The grading prompt: passage first, question last (what the model must answer)."""
    return (f"Passage:\n{passage[:PASSAGE_CHARS]}\n\nQuestion: {query}\n\n"
            "Relevance from 0 to 10:")


def parse_grade(reply: str) -> float | None:
    """The grade in a model's reply (0–10), or None when there is none."""
    match = _NUMBER.search(reply)
    if match:
        return float(match.group(1))
    yes_no = _YES_NO.match(reply)
    if yes_no:
        return 10.0 if yes_no.group(1).lower() == "yes" else 0.0
    return None


class OllamaReranker:
    """Relevance grades (0–10) from a local Ollama model; higher is more relevant."""

    def __init__(self, model: str, host: str = DEFAULT_HOST, timeout: float = 120.0,
                 retries: int = 3, *, concurrency: int = 2, backoff: float = 0.5) -> None:
        self._generator = OllamaGenerator(model, host, timeout, retries, backoff=backoff,
                                          num_ctx=2048, keep_alive="30m")
        self._concurrency = max(1, concurrency)
        self._lock = threading.Lock()
        self.unparsed = 0
        """Replies so far that held no grade (scored UNPARSED)."""

    @property
    def identity(self) -> str:
        return self._generator.identity

    def check(self) -> None:
        """Daemon up and the model installed (else ModelError with the pull command)."""
        self._generator.check()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One grade per passage, in the passages' order."""
        if not passages:
            return []

        def grade(passage: str) -> float:
            reply = self._generator.generate(build_prompt(query, passage), system=SYSTEM,
                                             max_tokens=8)
            found = parse_grade(reply)
            if found is None:
                with self._lock:
                    self.unparsed += 1
                return UNPARSED
            return found

        if self._concurrency == 1 or len(passages) == 1:
            return [grade(p) for p in passages]
        with ThreadPoolExecutor(max_workers=self._concurrency) as pool:
            return list(pool.map(grade, passages))
