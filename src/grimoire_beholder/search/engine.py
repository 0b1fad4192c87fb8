"""The search entry point: filters → arms (vector, keyword) → fusion → priors → passages → hits.

Modes (``retrieval_mode`` or the ``mode`` argument):

* ``hybrid`` — both arms, fused by ``fusion`` (``rrf`` or ``convex``, see ``fusion.py``);
* ``vector`` — cosine similarity only; ``keyword`` — BM25 only.

The engine follows the data by itself: whenever anything was committed since its last
search (``PRAGMA data_version`` or this connection's changes, see
``store.hit_queries.change_token``), it asks ``query_embedder`` again — the library may have
gained its first vectors, or been re-stamped by another process — and the vector index
refreshes (``vector.py``). Nobody outside has to reset it after writing.

``query_embedder`` returns None only when nothing needs it: ``Library`` returns none while
the configured ``retrieval_mode`` is ``keyword`` and the library holds no vectors, so a
keyword-only setup never loads a model. A search that then asks for ``hybrid`` degrades to
keyword search and says so in ``note``; ``vector`` cannot degrade without silently changing
what was asked, so it raises :class:`ModelError`. A missing or failing embedding model is
never masked: building the engine does not load it, and its ModelError at query time (the
embedded package not installed, Ollama down) propagates, so the user learns the backend is
broken instead of getting quietly weaker results.

Each arm contributes its best ``max(candidate_pool_size, 3·top_k)`` candidates (3·top_k so
that the hits whose passage would mostly repeat a better hit's text, which are dropped,
still leave ``top_k``; when they do not — a library of tiny chunks — the search runs again
from a pool four times larger, up to ``MAX_POOL``). Filters are applied inside each arm,
before its top candidates are taken.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent import futures
from typing import TYPE_CHECKING

from grimoire_beholder.config import CHOICES, Config
from grimoire_beholder.errors import GrimoireError, ModelError
from grimoire_beholder.models.protocols import Reranker
from grimoire_beholder.search import (
    candidate_arms,
    confidence,
    final_order,
    fusion,
    keyword,
    library_names,
    passages,
    position,
    ranking,
    rerank,
    segment_files,
)
from grimoire_beholder.search.candidate_arms import EmbedQuery
from grimoire_beholder.search.hits import SearchHit, SearchResults
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.store import hit_queries, index_entries, role_rows
from grimoire_beholder.structure.roles import ROLES
from grimoire_beholder.text import MAX_QUERY_CHARS, plural

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store

MAX_TOP_K = 100
UNFINISHED_NAMED = 3  # books a search's note names as partly searchable, then how many more


def _check_roles(roles: Collection[str] | str | None) -> frozenset[str] | None:
    """The role filter as a set, or GrimoireError naming the roles that exist. Case and
    ``-`` for ``_`` do not matter: ``--role Front-Matter`` is front_matter."""
    if roles is None:
        return None
    given = {r.strip().lower().replace("-", "_"): r
             for r in ([roles] if isinstance(roles, str) else roles)}
    unknown = sorted(r for role, r in given.items() if role not in ROLES)
    if unknown or not given:
        raise GrimoireError(f"unknown section role {', '.join(map(repr, unknown)) or '(none)'}"
                            f"; use one of {', '.join(ROLES)}")
    return frozenset(given)


def _narrow(scope: list[int] | None, other: list[int] | None) -> list[int] | None:
    """Chunk ids in both scopes (None: no restriction)."""
    if scope is None or other is None:
        return other if scope is None else scope
    keep = set(other)
    return [chunk_id for chunk_id in scope if chunk_id in keep]


# The largest pool a search widens to when passages fall short of ``top_k`` (``_run``).
MAX_POOL = 4_000


class _Clock:
    """Milliseconds per stage, for ``SearchResults.timings_ms``."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (now - self._last) * 1000.0
        self._last = now

    def total(self) -> dict[str, float]:
        self.timings["total"] = (time.perf_counter() - self._start) * 1000.0
        return self.timings


