"""One search's candidates before any re-ranking: the vector arm, the cosines convex fusion
fills in, and the arms fused into one list.

The vector arm embeds the query and scans the library's vectors — the in-memory index
(``search/index.py``) on SQLite, the server's own nearest-neighbour search otherwise. It
never touches an SQLite connection, so the engine can run it on :func:`arm_pool`'s worker
while it runs the keyword arm itself. Every list here is (chunk id, score), best first;
nothing here writes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent import futures
from typing import TYPE_CHECKING

import numpy as np

from grimoire_beholder.config import Config
from grimoire_beholder.search import fusion
from grimoire_beholder.search.index import SearchIndex
from grimoire_beholder.text import without_lone_surrogates

if TYPE_CHECKING:
    from grimoire_beholder.store.server_engine import Store

EmbedQuery = Callable[[str], np.ndarray]
# The vector arm's answer: (chunk id, cosine) best first, ms per stage, the query vector.
VectorArm = tuple[list[tuple[int, float]], dict[str, float], np.ndarray]
_ARM_POOL: futures.ThreadPoolExecutor | None = None
_ARM_POOL_LOCK = threading.Lock()


def arm_pool() -> futures.ThreadPoolExecutor:
    """One process-wide worker for the vector arm (engines serialise their own searches)."""
    global _ARM_POOL
    with _ARM_POOL_LOCK:
        if _ARM_POOL is None:
            _ARM_POOL = futures.ThreadPoolExecutor(max_workers=2,
                                                   thread_name_prefix="vector-arm")
        return _ARM_POOL


def vector_arm(conn: Store, index: SearchIndex, embed: EmbedQuery | None, query: str,
               pool: int, allowed: list[int] | None, scope: list[int] | None = None
               ) -> VectorArm:
    """Embed the query with ``embed`` and search the matrix (``index`` on SQLite, ``conn``'s
    own search on a server) for its best ``pool`` within ``allowed`` and ``scope``; also the
    ms of each and the query vector (run on a worker)."""
    assert embed is not None
    started = time.perf_counter()
    query_vec = embed(without_lone_surrogates(query))
    embedded = time.perf_counter()
    hits = (index.search(query_vec, pool, allowed, scope)
            if isinstance(conn, sqlite3.Connection)
            else conn.nearest(query_vec, pool, allowed, scope))
    done = time.perf_counter()
    return (hits, {"embed": (embedded - started) * 1000,
                   "vector": (done - embedded) * 1000}, query_vec)


def cosines_missed(conn: Store, index: SearchIndex, arms: dict[str, list[tuple[int, float]]],
                   query_vec: np.ndarray, pool: int, allowed: list[int] | None
                   ) -> dict[str, dict[int, float]]:
    """The cosine of each keyword candidate the vector arm's pool did not reach.

    Convex fusion adds the two arms' scores, so a chunk the vector arm ranked just past
    its pool (the 51st nearest) would count 0 there and lose to chunks both arms
    returned; its real cosine costs one dot product. (The other way round a keyword
    score would need a second full-text query, and measured no better: README.)
    """
    pooled = {chunk_id for chunk_id, _ in arms.get("vector", [])[:pool]}
    missed = sorted({c for c, _ in arms.get("keyword", [])[:pool]} - pooled)
    if not missed:
        return {}
    found = (index.search(query_vec, len(missed), allowed, missed)
             if isinstance(conn, sqlite3.Connection)
             else conn.nearest(query_vec, len(missed), allowed, missed))
    return {"vector": dict(found)}


def fuse(config: Config, mode: str, arms: dict[str, list[tuple[int, float]]],
         pool: int, filled: dict[str, dict[int, float]] | None = None
         ) -> list[fusion.Fused]:
    """The arms as one list: the one arm of ``mode`` alone, or both fused as ``config.fusion``
    says (``convex`` with the ``filled`` cosines, or ``rrf``)."""
    if mode != "hybrid":
        return fusion.single(mode, arms.get(mode, []), pool=pool)
    if config.fusion == "convex":
        return fusion.convex(arms.get("vector", []), arms.get("keyword", []),
                             config.fusion_alpha, pool=pool, filled=filled)
    return fusion.rrf(arms, k=config.rrf_k, pool=pool)
