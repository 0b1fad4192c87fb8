"""Which library a command uses: the config file it reads, the folder its database lives in,
and why that one (``status`` shows the reason).

The first rule that applies wins:

1. ``--config FILE``: that file (a missing file is an error, never an empty library).
2. ``--library DIR``: the library folder DIR (its ``config.toml`` if it has one, marked or
   not: a folder named explicitly is taken at its word, and a foreign file fails on its
   first unknown key). ``--library FILE`` names the database itself when FILE is not a
   folder (nor written with a slash at the end) and either ends in ``.db``, ``.sqlite`` or
   ``.sqlite3`` or is an SQLite file:
   that file is the library, whether it exists yet or not, with the settings of the marked
   ``config.toml`` beside it, if there is one.
3. ``GRIMOIRE_BEHOLDER_CONFIG``: like ``--config``.
4. ``GRIMOIRE_BEHOLDER_LIBRARY``: like ``--library``.
5. The nearest *library folder* from the working directory upwards, stopping at the home
   folder (or the filesystem root outside it, passing over folders and files another user
   owns), as git finds its repository.
6. The per-user library: the database in the platform's user data folder
   (``~/.local/share/grimoire-beholder`` on Linux) and an optional ``config.toml`` in its user
   config folder (``~/.config/grimoire-beholder``).

A folder is a library folder when it holds a ``config.toml`` with a ``[grimoire-beholder]``
table (a line ``[grimoire-beholder]`` above our keys). ``config.toml`` is a common name
(Hugo sites, Cargo, many tools), so the file must say it is ours: another tool's config is
never read. Files named by ``--config`` or the environment may also keep the keys at the top.

Nothing here creates anything; :func:`prepare_new_library` does, and only ``ingest`` calls it
(through ``Library.open(create=True)``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grimoire_beholder import portable
from grimoire_beholder.errors import ConfigError, StorageError

APP_NAME = "grimoire-beholder"
CONFIG_ENV = "GRIMOIRE_BEHOLDER_CONFIG"
LIBRARY_ENV = "GRIMOIRE_BEHOLDER_LIBRARY"
CONFIG_FILENAME = "config.toml"
MARKER_TABLE = "grimoire-beholder"

# Why a library was chosen: the first word is the kind (flag, environment, folder, user).
BY_CONFIG_FLAG = "flag --config"
BY_LIBRARY_FLAG = "flag --library"
BY_CONFIG_ENV = f"environment {CONFIG_ENV}"
BY_LIBRARY_ENV = f"environment {LIBRARY_ENV}"
BY_FOLDER = "folder (nearest library folder above the working directory)"
BY_USER_DEFAULT = "user default (no library folder above the working directory)"

_MARKER_LINE = re.compile(r'^[ \t]*\[[ \t]*("?)grimoire-beholder\1[ \t]*\][ \t]*(#.*)?$',
                          re.MULTILINE)
NEW_LIBRARY_CONFIG = """\
# A grimoire-beholder library: its books are in book.db beside this file. Every key is
# optional (see "Configuration" in the README); the table line marks this folder as a library.
[grimoire-beholder]
"""


class Placed(Protocol):
    """What the helpers below read of a loaded ``config.Config`` (which imports this module)."""

    @property
    def database_path(self) -> Path: ...
    @property
    def source(self) -> str | None: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def library_file(self) -> bool: ...


@dataclass(frozen=True)
class Location:
    """Where a library is: the config file read (None: built-in defaults), the folder a
    relative ``db_path`` resolves against, and which rule chose it."""

    config_file: Path | None
    folder: Path
    origin: str
    url: str | None = None  # a library in a server database (``postgresql://…``)
    file: Path | None = None  # a database file named by ``--library``, not its folder


SERVER_URL_SCHEMES = ("postgresql://", "postgres://")
# ``scheme://`` (two letters at least: ``C://x`` is a Windows path); schemes ignore case.
_URL = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]+)://")
_SECRET_PARAMS = ("password", "sslpassword")  # libpq's URL parameters that hold secrets


def is_url(locator: str | os.PathLike[str]) -> bool:
    """Whether a ``--library``/``db_path`` value is a URL (of any scheme): never a path."""
    return isinstance(locator, str) and _URL.match(locator) is not None


def is_server_url(locator: str | os.PathLike[str]) -> bool:
    """Whether a ``--library``/``db_path`` value names a database server, not a file."""
    found = _URL.match(locator) if isinstance(locator, str) else None
    return found is not None and found.group(1).lower() + "://" in SERVER_URL_SCHEMES


def server_url(locator: str) -> str:
    """A server URL as libpq reads it: stripped, its scheme in lower case."""
    scheme, _, rest = locator.strip().partition("://")
    return f"{scheme.lower()}://{rest}"


def _split(url: str) -> tuple[str, str | None, str, str]:
    """``scheme://``, the password as typed (None: none), the rest up to the query, the
    query. The password runs from the user name's ``:`` to the *last* ``@`` of the URL, so a
    raw ``@`` or ``/`` typed in a password stays inside it (libpq would cut it at the first)."""
    scheme, sep, rest = url.partition("://")
    colon, at = rest.find(":"), rest.rfind("@")
    password = None
    if 0 <= colon < at and "@" not in rest[:colon]:
        password = rest[colon + 1:at]
        rest = rest[:colon + 1] + rest[at:]
    path, mark, query = rest.partition("?")
    return scheme + sep, password, path, mark + query


def _query_secrets(query: str) -> list[str]:
    from urllib.parse import unquote

    return [value for key, _, value in (p.partition("=") for p in query[1:].split("&"))
            if unquote(key).strip().lower() in _SECRET_PARAMS]


def redacted(url: str) -> str:
    """A server URL without its password (in the user part or a ``password=`` /
    ``sslpassword=`` parameter), for messages, ``status`` and ``--json``."""
    from urllib.parse import unquote

    scheme, password, path, query = _split(url)
    if password is not None:
        path = path.replace(":@", ":***@", 1)
    if query:
        query = "?" + "&".join(
            f"{key}=***" if unquote(key).strip().lower() in _SECRET_PARAMS else f"{key}{eq}{v}"
            for key, eq, v in (p.partition("=") for p in query[1:].split("&")))
    return scheme + path + query


def url_secrets(url: str) -> list[str]:
    """Every form in which the URL's secrets could be echoed (as typed and decoded)."""
    from urllib.parse import unquote

    _, password, _, query = _split(url)
    typed = [s for s in [password or "", *_query_secrets(query)] if s]
    return sorted({*typed, *(unquote(s) for s in typed)} - {""}, key=len, reverse=True)


