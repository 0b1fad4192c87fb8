"""A per-user disk cache of the embedded model's built ONNX graph, so a new process does not
rebuild it.

Building the graph from the safetensors weights (:func:`.bert_onnx.build_bert_graph`) costs
a few tenths of a CPU-second in every process that embeds — a cold ``query``, ``serve-mcp``,
each ``ingest`` — for the same bytes each time. The first process writes them to
the user's cache folder; later ones read them back.

* **Where:** ``GRIMOIRE_BEHOLDER_CACHE`` if set (an empty value turns the cache off; ``~``
  is the home folder, as in ``GRIMOIRE_BEHOLDER_LIBRARY``, also where no shell expands it), else
  the platform's user cache folder (``~/.cache/grimoire-beholder`` on Linux), in ``models/``.
* **Which file:** ``<variant>-<key>-<digest>.onnx``. ``key`` hashes what the graph is made
  from: the source of the modules that write it (so a new version of the builder never
  reads an old graph), the variant (float32 or int8), ``config.json``'s bytes and the weights
  file's size and modification time — the same staleness test Python applies to its
  ``.pyc`` files, without reading 45 MB of weights in every process. ``digest`` is the
  SHA-256 of the file's own bytes, checked on every read: a damaged file (truncated,
  flipped bits) is deleted and rebuilt, never run. Only a regular file is read: a symlink,
  FIFO or device under a cache name is dropped without being opened through or read. A
  whole file that is not the graph (another variant's copied under this name) passes the
  digest; its reader (``bert_onnx.load_session``) finds so and calls :func:`discard`.
* **Concurrent processes:** a writer fills a temporary file in the same folder and renames
  it into place (atomic on every platform we run on), so a reader sees a whole file or none;
  two writers write identical bytes and the last rename wins. After a write, the variant's
  other graphs unused for two weeks (a read refreshes a file's time, at most daily) and all
  but the two most recently used are deleted: an upgrade does not leave old graphs behind
  for long, and two installs side by side (each its own weights file, so its own key) do not
  evict each other's graph on every start. A temporary file older than an hour (its writer was
  killed mid-write) is deleted then too.
* **Any failure** to read or write the cache (read-only or full disk, no HOME) is silent:
  the graph is then built in memory, as before. The cache never changes a vector.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

_BUILDER_MODULES = ("bert_onnx.py", "onnx_proto.py")
ENV_VAR = "GRIMOIRE_BEHOLDER_CACHE"
_APP_NAME = "grimoire-beholder"
_DIGEST_CHARS = 32
_KEEP_OTHERS = 2  # graphs of other keys kept per variant (other installs, other versions)
_UNUSED_SECONDS = 14 * 86400  # another key's graph unused this long goes
_TOUCH_SECONDS = 86400
_STALE_PARTIAL_SECONDS = 3600  # no writer takes an hour over 45 MB
_MAX_BYTES = 1 << 30  # MiniLM's graph is ~45 MB; anything past 1 GiB is not one of ours


def cache_folder() -> Path | None:
    """The folder the graphs are cached in, or None when caching is turned off."""
    override = os.environ.get(ENV_VAR)
    if override is not None:
        return Path(override).expanduser() / "models" if override.strip() else None
    try:
        import platformdirs

        return platformdirs.user_cache_path(_APP_NAME, appauthor=False) / "models"
    except Exception:  # no home folder, or platformdirs cannot tell: build in memory
        return None


def input_key(model_dir: Path, variant: str) -> str:
    """A short hash of what the graph is built from (see the module docstring)."""
    digest = hashlib.sha256(f"{variant}\x1f".encode())
    here = Path(__file__).parent
    for module in _BUILDER_MODULES:
        digest.update((here / module).read_bytes())
    digest.update((model_dir / "config.json").read_bytes())
    weights = (model_dir / "model.safetensors").stat()
    digest.update(f"\x1f{weights.st_size}\x1f{weights.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def cached_graph(model_dir: Path, variant: str, build: Callable[[], bytes]) -> bytes:
    """The serialized graph for ``model_dir`` and ``variant``: from the cache when a whole,
    current copy is there, else ``build()`` (then stored for the next process)."""
    folder = cache_folder()
    if folder is None:
        return build()
    try:
        key = input_key(model_dir, variant)
    except OSError:
        return build()
    prefix = f"{variant}-{key}-"
    found = _read_valid(folder, prefix)
    if found is not None:
        return found
    graph = build()
    _store(folder, variant, prefix, graph)
    return graph


def discard(model_dir: Path, variant: str) -> None:
    """Delete the cached graphs of ``model_dir`` and ``variant``: whole files whose bytes
    passed the digest check but are not the graph (the caller found so loading it; the
    next :func:`cached_graph` builds it again). Silent on failure, like every cache step."""
    folder = cache_folder()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        for path in folder.glob(f"{variant}-{input_key(model_dir, variant)}-*.onnx"):
            with contextlib.suppress(OSError):
                if not path.is_dir():
                    path.unlink()


def _read_valid(folder: Path, prefix: str) -> bytes | None:
    try:
        candidates = sorted(folder.glob(prefix + "*.onnx"))
    except OSError:
        return None
    for path in candidates:
        data = _read_regular(path)
        if data is None:
            with contextlib.suppress(OSError):  # a link, FIFO or device: never ours, drop it
                if not path.is_dir():
                    path.unlink()
            continue
        if hashlib.sha256(data).hexdigest()[:_DIGEST_CHARS] == path.stem[len(prefix):]:
            _mark_used(path)
            return data
        with contextlib.suppress(OSError):  # damaged: drop it, the caller rebuilds
            path.unlink()
    return None


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of a plausible size, else None.

    The cache only ever writes regular files; a link (to /etc/passwd, a FIFO, /dev/zero), a
    FIFO or a device in its place is not opened through (``O_NOFOLLOW``), never blocks the
    open (``O_NONBLOCK``) and is not read (a FIFO would wait forever, /dev/zero never end)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        if path.is_symlink():
            return None
        handle = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
            return None
        with os.fdopen(handle, "rb") as source:
            handle = -1
            return source.read(_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        if handle >= 0:
            os.close(handle)


def _evict(folder: Path, variant: str, prefix: str) -> None:
    """Drop the variant's other graphs not used for ``_UNUSED_SECONDS``, and all but the
    ``_KEEP_OTHERS`` most recently used. Two installs of the same version (a project's
    venv and ``uvx``) have their own weights file, so their own key: deleting every other
    key made each evict the other's graph and every cold start build it again."""
    others: list[tuple[float, Path]] = []
    for path in folder.glob(f"{variant}-*.onnx"):
        if not path.name.startswith(prefix):
            with contextlib.suppress(OSError):
                others.append((path.lstat().st_mtime, path))
    others.sort(reverse=True)
    for partial in folder.glob(".partial-*.onnx"):  # left by a writer killed mid-write
        with contextlib.suppress(OSError):
            if time.time() - partial.lstat().st_mtime > _STALE_PARTIAL_SECONDS:
                partial.unlink()
    now = time.time()
    for rank, (used, path) in enumerate(others):
        if rank >= _KEEP_OTHERS or now - used > _UNUSED_SECONDS:
            with contextlib.suppress(OSError):
                path.unlink()


def _mark_used(path: Path) -> None:
    """Refresh a graph's modification time (at most daily) so eviction sees it in use."""
    with contextlib.suppress(OSError):
        if time.time() - path.stat().st_mtime > _TOUCH_SECONDS:
            os.utime(path)


def _store(folder: Path, variant: str, prefix: str, graph: bytes) -> None:
    digest = hashlib.sha256(graph).hexdigest()[:_DIGEST_CHARS]
    target = folder / f"{prefix}{digest}.onnx"
    temporary: str | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".partial-", suffix=".onnx", dir=folder)
        with os.fdopen(handle, "wb") as out:
            out.write(graph)
        os.replace(temporary, target)
        temporary = None
        _evict(folder, variant, prefix)
    except OSError:
        return  # read-only or full disk, or a file held open elsewhere: stay in memory
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
