"""The one place for what differs between Linux, macOS and Windows.

Every other module uses these functions instead of a POSIX-only (or Windows-only) call, so
no module imports ``fcntl``, calls ``os.pread``/``os.preadv``/``os.pwrite``, or reads
``st_uid`` on a path that Windows takes. Locks are ``filelock``'s (``flock`` on Unix,
``LockFileEx`` on Windows); where neither primitive exists, its ``SoftFileLock`` (a marker
file whose dead owner is recovered) stands in. Imports nothing heavy: ``filelock`` is
imported on first lock.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import sys
import unicodedata
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath, PureWindowsPath

from grimoire_beholder.errors import StorageError

# Opened without truncating and, where the OS can, without following a link in the last
# component: a lock file must never clobber a file it happens to be or point to.
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# The platform whose conventions apply where a path is only a convention (where a client
# keeps its config): tests set it to "darwin" or "win32" to check those places here.
PLATFORM = sys.platform
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@contextmanager
def exclusive(lock_path: Path, *, owner: str = "") -> Iterator[bool]:
    """Hold an exclusive lock on ``lock_path`` for the block, without waiting: yields True
    when held, False when another process holds it. The lock dies with its process.

    The file is created if missing and never truncated; ``owner`` (a pid) is written into it
    once held, for :func:`lock_owner`. StorageError when the file cannot be opened (a link,
    a folder, no permission)."""
    try:
        fd = os.open(lock_path, _LOCK_FLAGS, 0o644)
    except OSError as exc:
        reason = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise StorageError(f"cannot open lock file {lock_path}: {reason}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a named pipe or a device put there
            raise StorageError(f"cannot use lock file {lock_path}: it is not a regular file; "
                               "remove it (it is made again)")
        import filelock

        try:
            held = filelock.lock_descriptor(fd, blocking=False)
        except OSError as exc:
            if exc.errno != errno.ENOSYS:
                raise StorageError(f"cannot lock {lock_path}: {exc.strerror}") from exc
            with _soft_lock(lock_path) as soft:
                yield soft
            return
        if not held:
            yield False
            return
        try:
            if owner:
                _write_owner(fd, owner)
            yield True
        finally:
            filelock.unlock_descriptor(fd)
    finally:
        os.close(fd)


@contextmanager
def _soft_lock(lock_path: Path) -> Iterator[bool]:
    """Where no native lock exists: filelock's marker-file lock beside ``lock_path``."""
    import filelock

    soft = filelock.SoftFileLock(str(lock_path) + ".soft", blocking=False)
    try:
        soft.acquire()
    except filelock.Timeout:
        yield False
        return
    try:
        yield True
    finally:
        soft.release()


def _write_owner(fd: int, owner: str) -> None:
    """Write ``owner`` after byte 0 (the byte Windows locks, which no other process may read)."""
    os.ftruncate(fd, 1)
    os.lseek(fd, 1, os.SEEK_SET)
    os.write(fd, owner.encode())


def lock_owner(lock_path: Path) -> str:
    """What :func:`exclusive` wrote as the holder of ``lock_path``, or "another process"."""
    try:
        with open(lock_path, "rb") as handle:
            handle.seek(1)
            text = handle.read(32).decode(errors="replace").strip()
    except OSError:
        text = ""
    return text or "another process"


def open_without_links(path: Path) -> int:
    """A read-only descriptor of the file at the absolute, already resolved ``path``,
    reached without following any link (OSError ELOOP when a part of it is one now).

    Each folder on the way is opened relative to the one before with ``O_NOFOLLOW``, so a
    link swapped in between a check and the open cannot redirect it. Where ``open`` takes
    no ``dir_fd`` (Windows), the file is opened and then must be the one its path names
    with no link on the way (``realpath`` and the file identity agree)."""
    flags = os.O_RDONLY | NONBLOCK | CLOEXEC | getattr(os, "O_BINARY", 0)
    nofollow, directory = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_DIRECTORY", 0)
    if os.open in os.supports_dir_fd and nofollow and directory:
        parts = Path(path).parts
        fd = os.open(parts[0], os.O_RDONLY | directory | CLOEXEC)
        try:
            for i, part in enumerate(parts[1:-1], start=1):
                try:
                    inner = os.open(part, os.O_RDONLY | directory | nofollow | CLOEXEC,
                                    dir_fd=fd)
                except NotADirectoryError:  # what Linux says of a link opened this way
                    if os.path.islink(os.path.join(*parts[:i + 1])):
                        raise OSError(errno.ELOOP, "a link on the way", str(path)) from None
                    raise
                os.close(fd)
                fd = inner
            return os.open(parts[-1], flags | nofollow, dir_fd=fd)
        finally:
            os.close(fd)
    fd = os.open(path, flags)
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        if not same or os.path.realpath(path) != os.path.normpath(path):
            raise OSError(errno.ELOOP, "a link on the way", str(path))
    except OSError:
        os.close(fd)
        raise
    return fd


