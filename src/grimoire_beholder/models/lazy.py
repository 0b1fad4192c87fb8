"""Load a model the first time it is needed, exactly once, even when threads race for it.

The embedded embedder and the ONNX reranker both keep their runtime session unloaded until
the first call (so ``--help``, ``list`` and a server that is never asked stay fast), and the
MCP server may call them from several worker threads at once.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import Any


class LoadsOnce:
    """Mixin: :meth:`_ensure_loaded` runs the subclass's ``_load`` once, under a lock.

    ``_load`` must set ``_session`` to something other than None when it succeeds; a failed
    load leaves it None, so the next call tries again (and reports the error again).
    """

    _session: Any = None
    _lock: threading.Lock

    def _ensure_loaded(self) -> None:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._load()

    def load_in_background(self) -> None:
        """Start loading on a daemon thread and return at once, so a command that will need
        the model can do its other start-up work meanwhile. A failure is not reported here:
        the session stays None and the first real call loads again and raises."""

        def load() -> None:
            with contextlib.suppress(Exception):
                self._preload()

        if not self._preloaded():
            thread = threading.Thread(target=load, name="model-load", daemon=True)
            thread.start()
            # a process that ends (an error right after) while the thread is inside the model
            # library would abort: exit waits for the load, for a bounded time
            atexit.register(thread.join, timeout=60)

    def _preload(self) -> None:
        """What :meth:`load_in_background` loads: the session, unless a subclass says."""
        self._ensure_loaded()

    def _preloaded(self) -> bool:
        return self._session is not None

    def _load(self) -> None:
        raise NotImplementedError
