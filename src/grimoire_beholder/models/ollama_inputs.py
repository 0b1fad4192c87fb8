"""What an Ollama embedding model is sent: its input limit and task prefixes, a token
estimate that errs high, and over-long texts cut into windows within that limit.

Ollama truncates long embedding inputs unless told not to, so the embedder sends
``truncate=False`` and cuts texts here itself: :func:`split_windows` gives back pieces that
join to the whole text, each within a budget of :func:`conservative_tokens`. Pure text
arithmetic: no client, no request.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grimoire_beholder.structure.tokens import approx_tokens
from grimoire_beholder.text import NO_SPACE_CHARS


@dataclass(frozen=True)
class EmbeddingModelSpec:
    """What we know about a popular embedding model: its input limit and task prefixes."""

    max_tokens: int
    document_prefix: str = ""
    query_prefix: str = ""


_RETRIEVAL_QUERY = "Represent this sentence for searching relevant passages: "

# Keyed by the model name without its tag. Limits are the lengths the models were trained
# with (which may be lower than the context Ollama would accept); prefixes are the model
# cards' retrieval instructions — leaving them out measurably hurts these models' recall.
KNOWN_EMBEDDING_MODELS: dict[str, EmbeddingModelSpec] = {
    "nomic-embed-text": EmbeddingModelSpec(2048, "search_document: ", "search_query: "),
    "nomic-embed-text-v2-moe": EmbeddingModelSpec(512, "search_document: ", "search_query: "),
    "mxbai-embed-large": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "bge-large": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "snowflake-arctic-embed": EmbeddingModelSpec(512, "", _RETRIEVAL_QUERY),
    "snowflake-arctic-embed2": EmbeddingModelSpec(8192, "", "query: "),
    "all-minilm": EmbeddingModelSpec(256),
    "bge-m3": EmbeddingModelSpec(8192),
    "granite-embedding": EmbeddingModelSpec(512),
    "paraphrase-multilingual": EmbeddingModelSpec(128),
    "embeddinggemma": EmbeddingModelSpec(2048, "title: none | text: ",
                                         "task: search result | query: "),
    "qwen3-embedding": EmbeddingModelSpec(
        8192, "", "Instruct: Given a search query, retrieve relevant passages that answer "
                  "the query\nQuery: "),
}



def embedding_model_spec(model: str) -> EmbeddingModelSpec | None:
    """The table entry for ``model`` (any tag, any namespace), or None if unknown."""
    base = model.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return KNOWN_EMBEDDING_MODELS.get(base)


def conservative_tokens(text: str) -> int:
    """A token estimate that errs high, so a window we send is never over the real limit.

    WordPiece/BPE vocabularies split rare words, numbers and punctuation into several
    tokens; 1.25x the usual word-based estimate, or one token per 3.5 non-space
    characters, whichever is larger, covers technical prose.
    """
    chars = len(text) - text.count(" ")
    return math.ceil(max(approx_tokens(text) * 1.25, chars / 3.5))


_PIECE = re.compile(rf"[{NO_SPACE_CHARS}]\s*|[^\s{NO_SPACE_CHARS}]+\s*|\s+")


def split_windows(text: str, budget: int) -> list[str]:
    """Consecutive, non-overlapping pieces of ``text``, each within ``budget`` tokens.

    Cuts fall between words (or between CJK characters); a single "word" longer than the
    budget (a URL, base64) is cut by characters. Joining the windows gives back ``text``.
    """
    budget = max(1, budget)
    if conservative_tokens(text) <= budget:
        return [text]
    windows: list[str] = []
    current: list[str] = []
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        while conservative_tokens(piece) > budget:  # one monstrous word: cut by characters
            step = max(1, int(budget * 3.5) - 1)
            if current:
                windows.append("".join(current))
                current = []
            windows.append(piece[:step])
            piece = piece[step:]
        if current and conservative_tokens("".join(current) + piece) > budget:
            windows.append("".join(current))
            current = []
        current.append(piece)
    if current:
        windows.append("".join(current))
    return [w for w in windows if w.strip()] or [text[: max(1, int(budget * 3.5))]]