def scrubbed(text: str, url: str) -> str:
    """``text`` (a driver's message about ``url``) with the URL's secrets hidden: each
    secret, and any quoted token that is a piece of one (libpq quotes the bit it could not
    parse, which may be a password's)."""
    secrets = url_secrets(url)
    for secret in secrets:
        text = text.replace(secret, "***")
    return re.sub(r'"([^"]+)"', lambda m: '"***"' if any(
        m.group(1) in s or s in m.group(1) for s in secrets) else m.group(0), text)


def unencoded_password(url: str) -> str | None:
    """Why libpq would misread the URL's password, or None: a raw ``@`` or ``/`` in it
    (libpq ends the user part at the first of them, taking the rest for the host) or a
    ``%`` that starts no ``%XX`` escape."""
    password = _split(url)[1]
    if password is None:
        return None
    for char, name in (("@", "%40"), ("/", "%2F")):
        if char in password:
            return f"a raw '{char}' (write it as {name})"
    if re.search(r"%(?![0-9A-Fa-f]{2})", password):
        return "a '%' that is not a %XX escape (write it as %25)"
    return None


def is_library_config(path: Path) -> bool:
    """Whether ``path`` is a ``config.toml`` that marks its folder as a library.

    A text check, not a TOML parse: a marked file with a syntax error is still ours, so its
    error is reported instead of the folder being silently passed over.
    """
    try:
        return _MARKER_LINE.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def user_library_folder() -> Path:
    """The per-user library's folder (its database lives here)."""
    import platformdirs

    return platformdirs.user_data_path(APP_NAME, appauthor=False).resolve()


