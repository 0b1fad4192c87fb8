"""Why the PostgreSQL library computes BM25 from FTS5's terms instead of using ``ts_rank``.

Run: ``uv run python bench/pg_keyword_choice.py --postgres postgresql://…/postgres``
(after ``bench/retrieval_eval.py --sets squad --postgres …`` has built the library).

On a copy of the SQuAD dev library in PostgreSQL, a ``tsvector`` of each chunk (text weight
A, context B, section C, book D; the ``english`` configuration) with a GIN index is ranked by
``ts_rank`` and by ``ts_rank_cd`` for the same ORed query terms, and the keyword and hybrid
figures are compared with the library's own BM25 (identical to SQLite's FTS5 ``bm25()``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_eval
from grimoire_beholder.cli import evaluation
from grimoire_beholder.library import Library
from grimoire_beholder.store.postgres import pg_search_rows

TSV = ("setweight(to_tsvector('english', c.text), 'A') || "
       "setweight(to_tsvector('english', coalesce(c.context, '')), 'B') || "
       "setweight(to_tsvector('english', s.breadcrumb), 'C') || "
       "setweight(to_tsvector('english', b.name), 'D')")


def ts_rank_arm(function: str):
    def word_match(self: pg_search_rows.SearchRowsMixin, tokens: list[str], limit: int,
                   book_ids: Collection[int] | None, chunk_ids: Collection[int] | None
                   ) -> list[tuple[int, float]]:
        if not tokens:
            return []
        query = " | ".join(t for t in tokens if t.isalnum())
        return [(int(r[0]), -float(r[1])) for r in self.rows(
            f"SELECT id, {function}(tsv, q) AS score FROM chunks, "
            "to_tsquery('english', %s) AS q WHERE tsv @@ q ORDER BY score DESC, id LIMIT %s",
            (query, limit))]
    return word_match


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--postgres", required=True)
    args = ap.parse_args()
    dev = retrieval_eval.dev_sets()["squad"]
    config = retrieval_eval.build_server_library(dev, {}, "", args.postgres)
    url = config.db_path
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM information_schema.columns WHERE "
                            "table_name = 'chunks' AND column_name = 'tsv'").fetchone():
            conn.execute("ALTER TABLE chunks ADD COLUMN tsv tsvector")
            conn.execute(f"UPDATE chunks c SET tsv = {TSV} FROM sections s, books b "
                         "WHERE s.id = c.section_id AND b.id = c.book_id")
            conn.execute("CREATE INDEX chunks_tsv ON chunks USING gin (tsv)")
    questions = retrieval_eval.load_questions(dev)
    own = pg_search_rows.SearchRowsMixin.word_match
    rows = []
    for label, arm in (("BM25 (FTS5 terms)", own), ("ts_rank", ts_rank_arm("ts_rank")),
                       ("ts_rank_cd", ts_rank_arm("ts_rank_cd"))):
        pg_search_rows.SearchRowsMixin.word_match = arm  # type: ignore[method-assign]
        with Library.open(config=config, embedder=retrieval_eval.caching_embedder(config),
                          read_only=True) as lib:
            for mode in ("keyword", "hybrid"):
                run = evaluation.run_questions(lib, questions, mode=mode, top_k=10)
                m = evaluation.score_run(questions, run, retrieval_eval.KS)
                rows.append(f"| {label} | {mode} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
                            f"{m['mrr@10']:.3f} | {m['strict_recall@5']:.3f} |")
    pg_search_rows.SearchRowsMixin.word_match = own  # type: ignore[method-assign]
    print(f"SQuAD dev, {len(questions)} questions, {urlsplit(url).path[1:]}")
    print("| keyword ranking | mode | R@1 | R@5 | MRR@10 | strict R@5 |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
