"""The keyword arm: any user text → safe FTS5 expressions → one BM25 ranking.

Nothing the user types reaches FTS5 syntax. The query is split into word tokens (Unicode
letters and digits; everything else — quotes, ``-``, ``:``, ``*``, parentheses, emoji,
control characters — is a separator), each token is wrapped in double quotes (a token
cannot contain one), and the quoted tokens are joined with ``OR``. Operator words such as
``NEAR``/``AND``/``NOT`` become plain quoted words. ``OR`` keeps recall; BM25 still ranks
chunks that match more, rarer terms first.

* Stop words (a small English list, ``text.STOP_WORDS``) are dropped, unless every token
  is one.
* At most :data:`MAX_TOKENS` distinct tokens are kept; for long pastes the longest ones win
  (length is a free proxy for rarity), then they go back in reading order.
* Accents: the word table folds them (``remove_diacritics 2``) and a quoted token passes
  through the same tokenizer, so ``café`` and ``cafe`` find each other. Full-width letters,
  ligatures and soft hyphens: the word table's text and the query's words are both
  ``text.index_fold``-ed (NFKC, no U+00AD), so ``ＡＢＣ`` finds ``abc`` and ``inter\u00adnational``
  ``international``.
* Scripts without spaces (``text.NO_SPACE_CHARS``: CJK, kana, Hangul, Thai): ``unicode61``
  indexes a whole run of such characters as one token, so they are searched in the trigram
  table instead. Each run of ≥3 characters becomes its overlapping trigrams, each quoted,
  ORed (capped at MAX_TOKENS). A run of 1–2 characters cannot use the trigram index (it
  needs 3); it is sent to the word table as a quoted prefix (``"名前"*``), which finds runs
  that *start* with it (after a space or punctuation). Mid-run 1–2 character matches are not
  found by the keyword arm — the vector arm covers them in hybrid mode. No ``LIKE`` scans.

The two tables' BM25 scores are not comparable, so each list is scaled by its own best
score (best = 1.0) and a chunk's keyword score is the sum over the tables it matched.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grimoire_beholder.store import hit_queries
from grimoire_beholder.text import NO_SPACE_CHARS, STOP_WORDS, WORD_TOKEN, index_fold

if TYPE_CHECKING:
    from grimoire_beholder.search.index import SearchIndex
    from grimoire_beholder.store.server_engine import Store

MAX_TOKENS = 64
MAX_TOKEN_CHARS = 100

_NO_SPACE_RUN = re.compile(f"[{NO_SPACE_CHARS}]+")


@dataclass(frozen=True)
class KeywordQuery:
    """The sanitised FTS5 expressions for one user query (None = nothing to search)."""

    word: str | None
    trigram: str | None

    @property
    def empty(self) -> bool:
        return self.word is None and self.trigram is None


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _keep_distinctive(tokens: list[str], limit: int) -> list[str]:
    """At most ``limit`` distinct tokens: the longest, in their original order."""
    unique = list(dict.fromkeys(tokens))
    if len(unique) <= limit:
        return unique
    order = {tok: i for i, tok in enumerate(unique)}
    chosen = sorted(unique, key=lambda t: (-len(t), order[t]))[:limit]
    return sorted(chosen, key=order.__getitem__)


def _trigrams(run: str) -> list[str]:
    return [run[i:i + 3] for i in range(len(run) - 2)]


def _words(text: str) -> list[str]:
    return [w.lower()[:MAX_TOKEN_CHARS] for w in WORD_TOKEN.findall(text)]


def build_query(text: str) -> KeywordQuery:
    """Turn arbitrary text into FTS5 expressions that cannot be a syntax error.

    Words are read ``text.index_fold``-ed, as the word table holds its text (``ＡＢＣ`` is
    ``abc``, a soft hyphen joins), and also as typed when that differs, for a word table
    written before it was folded (``reindex-fts`` folds one). Runs of scripts without
    spaces stay as typed: the trigram table holds the text as stored.
    """
    prefixes: list[str] = []
    grams: list[str] = []
    for match in _NO_SPACE_RUN.finditer(text):
        run = match.group()[:MAX_TOKEN_CHARS]
        if len(run) >= 3:
            grams.extend(_trigrams(run))
        else:
            prefixes.append(run)
    rest = _NO_SPACE_RUN.sub(" ", text) if grams or prefixes else text
    words = _words(_NO_SPACE_RUN.sub(" ", index_fold(rest)))
    folded = set(words)
    words += [w for w in _words(rest) if w not in folded]  # as typed: libraries indexed before
    content = [w for w in words if w not in STOP_WORDS]
    if not content and not prefixes and not grams:
        content = words
    parts = [_quote(w) for w in _keep_distinctive(content, MAX_TOKENS)]
    parts += [_quote(p) + "*" for p in _keep_distinctive(prefixes, MAX_TOKENS)]
    gram_parts = [_quote(g) for g in list(dict.fromkeys(grams))[:MAX_TOKENS]]
    return KeywordQuery(
        word=" OR ".join(parts) if parts else None,
        trigram=" OR ".join(gram_parts) if gram_parts else None,
    )


def _scaled(rows: list[tuple[int, float]]) -> dict[int, float]:
    """BM25 (negative, lower is better) → relevance in (0, 1], best = 1."""
    if not rows:
        return {}
    best = max(-score for _, score in rows)
    if best <= 0.0:
        return {chunk_id: 1.0 for chunk_id, _ in rows}
    return {chunk_id: max(-score, 0.0) / best for chunk_id, score in rows}


def search(conn: Store, text: str, limit: int,
           book_ids: Collection[int] | None = None,
           chunk_ids: Collection[int] | None = None, *,
           index: SearchIndex | None = None) -> list[tuple[int, float]]:
    """(chunk id, keyword score) best first, at most ``limit``, within ``book_ids`` (and
    ``chunk_ids``, a reading position, when given).

    An empty ``book_ids`` means "no allowed book" (empty result); None means all books.
    With a persisted search ``index`` the word table's BM25 top ``limit`` comes from its
    postings (the same ranking, without FTS5 scoring every matching row); FTS5 answers
    whatever the index cannot (``SearchIndex.keyword``).
    """
    query = build_query(text)
    if query.empty or any(ids is not None and not ids for ids in (book_ids, chunk_ids)):
        return []
    lists: list[dict[int, float]] = []
    if query.word is not None:
        rows = None
        if index is not None and chunk_ids is None and isinstance(conn, sqlite3.Connection):
            rows = index.keyword(conn, query.word, limit, book_ids)
        if rows is None:
            rows = hit_queries.word_match(conn, query.word, limit, book_ids, chunk_ids)
        lists.append(_scaled(rows))
    if query.trigram is not None:
        lists.append(_scaled(hit_queries.trigram_match(conn, query.trigram, limit, book_ids,
                                                        chunk_ids)))
    merged: dict[int, float] = {}
    for scores in lists:
        for chunk_id, score in scores.items():
            merged[chunk_id] = merged.get(chunk_id, 0.0) + score
    ranked = sorted(merged.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit]