def partly_searchable_note(unfinished: list[hit_queries.Unfinished]) -> str | None:
    """What a search says of the books whose chunks are not all embedded (an ingest stopped
    or still running): their names and how much of each it saw — at most
    :data:`UNFINISHED_NAMED`, then how many more —, and how to finish them; None for none."""
    if not unfinished:
        return None
    named = [f"{b.slug} ({b.embedded:,} of {plural(b.chunks, 'chunk')})"
             for b in unfinished[:UNFINISHED_NAMED]]
    if len(unfinished) > UNFINISHED_NAMED:
        named.append(f"and {len(unfinished) - UNFINISHED_NAMED:,} more")
    which = plural(len(unfinished), "book") + (" is" if len(unfinished) == 1 else " are")
    them = "it" if len(unfinished) == 1 else "them"
    return (f"{which} only partly searchable: {', '.join(named)}; run `grimoire-beholder "
            f"ingest` again to finish {them}")


class SearchEngine:
    """Searches one library; keeps its vector index in memory between searches.

    One engine per process and connection. Searches are serialised by a lock: they share
    the connection and the index, and each is a few milliseconds.
    """

    def __init__(self, conn: Store,
                 query_embedder: Callable[[], EmbedQuery | None], config: Config,
                 reranker: Reranker | None = None) -> None:
        self._conn = conn
        self._query_embedder = query_embedder
        self._embed: EmbedQuery | None = None
        self._seen: tuple[int, int] | None = None  # change token of the last data look
        self._state: tuple[int, bool] | None = None  # library_state at that token (SQLite)
        self._unfinished: list[hit_queries.Unfinished] | None = None  # and partly_searchable
        self._indexed: bool | None = None  # any printed-index entry at that token
        # the books hits have shown since that token (SQLite: hit_queries.hit_rows)
        self._books: dict[int, hit_queries.BookFacts] = {}
        self._config = config
        self._reranker = reranker  # None unless config.reranker != "none" (search/rerank.py)
        self._index = SearchIndex(None if config.database_url else config.database_path)
        self._lock = threading.Lock()
        self._written = library_names.WrittenNames(conn)  # names the library writes

    @property
    def vector_index(self) -> SearchIndex:
        return self._index

    def _follow_data(self) -> None:
        """Ask for the query embedder again if the database changed since the last search.

        If that raises (e.g. the library is now stamped with another model), the next
        search asks again.
        """
        token = hit_queries.change_token(self._conn)
        if token != self._seen:
            self._state = self._indexed = self._unfinished = None
            self._books.clear()
            self._written.clear()
            self._embed = self._query_embedder()
            self._seen = token

    def _library_state(self) -> tuple[int, bool]:
        """``hit_queries.library_state``, read once per change token on SQLite (whose token
        moves with every commit; a server's token does not move when chunks are embedded)."""
        if self._state is None or not isinstance(self._conn, sqlite3.Connection):
            self._state = hit_queries.library_state(self._conn)
        return self._state

    def _partly_searchable(self, allowed: list[int] | None) -> str | None:
        """The note naming the books in the search's scope (``allowed``, None for all) that
        searches see only part of, or None; ``hit_queries.partly_searchable`` is read once
        per change token on SQLite, as ``_library_state`` is."""
        if self._unfinished is None or not isinstance(self._conn, sqlite3.Connection):
            self._unfinished = hit_queries.partly_searchable(self._conn)
        scope = None if allowed is None else set(allowed)
        return partly_searchable_note([b for b in self._unfinished
                                       if scope is None or b.book_id in scope])

    def _index_lifts(self, query: str, allowed: list[int] | None) -> dict[int, float]:
        """``ranking.index_lifts``, not looked up in a library without any printed-index
        entry (asked once per change token)."""
        if self._indexed is None:
            self._indexed = index_entries.any_entries(self._conn)
        return ranking.index_lifts(self._conn, query, allowed) if self._indexed else {}

    def _resolve(self, query: str, top_k: int | None, mode: str | None
                 ) -> tuple[str, int, str, str | None]:
        """Validate the arguments: (query, top_k, effective mode, note)."""
        if not isinstance(query, str) or not query.strip():
            raise GrimoireError("empty query")
        if len(query.strip()) > MAX_QUERY_CHARS:
            raise GrimoireError(f"the question is {len(query.strip()):,} characters long; ask "
                                f"it in at most {MAX_QUERY_CHARS:,} (a few words or sentences)")
        k = self._config.top_k if top_k is None else top_k
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP_K:
            raise GrimoireError(f"top_k must be an integer from 1 to {MAX_TOP_K} (got {k!r})")
        wanted = self._config.retrieval_mode if mode is None else mode
        allowed = CHOICES["retrieval_mode"]
        if wanted not in allowed:
            raise GrimoireError(f"unknown search mode {wanted!r}; use one of {', '.join(allowed)}")
        note = None
        if self._embed is None and wanted != "keyword":
            if wanted == "vector":
                raise ModelError("vector search needs embeddings, and this keyword-only "
                                 "library has none yet; use mode 'keyword'")
            wanted, note = "keyword", "no embeddings in this library yet: keyword search only"
        return query.strip(), k, wanted, note

    def search(self, query: str, top_k: int | None = None, book: str | int | None = None,
               author: str | None = None, source_type: str | None = None,
               mode: str | None = None, *, explain: bool = False, group: str | None = None,
               path_prefix: str | None = None,
               until_chapter: int | str | None = None,
               roles: Collection[str] | None = None,
               labels: Mapping[str, str | None] | None = None,
               book_slug: str | None = None) -> SearchResults:
        """Up to ``top_k`` hits for ``query`` within the filters.

        ``labels`` ({"tag": …, "collection": …, "series": …}) keeps books of Calibre and
        Zotero libraries carrying them (``store.hit_queries.resolve_books``).

        ``group``/``path_prefix`` narrow folder libraries (see ``store.hit_queries.resolve_books``).
        ``until_chapter`` keeps one book's chapters up to and including that one (an index or
        a title, see ``position.py``): a set of chunk ids both arms apply before their top-k.
        ``roles`` keeps chunks of sections with those roles (``structure.roles.ROLES``), the
        same way; without it every role is searched, body text first (``ranking.py``).

        ``explain`` adds each hit's fusion trace (per-arm rank and score, fused score).
        ``book_slug`` is the slug errors name the book by when ``book`` is its id.
        """
        wanted_roles = _check_roles(roles)
        with self._lock:
            self._follow_data()
            query, k, mode, note = self._resolve(query, top_k, mode)
            fusion_name = self._config.fusion if mode == "hybrid" else None
            result = SearchResults(query=query, mode=mode, fusion=fusion_name, note=note)
            clock = _Clock()
            allowed = hit_queries.resolve_books(self._conn, book, author, source_type,
                                                 group=group, path_prefix=path_prefix,
                                                 labels=labels)
            scope = (None if until_chapter is None else position.until_scope(
                self._conn, allowed, book_slug or (None if book is None else str(book)),
                until_chapter))
            if wanted_roles is not None:
                scope = _narrow(scope, role_rows.chunk_ids_with_roles(
                    self._conn, allowed, wanted_roles))
            books, searchable = self._library_state()
            clock.lap("filters")
            if not searchable:
                result.note = ("the library is empty" if books == 0 else
                               "no book is searchable yet (ingestion has not finished)")
            elif allowed is not None and not allowed:
                result.note = "no book matches the filters"
            else:
                self._run(result, k, allowed, clock, explain, scope)
                partial = self._partly_searchable(allowed)
                if partial:
                    result.note = f"{result.note}; {partial}" if result.note else partial
            result.timings_ms = clock.total()
        result.low_confidence = result.low_confidence or not result.hits
        return result

    def _run(self, result: SearchResults, k: int, allowed: list[int] | None,
             clock: _Clock, explain: bool, scope: list[int] | None = None,
             pool: int | None = None) -> None:
        """Arms, fusion, passages and hits for one search, from each arm's best ``pool``
        candidates (``max(candidate_pool_size, 3·top_k)`` when None). When their passages
        fall short of ``top_k`` — a library of tiny chunks, whose neighbours' passages
        mostly repeat each other — while an arm was cut short by the pool, it runs again
        from a pool four times larger, up to :data:`MAX_POOL`."""
        pool = max(self._config.candidate_pool_size, 3 * k) if pool is None else pool
        depth = rerank.depth(k, self._config.rerank_candidates, self._reranker)
        with hit_queries.snapshot(self._conn):
            arms: dict[str, list[tuple[int, float]]] = {}
            vector_arm = None
            wants_vectors = result.mode != "keyword" and self._embed is not None
            local = self._conn if isinstance(self._conn, sqlite3.Connection) else None
            if local is not None:
                self._index.refresh(local, exact_vectors=wants_vectors)
            clock.lap("refresh")
            if wants_vectors and (local is None or result.mode == "vector"):
                # a server's arms share one connection; alone, the arm has nothing to wait
                # beside, and a worker would only add its hand-off (~40 CPU-µs)
                vector_arm = futures.Future[candidate_arms.VectorArm]()
                try:
                    vector_arm.set_result(candidate_arms.vector_arm(
                        self._conn, self._index, self._embed, result.query, pool, allowed,
                        scope))
                except Exception as exc:  # raised below, as a worker's would be
                    vector_arm.set_exception(exc)
            elif wants_vectors:
                # Embedding the query and scanning the matrix never touch the connection, so
                # they run on a worker thread while this one runs the keyword arm (SQLite,
                # onnxruntime and numpy all release the GIL): hybrid costs about
                # max(embed + vector, keyword) instead of their sum on a multi-core machine.
                vector_arm = candidate_arms.arm_pool().submit(
                    candidate_arms.vector_arm, self._conn, self._index, self._embed,
                    result.query, pool, allowed, scope)
            try:
                if result.mode != "vector":
                    arms["keyword"] = keyword.search(self._conn, result.query, pool, allowed,
                                                     scope,
                                                     index=self._index if local else None)
                    clock.lap("keyword")
            finally:
                if vector_arm is not None:  # never leave the snapshot with it running
                    vector_arm.exception()  # waits; the arm's own error is raised below
            if vector_arm is not None:
                try:
                    arms["vector"], stage_ms, query_vec = vector_arm.result()
                except segment_files.IndexDamage:  # set aside: once more, on the exact arms
                    assert local is not None
                    self._index.refresh(local)
                    arms["vector"], stage_ms, query_vec = candidate_arms.vector_arm(
                        self._conn, self._index, self._embed, result.query, pool, allowed,
                        scope)
                clock.lap("vector_wait")  # what the keyword arm did not hide
                clock.timings.update(stage_ms)
            filled = None
            if (result.mode == "hybrid" and self._config.fusion == "convex"
                    and vector_arm is not None):
                filled = candidate_arms.cosines_missed(self._conn, self._index, arms,
                                                       query_vec, pool, allowed)
                clock.lap("fill")
            fused = candidate_arms.fuse(self._config, result.mode, arms, pool, filled)
            clock.lap("fusion")
            heads: dict[int, hit_queries.ChunkHead] = {}
            seat = ranking.seat_candidate(result.mode, arms, self._config)
            lifts = self._index_lifts(result.query, allowed)
            kept, chosen, facts = final_order.choose(self._conn, result.query, fused, allowed,
                                                     lifts, clock.lap, depth, heads, seat)
            rows = passages.apply(hit_queries.hit_rows(self._conn, chosen, self._books, facts,
                                                       heads), chosen)
            kept = [f for f in kept if f.chunk_id in rows]
            clock.lap("fetch")
        if (len(chosen) < depth and pool < MAX_POOL
                and any(len(ranked) >= pool for ranked in arms.values())):
            self._run(result, k, allowed, clock, explain, scope, min(4 * pool, MAX_POOL))
            return
        fused_scores = [f.score for f in kept[:2]]
        reranked: list[tuple[fusion.Fused, float | None]] = [(f, None) for f in kept]
        if self._reranker is not None:
            reranked = list(rerank.apply(self._reranker, result.query, kept, rows, k))
            clock.lap("rerank")
        kept = [f for f, _ in reranked]
        result.hits = [SearchHit.from_row(rows[f.chunk_id], rank, f.score, f.ranks, score)
                       for rank, (f, score) in enumerate(reranked, start=1)]
        self._assess(result, arms, fused_scores, reranked[0][1] if reranked else None)
        if explain:
            result.explain = [{"rank": rank, **f.explain()}
                              for rank, f in enumerate(kept, start=1)]
        if not result.hits and result.note is None:
            result.note = "no match"

    def _assess(self, result: SearchResults, arms: dict[str, list[tuple[int, float]]],
                fused_scores: list[float], rerank_top: float | None) -> None:
        """Fill ``confidence``/``low_confidence`` from the scores (search/confidence.py)."""
        if not result.hits:
            result.low_confidence = True
            return
        shown = [f"{h.text} {h.context or ''} {h.section}" for h in result.hits]
        cited = list(dict.fromkeys(f"{h.book} {h.author or ''}" for h in result.hits))
        feats = confidence.features(result.query, arms, fused_scores, shown[0], rerank_top,
                                    shown + cited, self._written)
        backend = self._config.reranker if self._reranker is not None else None
        result.features = feats
        result.confidence = confidence.confidence(feats, result.mode, result.fusion, backend)
        result.low_confidence = (result.confidence is not None
                                 and result.confidence < self._config.min_confidence)
