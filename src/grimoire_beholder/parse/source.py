"""The one check a path passes before anything opens it: a readable regular file.

Links are resolved first, so a link to a book is fine, while a link loop, a dangling link, a
folder, a named pipe (opening one would block forever), a device or a socket is refused with
a one-line :class:`InputFileError` naming the path. Ingest runs it before hashing a file and
every parser entry point before reading one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import InputFileError

_KINDS = ((stat.S_ISDIR, "is a directory, not a file"),
          (stat.S_ISFIFO, "is a named pipe, not a regular file"),
          (stat.S_ISSOCK, "is a socket, not a regular file"),
          (stat.S_ISCHR, "is a device, not a regular file"),
          (stat.S_ISBLK, "is a device, not a regular file"))


def stat_source(path: Path) -> os.stat_result:
    """The stat of the file ``path`` leads to; InputFileError unless it can be read."""
    try:
        st = Path(path).resolve(strict=True).stat()
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except RuntimeError:  # Python 3.11 reports a link loop this way; later ones as OSError
        raise InputFileError(f"{path}: a link loop, not a file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    for is_kind, reason in _KINDS:
        if is_kind(st.st_mode):
            raise InputFileError(f"{path}: {reason}")
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(f"{path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"{path}: permission denied")
    return st
