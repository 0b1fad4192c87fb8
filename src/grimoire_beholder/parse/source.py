"""The file behind a path: the one check it passes before anything opens it, and the one way
every parser reads its bytes.

A path can name something that is not a file: a named pipe (``open`` blocks until a writer
comes, which may be never), a device (``/dev/zero`` and ``/dev/urandom`` never end), a
socket or a folder — directly or through links. Links are followed, so a link to a book is
fine; anything but a readable regular file is refused with a one-line
:class:`InputFileError` naming the path (and where a link leads). Ingest runs
:func:`stat_source` before hashing a file. Parsers read through :func:`read_source`, which
opens without blocking, checks the *opened* descriptor (no race with a rename in between)
and reads no more than the size it reported, however the file grows meanwhile.
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from grimoire_beholder import portable
from grimoire_beholder.errors import InputFileError, NoTextError

_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
_LOOP = "a link loop, not a file"
_NOW_A_LINK = "it, or a folder on its way, is now a link; not read (links are not followed here)"


def _named(path: Path) -> str:
    """The path, and where it leads when it is a link (said in every refusal)."""
    if path.is_symlink():
        return f"{path} (a link to {os.path.realpath(path)})"
    return str(path)


def _refusal(path: Path, mode: int) -> InputFileError | None:
    """Why a file of this mode cannot be a book, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return InputFileError(f"{_named(path)}: is a directory, not a file")
    kind = next((name for test, name in _KINDS if test(mode)), "something other than a file")
    return InputFileError(f"{_named(path)}: is {kind}, not a regular file")


def unstorable_name(path: Path | str) -> str | None:
    """Why the library cannot keep ``path`` (a name that is not valid text in the file
    system's encoding, e.g. Latin-1 ``caf\\xe9.txt`` on a UTF-8 system: it could be neither
    stored nor cited), or None."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        return (f"{shown}: the file name is not valid {sys.getfilesystemencoding()} text; "
                "rename the file to add it")
    return None


def stat_source(path: Path) -> os.stat_result:
    """The stat of the file ``path`` leads to; InputFileError unless it can be read (or
    its name cannot be kept, see unstorable_name)."""
    if (unstorable := unstorable_name(path)) is not None:
        raise InputFileError(unstorable)
    try:
        st = Path(path).resolve(strict=True).stat()
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except RuntimeError:  # Python 3.11 reports a link loop this way; later ones as OSError
        raise InputFileError(f"{path}: {_LOOP}") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if (refused := _refusal(Path(path), st.st_mode)) is not None:
        raise refused
    if not os.access(path, os.R_OK):
        raise InputFileError(f"{path}: permission denied")
    return st


_NO_LINKS: contextvars.ContextVar[bool] = contextvars.ContextVar("no_links", default=False)


@contextmanager
def links_not_followed() -> Iterator[None]:
    """Within the block, read_source opens a file only through no link at all (its path
    must be the real one the caller checked): a link swapped in after the check cannot
    make it read a file elsewhere (the MCP write tools, confined to allowed folders)."""
    token = _NO_LINKS.set(True)
    try:
        yield
    finally:
        _NO_LINKS.reset(token)


def read_source(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most its size (and at
    most ``limit`` bytes when given: the head of a file, to judge it before reading it whole).

    Raises InputFileError, naming the file, for anything missing, unreadable, empty or not
    a regular file — before a single byte is read from it.
    """
    no_links = _NO_LINKS.get()
    try:
        if no_links:
            fd = portable.open_without_links(path)
        else:
            fd = os.open(path, os.O_RDONLY | portable.NONBLOCK | portable.CLOEXEC)
    except FileNotFoundError:
        raise InputFileError(f"{_named(path)}: file not found") from None
    except OSError as exc:
        reason = (_NOW_A_LINK if no_links else _LOOP) if exc.errno == errno.ELOOP else (
            f"cannot read file ({exc.strerror})")
        raise InputFileError(f"{path}: {reason}") from None
    try:
        info = os.fstat(fd)
        if (refused := _refusal(path, info.st_mode)) is not None:
            raise refused
        if info.st_size == 0:
            raise NoTextError(f"{_named(path)}: file is empty (0 bytes)")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            try:
                return fh.read(info.st_size if limit is None else min(limit, info.st_size))
            except OSError as exc:
                raise InputFileError(
                    f"{_named(path)}: cannot read file ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
