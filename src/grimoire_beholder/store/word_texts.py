"""A few chunk texts holding a word: how the library itself writes it (its case).

The keyword index folds case, so "is ``tamuning`` a name here?" is answered from the text:
the confidence's names signal (``search/library_names.py``) reads the first chunks whose
text holds the word and looks at how it is capitalised. Rows come in rowid order (no
ranking), and FTS5 stops after ``limit`` of them, so a common word costs what a rare one
does. The word goes in as one double-quoted FTS5 token restricted to the ``text`` column;
nothing else of the user's input reaches the expression.
"""

from __future__ import annotations

import sqlite3
from typing import Any


def texts_with_word(conn: sqlite3.Connection | Any, word: str, limit: int) -> list[str]:
    """The text of at most ``limit`` chunks whose text holds ``word`` (as the word index
    matches it: case and accents folded, Porter-stemmed), in chunk order. A library in a
    server database answers nothing (the names signal then reads the question's case
    only), nor does a word that is not one plain token."""
    if not isinstance(conn, sqlite3.Connection) or not word.isalnum():
        return []
    rows = conn.execute("SELECT text FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?",
                        (f'text : "{word}"', limit)).fetchall()
    return [str(row[0]) for row in rows]
