"""Priors applied to the fused ranking: what part of a book a chunk is in, and what the
book's own printed index says about the query.

* **Role prior.** Back matter shares the body's words but rarely holds the answer: an
  index line ``read.fwf . . . 11``, a contents line, a translator's endnote restating the
  text. Each fused score is multiplied by :data:`ROLE_PRIOR` for its section's role (body
  1.0). A prior, not a filter: a question only an endnote answers still finds it.
* **Printed index lift.** When words of the query form a term of a book's printed index
  (``odbcConnect``, "missing values"), the body chunks on the pages the index gives for it
  are multiplied by ``1 + INDEX_LIFT · w``, where ``w`` shrinks with the number of pages the
  term points at (a term on one page is a precise pointer, one on twelve is not); a term
  found on more than :data:`MAX_SPREAD` of the book's pages ("data" in a statistics
  manual) lifts nothing.
* **Term proximity** (``proximity.py``): the head of the list is multiplied by
  ``1 + PROXIMITY_WEIGHT · share``, the share of the query's rarer words that one window of
  the chunk holds together.
* **The vector arm's seat** (:func:`seat`, hybrid search): the chunk the vector arm ranks
  first stands at place :data:`SEAT` at worst when no candidate above that place comes from
  its section. A passage the model finds closest to the question, in a part of the library
  whose words the keyword arm does not match, is then on the first page instead of buried
  under candidates that merely share the question's words; when its section is already
  shown, or when it is a line of contents or of an index, the list is left alone. The
  places above ``SEAT`` never change.

Every weight was measured on the dev sets (README, "Retrieval quality"). Pure reordering
of the fused list; every candidate keeps its per-arm trace.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from grimoire_beholder.search import proximity
from grimoire_beholder.search.fusion import Fused, order
from grimoire_beholder.store import index_entries, records, text_spans
from grimoire_beholder.text import normalize_term

if TYPE_CHECKING:
    from grimoire_beholder.config import Config
    from grimoire_beholder.store.server_engine import Store

ROLE_PRIOR: dict[str, float] = {
    "body": 1.0, "front_matter": 0.8, "contents": 0.6, "index": 0.6, "notes": 0.8,
    "bibliography": 0.8, "glossary": 0.9,
}
INDEX_LIFT = 0.25
MAX_SPREAD = 0.1  # terms on more than this share of a book's pages lift nothing
# Term proximity (search/proximity.py) for the head of the fused list: score × (1 + w·share).
PROXIMITY_WEIGHT = 0.1
PROXIMITY_DEPTH = 30
SEAT = 5  # the vector arm's best stands at this place of the list at worst (hybrid)
NOT_SEATED = frozenset({"contents", "index"})
MAX_TERM_WORDS = 5
_MIN_TERM_CHARS = 3


def query_terms(query: str) -> list[str]:
    """Every run of 1..MAX_TERM_WORDS consecutive normalised words of the query."""
    words = normalize_term(query).split()
    out = []
    for i, run in enumerate(words):  # each run grows by one word, in order
        for word in words[i + 1:i + MAX_TERM_WORDS]:
            if len(run) >= _MIN_TERM_CHARS:
                out.append(run)
            run = f"{run} {word}"
        if len(run) >= _MIN_TERM_CHARS:
            out.append(run)
    return out


def index_lifts(conn: Store, query: str,
                book_ids: Collection[int] | None) -> dict[int, float]:
    """Chunk id → lift weight from the printed indexes whose terms the query names."""
    terms = query_terms(query)
    if INDEX_LIFT <= 0 or not terms:
        return {}
    by_term: dict[tuple[int, str], list[tuple[int, int]]] = {}
    spread: dict[tuple[int, str], float] = {}
    for row in index_entries.exact(conn, terms, book_ids):
        if row.page_start is not None and row.page_end is not None:
            by_term.setdefault((row.book_id, row.norm), []).append(
                (row.page_start, row.page_end))
            spread[(row.book_id, row.norm)] = row.spread
    lifts: dict[int, float] = {}
    for key, spans in by_term.items():
        if spread[key] > MAX_SPREAD:
            continue  # a word on many pages ("data") points nowhere in particular
        book_id = key[0]
        weight = 1.0 / len(spans)
        for start, end in spans:
            for chunk_id in index_entries.chunks_on_pages(conn, book_id, start, end):
                lifts[chunk_id] = max(lifts.get(chunk_id, 0.0), weight)
    return lifts


def proximity_head(query: str, fused: Sequence[Fused],
                   facts: Mapping[int, records.CandidateFacts]) -> dict[int, float]:
    """Term proximity (chunk id → share) of the head of the fused list: its first
    :data:`PROXIMITY_DEPTH` candidates, whose facts must be in ``facts``."""
    if PROXIMITY_WEIGHT <= 0:
        return {}
    head = [f.chunk_id for f in fused[:PROXIMITY_DEPTH] if f.chunk_id in facts]
    return proximity.scores(query, {c: facts[c].text for c in head})


def adjust(conn: Store, query: str, fused: Sequence[Fused],
           book_ids: Collection[int] | None,
           facts: Mapping[int, records.CandidateFacts] | None = None,
           lifts: Mapping[int, float] | None = None,
           near: Mapping[int, float] | None = None) -> list[Fused]:
    """The fused list re-scored by the role prior, the index lift and term proximity;
    ``facts`` (``text_spans.candidate_facts``), ``lifts`` (:func:`index_lifts`) and
    ``near`` (:func:`proximity_head`) when the caller has them, else they are read and
    computed here."""
    if not fused:
        return []
    if facts is None:
        facts = text_spans.candidate_facts(conn, [f.chunk_id for f in fused])
    if lifts is None:
        lifts = index_lifts(conn, query, book_ids)
    if near is None:
        near = proximity_head(query, fused, facts)
    out = []
    for candidate in fused:
        known = facts.get(candidate.chunk_id)
        role = "body" if known is None else known.role
        factor = (ROLE_PRIOR.get(role, 1.0)
                  * (1.0 + INDEX_LIFT * lifts.get(candidate.chunk_id, 0.0))
                  * (1.0 + PROXIMITY_WEIGHT * near.get(candidate.chunk_id, 0.0)))
        out.append(Fused(candidate.chunk_id, candidate.score * factor, candidate.ranks,
                         candidate.scores) if factor != 1.0 else candidate)
    return sorted(out, key=order)


def ceiling(rest: Sequence[Fused], lifts: Mapping[int, float]) -> float:
    """The highest score :func:`adjust` can give any of ``rest``, candidates past the
    proximity head whose roles are not known: each score times the factor of the role
    prior that raises it most (the least for a negative score) and its index lift, the
    same product in the same order as ``adjust`` computes (rounding is monotonic)."""
    best = -math.inf
    priors = (min(1.0, *ROLE_PRIOR.values()), max(1.0, *ROLE_PRIOR.values()))
    # A candidate without a lift has the factor ``prior · 1 · 1``: of those, only the best
    # score can give the most (a product with a constant rounds monotonically).
    top = max((f.score for f in rest if f.chunk_id not in lifts), default=None)
    lifted = [f for f in rest if f.chunk_id in lifts]
    for score, lift in ([] if top is None else [(top, 0.0)]) + [
            (f.score, lifts[f.chunk_id]) for f in lifted]:
        factor = 1.0 + INDEX_LIFT * lift
        for prior in priors:
            best = max(best, score * (prior * factor * (1.0 + PROXIMITY_WEIGHT * 0.0)))
    return best


def seat_candidate(mode: str, arms: Mapping[str, Sequence[tuple[int, float]]],
                   config: Config) -> int | None:
    """The chunk :func:`seat` may move up: the vector arm's best in hybrid search, unless
    the fusion gives the vector arm no weight (convex at ``fusion_alpha`` 0: keyword only)."""
    vector = arms.get("vector")
    if mode != "hybrid" or not vector or (config.fusion == "convex"
                                          and config.fusion_alpha <= 0.0):
        return None
    return vector[0][0]


def seat(ranked: Sequence[Fused], seated: Fused | None,
         facts: Mapping[int, records.CandidateFacts]) -> list[Fused]:
    """``ranked`` with ``seated`` (the vector arm's best candidate) moved up to place
    :data:`SEAT` when it stands lower or is not in the list at all; unchanged when a
    candidate above that place has its section, or when it is a line of contents or of an
    index (a pointer to a passage, not one: :data:`NOT_SEATED`). ``facts`` must hold
    ``seated``'s and those of the places above. Everything from place ``SEAT`` on moves
    down by one; the places above never change."""
    out = list(ranked)
    known = facts.get(seated.chunk_id) if seated is not None else None
    if seated is None or known is None or known.role in NOT_SEATED or SEAT <= 0:
        return out
    if any(f.chunk_id == seated.chunk_id for f in out[:SEAT]):
        return out
    for above in out[:SEAT - 1]:
        other = facts.get(above.chunk_id)
        if other is not None and _same_section(other.span, known.span):
            return out
    out = [f for f in out if f.chunk_id != seated.chunk_id]
    out.insert(min(SEAT - 1, len(out)), seated)
    return out


def _same_section(one: records.ChunkSpan, other: records.ChunkSpan) -> bool:
    return (one.book_id, one.chapter_index, one.section_index) == (
        other.book_id, other.chapter_index, other.section_index)