def _is_user_library(folder: Path) -> bool:
    """Whether ``folder`` is the per-user library's (its name is checked first: importing
    platformdirs is the slow part, and a command naming another folder need not pay it)."""
    return folder.name == APP_NAME and folder == user_library_folder()


def user_config_file() -> Path:
    """Where the per-user library's optional config file lives."""
    import platformdirs

    return platformdirs.user_config_path(APP_NAME, appauthor=False) / CONFIG_FILENAME


def find_library_folder(start: Path) -> Path | None:
    """The marked ``config.toml`` nearest to ``start``, walking up to the home folder (or the
    filesystem root when ``start`` is outside home).

    Outside home, a folder or file that belongs to another user is passed over (as git
    refuses a repository owned by someone else): a ``config.toml`` another user of the
    machine left in ``/tmp`` must not choose where this user's books go."""
    home = Path(os.path.expanduser("~")).resolve()
    inside_home = start == home or start.is_relative_to(home)
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file() and is_library_config(candidate) and (
                inside_home or not (portable.owned_by_someone_else(candidate)
                                    or portable.owned_by_someone_else(folder))):
            return candidate
        if folder == home:
            return None
    return None


def _working_folder() -> Path | None:
    """The working folder, or None when it has been deleted under the shell (nothing to walk
    up from; the per-user library still serves)."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        return None


# ``C:\\x``, ``c:/x``, ``\\\\server\\share``: no path on a system that is not Windows, where it
# would be taken as a relative name and a library of that name made in the working folder.
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\[^\\/])")


def _not_windows_shaped(path: str | os.PathLike[str], origin: str) -> None:
    """A ConfigError for a drive-letter or UNC path named on a system that is not Windows."""
    text = str(path).strip()
    if portable.PLATFORM != "win32" and _WINDOWS_PATH.match(text):
        raise ConfigError(f"{origin} names a Windows path ({text}); on this system name a "
                          f"path like /home/…")


def _not_blank(path: str | os.PathLike[str], origin: str) -> None:
    """A ConfigError for a name of spaces only: it would be a folder or file named by spaces."""
    if not str(path).strip():
        raise ConfigError(f"{origin} is blank; name a path or leave it unset")


def _config_file(path: str | os.PathLike[str], origin: str) -> Location:
    _not_blank(path, origin)
    _not_windows_shaped(path, origin)
    file = Path(path).expanduser()
    flag = origin == BY_CONFIG_FLAG
    if file.is_dir():
        raise ConfigError(f"config file {file} is a folder, not a file" if flag else
                          f"{CONFIG_ENV} names a folder, not a config file: {file}")
    if not file.is_file():
        raise ConfigError(f"config file not found: {file}" if flag else
                          f"{CONFIG_ENV} names a config file that does not exist: {file}")
    return Location(file, file.resolve().parent, origin)


def _library_folder(path: str | os.PathLike[str], origin: str) -> Location:
    _not_blank(path, origin)
    if is_server_url(path):  # settings from the per-user config file, if there is one
        user_config = user_config_file()
        return Location(user_config if user_config.is_file() else None, user_library_folder(),
                        origin, url=server_url(str(path)))
    if is_url(path):  # never a folder named after a URL (and its password)
        raise ConfigError(f"{origin.split()[-1]} names a URL ({redacted(str(path).strip())}); "
                          "a library is a folder or a postgresql:// URL")
    _not_windows_shaped(path, origin)
    folder = Path(path).expanduser().resolve()
    as_folder = str(path).rstrip().endswith(("/", os.sep))  # ``x.db/`` says it is a folder
    if not as_folder and _is_database_file(folder):  # the file itself, there yet or not
        beside = folder.parent / CONFIG_FILENAME
        return Location(beside if is_library_config(beside) else None, folder.parent, origin,
                        file=folder)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{origin.split()[-1]} names {folder}, a file that is neither a "
                          f"library folder nor an SQLite database (.db, .sqlite, .sqlite3)")
    if _is_user_library(folder):  # named explicitly, it is still the per-user library
        user_config = user_config_file()
        return Location(user_config if user_config.is_file() else None, folder, origin)
    file = folder / CONFIG_FILENAME  # named explicitly: read even without the marker table
    return Location(file if file.is_file() else None, folder, origin)


DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_SQLITE_HEADER = b"SQLite format 3\x00"


def _is_database_file(path: Path) -> bool:
    """Whether ``--library path`` names a database file rather than a folder: not a folder,
    and a name ending in a database suffix or (an existing file) SQLite's header."""
    if path.is_dir():
        return False
    if path.suffix.lower() in DATABASE_SUFFIXES:
        return True
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:  # not there, or not readable: a folder to be, or the storage's error
        return False


