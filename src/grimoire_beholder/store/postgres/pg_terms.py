"""The keyword index's terms, exactly as the SQLite library's FTS5 word table makes them.

PostgreSQL's own text search stems, folds and splits differently (and ``ts_rank`` is not
BM25), so the PostgreSQL library keeps what FTS5 would hold: for every embedded chunk its
terms with their weighted frequency (``WORD_WEIGHTS`` per column) and its length in tokens.
The terms come from SQLite's FTS5 tokenizer itself (``store.index_source.Tokenizer``: a
private in-memory twin declared with the word table's own statement from ``schema.sql``), so
stemming, accent folding and token boundaries cannot differ between the two engines, and BM25
computed from these rows (``search_rows.py``) ranks as ``bm25()`` does.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence
from importlib import resources

from grimoire_beholder.store.index_source import WORD_TABLE, Tokenizer
from grimoire_beholder.text import index_fold

_TOKENIZERS = threading.local()


def _word_table_statement() -> str:
    schema = resources.files("grimoire_beholder.store").joinpath("schema.sql").read_text(
        encoding="utf-8")
    found = re.search(rf"CREATE VIRTUAL TABLE IF NOT EXISTS {WORD_TABLE} USING fts5\(.*?\);",
                      schema, flags=re.DOTALL)
    if found is None:
        raise RuntimeError("schema.sql has no word table statement")
    return found.group()


def tokenizer() -> Tokenizer:
    """This thread's FTS5 tokenizer (made once per thread; SQLite connections stay put)."""
    made: Tokenizer | None = getattr(_TOKENIZERS, "tokenizer", None)
    if made is None:
        from grimoire_beholder.store.hit_queries import WORD_WEIGHTS

        twin = sqlite3.connect(":memory:")
        twin.execute(_word_table_statement())
        made = Tokenizer(twin, WORD_WEIGHTS)
        twin.close()
        _TOKENIZERS.tokenizer = made
    return made


def postings(rows: Sequence[Sequence[object]]
             ) -> tuple[list[tuple[str, int, float]], dict[int, int]]:
    """For FTS rows ``(chunk id, text, context, section, chapter, book)``: the postings
    ``(term, chunk id, weighted tf)`` and each chunk's length in tokens, of the texts
    ``text.index_fold``-ed as the SQLite word table holds them."""
    rows = [(row[0], *(index_fold(t) if isinstance(t, str) else t for t in row[1:]))
            for row in rows]
    names: list[str] = []

    def number(term: str) -> int:
        names.append(term)
        return len(names) - 1

    terms, chunks, tf, counts = tokenizer().postings(rows, number)
    lengths: dict[int, int] = {int(row[0]): 0 for row in rows}  # type: ignore[call-overload]
    found = []
    for t, c, f, n in zip(terms.tolist(), chunks.tolist(), tf.tolist(), counts.tolist(),
                          strict=True):
        found.append((names[int(t)], int(c), float(f)))
        lengths[int(c)] += int(n)
    return found, lengths


def query_terms(tokens: Sequence[str]) -> dict[str, int]:
    """The terms FTS5 makes of the query's tokens, in order, each with the number of tokens
    that make it: FTS5 scores every phrase of an OR on its own, so two tokens with one stem
    (``watch``, ``watching``) count that term twice in ``bm25()``, and so must BM25 here."""
    out: dict[str, int] = {}
    for terms in tokenizer().query_terms(tokens):
        for term in terms:
            out[term] = out.get(term, 0) + 1
    return out
