"""Deterministic fault injection for the crash-safety tests.

``GRIMOIRE_BEHOLDER_KILL_AT="<point>:<n>"`` makes the process SIGKILL itself the n-th time it
passes ``<point>`` (e.g. ``contexts.commit:3`` right after the third context commit, or
``embeddings.before_commit:2`` inside the second embedding transaction, before it commits).
A kill at a chosen, repeatable point is what lets a test prove "at most one unit in flight is
lost". Unset (always, outside tests), ``reached`` is one dictionary lookup.
"""

from __future__ import annotations

import os

from grimoire_beholder import portable

_ENV = "GRIMOIRE_BEHOLDER_KILL_AT"
_target: tuple[str, int] | None = None
_counts: dict[str, int] = {}


def _parse() -> tuple[str, int] | None:
    raw = os.environ.get(_ENV, "")
    if ":" not in raw:
        return None
    point, _, count = raw.rpartition(":")
    return (point, int(count)) if count.isdigit() else None


_target = _parse()


def reached(point: str) -> None:
    """Count a pass through ``point``; SIGKILL this process if it is the chosen one."""
    if _target is None or _target[0] != point:
        return
    _counts[point] = _counts.get(point, 0) + 1
    if _counts[point] == _target[1]:
        portable.kill_self()