def locate(config_path: str | os.PathLike[str] | None = None,
           library: str | os.PathLike[str] | None = None) -> Location:
    """The library to use (see the module docstring for the order). Touches no file."""
    if config_path is not None and library is not None:
        raise ConfigError("give --config or --library, not both")
    if config_path is not None:
        return _config_file(config_path, BY_CONFIG_FLAG)
    if library is not None:
        return _library_folder(library, BY_LIBRARY_FLAG)
    if os.environ.get(CONFIG_ENV):
        return _config_file(os.environ[CONFIG_ENV], BY_CONFIG_ENV)
    if os.environ.get(LIBRARY_ENV):
        return _library_folder(os.environ[LIBRARY_ENV], BY_LIBRARY_ENV)
    working = _working_folder()
    found = find_library_folder(working) if working is not None else None
    if found is not None:
        return Location(found, found.resolve().parent, BY_FOLDER)
    user_config = user_config_file()
    return Location(user_config if user_config.is_file() else None, user_library_folder(),
                    BY_USER_DEFAULT)


def missing_library(config: Placed, *, empty: bool = False) -> StorageError:
    """The one-line error for a library whose database does not exist yet (or is an
    ``empty`` file, which ``ingest`` makes the library): the path looked at, why there, and
    the command that creates it."""
    create = "grimoire-beholder ingest FILE"
    if config.origin == BY_LIBRARY_FLAG:
        create += f" --library {config.database_path if config.library_file else config.base_dir}"
    elif config.origin == BY_CONFIG_FLAG and config.source:
        create += f" --config {config.source}"
    working = _working_folder() or "the working folder (deleted)"
    why = {BY_USER_DEFAULT: f"the per-user library; no library folder in {working} or above",
           BY_FOLDER: f"from {config.source}"}.get(config.origin, f"chosen by {config.origin}")
    what = (f"{config.database_path} is an empty file, not a library yet" if empty else
            f"no library database at {config.database_path}")
    return StorageError(f"{what} ({why}); create it with `{create}`")


def prepare_new_library(config: Placed) -> None:
    """Make the folder for a library about to be created.

    The per-user library and a ``--library``/``GRIMOIRE_BEHOLDER_LIBRARY`` folder are created
    with their parents; a new library folder (other than the per-user one, whose config lives
    in the user config folder) also gets a marked ``config.toml``, so commands run inside it
    later find it. A database named by a config file must go in a folder that
    exists (a typo in ``db_path`` must not scatter folders). A database file named by
    ``--library`` gets its folders but no ``config.toml``: the folder was not named a library,
    and its marker would point later commands at a ``book.db`` beside the file.
    """
    if config.origin not in (BY_USER_DEFAULT, BY_LIBRARY_FLAG, BY_LIBRARY_ENV):
        return
    folder = Path(config.base_dir)
    try:
        config.database_path.parent.mkdir(parents=True, exist_ok=True)
        marker = folder / CONFIG_FILENAME
        if (config.source is None and not config.library_file and not marker.exists()
                and not _is_user_library(folder)):
            marker.write_text(NEW_LIBRARY_CONFIG, encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot create the library folder {folder}: {exc}") from exc


def file_identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` is now — its device and inode (file index on Windows) — or None
    when nothing is there: a long-running server compares it with the file it opened, since
    an open connection goes on reading a library file deleted or replaced under it."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