class OffsetReader:
    """A file whose bytes are read at given offsets straight into the caller's buffers:
    ``os.preadv`` on one descriptor opened on first use and closed with the reader (no
    seek, no copy), or where there is no ``preadv`` (Windows) a handle opened per call,
    seek and ``readinto``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None

    def read_into(self, parts: Iterable[tuple[int, memoryview]]) -> bool:
        """Fill each (offset, buffer) from the file; False when the file ends first."""
        preadv = getattr(os, "preadv", None)
        if preadv is not None:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | CLOEXEC)
                weakref.finalize(self, os.close, self._fd)
            fd, wanted = self._fd, list(parts)
            return ([preadv(fd, [view], at) for at, view in wanted]
                    == [len(view) for _, view in wanted])
        with open(self.path, "rb", buffering=0) as handle:
            for at, view in parts:
                handle.seek(at)
                if handle.readinto(view) != len(view):
                    return False
        return True


def cpu_count() -> int:
    """CPUs this process may actually run on (affinity-aware where the OS says), at least 1."""
    if sys.platform == "linux":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def on_read_only_mount(folder: Path) -> bool:
    """Whether ``folder`` is on a read-only file system (never known on Windows: False)."""
    if sys.platform == "win32":
        return False
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def owned_by_someone_else(path: Path) -> bool:
    """Whether ``path`` belongs to another user than this process's (as git asks before
    trusting a repository). On Windows, where files have no numeric owner, False."""
    if sys.platform == "win32":
        return False
    try:
        return os.stat(path).st_uid != os.geteuid()
    except OSError:
        return True


def fsync_folder(path: Path) -> None:
    """Make a rename in ``path`` durable (Windows cannot open a folder: NTFS journals it)."""
    if sys.platform == "win32":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def kill_self() -> None:
    """End this process at once, as a crash would (SIGKILL; TerminateProcess on Windows)."""
    if sys.platform == "win32":
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        os.kill(os.getpid(), signal.SIGKILL)


def sqlite_temp_folder() -> Path | None:
    """The folder SQLite keeps its temporary files in: on Unix the first writable folder of
    ``SQLITE_TMPDIR``, ``TMPDIR``, ``/var/tmp``, ``/usr/tmp``, ``/tmp`` (SQLite's own order);
    on Windows the system's temporary folder (``GetTempPath``: TMP, TEMP, …)."""
    if sys.platform == "win32":
        import tempfile

        return Path(tempfile.gettempdir())
    for candidate in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"),
                      "/var/tmp", "/usr/tmp", "/tmp"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate)
    return None


def free_bytes(folder: Path) -> int | None:
    """Bytes free for this user on the disk holding ``folder`` (None when unknown)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def same_disk(one: Path, other: Path | None) -> bool:
    """Whether two existing folders lie on one file system (unknown: True)."""
    try:
        return other is None or os.stat(one).st_dev == os.stat(other).st_dev
    except OSError:
        return True


def case_insensitive(folder: Path) -> bool:
    """Whether names in ``folder`` compare without case (macOS's and Windows's default): the
    folder is looked up by its own path with the case of its letters swapped."""
    swapped = str(folder).swapcase()
    if swapped == str(folder):
        return sys.platform in ("win32", "darwin")
    try:
        return os.path.samefile(folder, swapped)
    except OSError:
        return _looked_up_as(folder.parent, folder.name, folder.name.swapcase())


def _looked_up_as(folder: Path, name: str, other: str) -> bool:
    """Whether the entry ``name`` of ``folder`` is also found as ``other`` (another spelling)
    although the folder lists no entry by that spelling: the file system looked it up
    without telling the two apart. (File identity alone cannot tell: FUSE volumes number a
    file anew for each spelling.)"""
    if other == name:
        return False
    try:
        return os.path.lexists(folder / other) and other not in os.listdir(folder)
    except (OSError, ValueError):
        return False


def _upper(name: str) -> str:
    """Each character's simple upper case (as NTFS's and APFS's tables: ``ß`` stays)."""
    return "".join(c if len(u := c.upper()) != 1 else u for c in name)


def _nfd(name: str) -> str:
    return unicodedata.normalize("NFD", name)


@dataclass(frozen=True)
class FolderNames:
    """A folder's path and how its file systems compare names, part by part: for each part
    after the anchor, whether the folder holding it looks names up without case and without
    Unicode normalization form (NFC ``é`` = NFD ``é``, as APFS does).

    :meth:`probe` asks the real volumes; a pure path with chosen ``folds`` (e.g. a
    ``PureWindowsPath``) gives the same comparison for a system this one is not. Drive
    letters always compare without case. A part with no letter to swap (``2024``) compares
    exactly, which is the same thing."""

    path: PurePath
    folds: tuple[tuple[bool, bool], ...]

    @classmethod
    def probe(cls, folder: Path) -> FolderNames:
        parts = folder.parts
        folds = []
        for i, name in enumerate(parts[1:], start=1):
            holder = Path(*parts[:i])
            other = _nfd(name) if _nfd(name) != name else unicodedata.normalize("NFC", name)
            folds.append((_looked_up_as(holder, name, name.swapcase()),
                          _looked_up_as(holder, name, other)))
        return cls(folder, tuple(folds))

    def holds(self, path: PurePath) -> bool:
        """Whether ``path`` (resolved, of the same flavour) is this folder or inside it."""
        mine, theirs = self.path.parts, path.parts
        if len(theirs) < len(mine) or not mine:
            return False
        windows = isinstance(self.path, PureWindowsPath)
        if (theirs[0].upper() if windows else theirs[0]) != \
                (mine[0].upper() if windows else mine[0]):
            return False
        return all(_key(a, fold) == _key(b, fold)
                   for a, b, fold in zip(theirs[1:], mine[1:], self.folds, strict=False))


def _key(name: str, fold: tuple[bool, bool]) -> str:
    case, form = fold
    name = unicodedata.normalize("NFC", name) if form else name
    return _upper(name) if case else name
