"""Setting up AI assistants (Claude Desktop, Claude Code, Codex, Cursor, VS Code): the MCP
server entry each client needs, and merging it into the
client's own config file (``grimoire-beholder mcp-config CLIENT [--write]``).

The entry always names absolute paths — the installed ``grimoire-beholder`` executable and the
library — because a client starts the server with its own environment: Claude Desktop on
macOS does not see the shell's PATH, so a bare ``uv`` or ``grimoire-beholder`` fails there.

Writing is careful with files that belong to someone else: the file is parsed first (a file
that does not parse is left alone), copied to a timestamped backup, changed only under our
server's name, checked by parsing the result, and replaced atomically. Writing the same entry
twice changes nothing. Codex's TOML is edited as text, so its comments and layout survive;
so is a VS Code ``mcp.json`` that holds comments or trailing commas (JSONC, which VS Code
reads), through ``cli/jsonc_edit.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grimoire_beholder import portable
from grimoire_beholder.cli import jsonc_edit
from grimoire_beholder.config import Config
from grimoire_beholder.errors import ConfigError, GrimoireError
from grimoire_beholder.locate import BY_CONFIG_ENV, BY_CONFIG_FLAG
from grimoire_beholder.mcp_server.allowed import Upkeep

CLIENTS = ("claude-desktop", "claude-code", "codex", "cursor", "vscode")
# The object of servers in each JSON client's file (VS Code's mcp.json has its own shape).
SERVERS_KEY = {"vscode": "servers"}
TYPED_ENTRY = ("claude-code", "vscode")  # clients whose entry names its transport
JSONC_CLIENTS = ("vscode",)  # clients that read comments and trailing commas in their file
SERVER_NAME = "grimoire-beholder"
EXECUTABLE = "grimoire-beholder"


def executable() -> list[str]:
    """The absolute command that starts this installation's CLI.

    The running script when started as ``grimoire-beholder``, else the one beside this Python
    (the same environment's ``bin``), else the one on PATH, else this Python with
    ``-m grimoire_beholder``.
    """
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    found = shutil.which(EXECUTABLE)
    candidates = [argv0 if argv0 is not None and argv0.stem == EXECUTABLE else None,
                  Path(sys.executable).with_name(EXECUTABLE), Path(found) if found else None]
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            return [str(candidate.resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "grimoire_beholder"]


def in_a_cache(command: str) -> bool:
    """Whether the environment of ``command`` (``ENV/bin/grimoire-beholder``) lies in a cache
    folder (one tagged with ``CACHEDIR.TAG``, as uv's is): ``uvx`` runs the tool from there,
    and the next cache clean breaks an entry naming it. (uv also tags every environment
    itself, so the search starts above it.)"""
    return any((folder / "CACHEDIR.TAG").is_file() for folder in Path(command).parents[2:])


def server_args(config: Config) -> list[str]:
    """``serve-mcp`` pinned to this library: its config file when one was named, else its
    folder (which also finds the per-user library's config)."""
    if config.origin in (BY_CONFIG_FLAG, BY_CONFIG_ENV) and config.source:
        return ["serve-mcp", "--config", str(Path(config.source).resolve())]
    if config.database_url:  # a library in PostgreSQL: its URL, as it was named
        return ["serve-mcp", "--library", config.database_url]
    if config.library_file:  # ``--library FILE.db``: that file, not its folder
        return ["serve-mcp", "--library", str(config.database_path)]
    return ["serve-mcp", "--library", str(Path(config.base_dir).resolve())]


@dataclass(frozen=True)
class ClientSetup:
    """One client's server entry, where its config file is, and how to show it."""

    client: str
    name: str
    entry: dict[str, Any]
    path: Path

    def snippet(self) -> str:
        """What to paste into the client's config file."""
        if self.client == "codex":
            return _toml_table(self.name, self.entry)
        key = SERVERS_KEY.get(self.client, "mcpServers")
        return json.dumps({key: {self.name: self.entry}}, indent=2, ensure_ascii=False)


def client_config_path(client: str, platform: str | None = None) -> Path:
    """The client's own config file, in the place that client reads it from on ``platform``
    (``sys.platform`` by default; ``portable.PLATFORM`` is the seam tests set):

    - Claude Desktop: ``~/Library/Application Support/Claude/claude_desktop_config.json`` on
      macOS, ``%APPDATA%\\Claude\\claude_desktop_config.json`` on Windows, and the XDG
      config folder elsewhere (``~/.config/Claude``; there is no official Linux build).
    - Claude Code: ``~/.claude.json`` (user scope, as ``claude mcp add --scope user``).
    - Codex: ``$CODEX_HOME/config.toml``, default ``~/.codex/config.toml``.
    - Cursor: ``~/.cursor/mcp.json`` (global scope: every project sees it).
    - VS Code: the user profile's ``mcp.json`` (MCP: Open User Configuration):
      ``~/Library/Application Support/Code/User`` on macOS, ``%APPDATA%\\Code\\User`` on
      Windows, ``~/.config/Code/User`` elsewhere.

    ``~`` is the user's home: ``%USERPROFILE%`` on Windows, ``$HOME`` elsewhere."""
    platform = platform or portable.PLATFORM
    home = _home(platform)
    if client == "claude-desktop":
        return _app_config(platform, home) / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return _app_config(platform, home) / "Code" / "User" / "mcp.json"
    raise ConfigError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")


def _home(platform: str) -> Path:
    if platform == "win32" and os.environ.get("USERPROFILE"):
        return Path(os.environ["USERPROFILE"])
    return Path(os.path.expanduser("~"))


def _app_config(platform: str, home: Path) -> Path:
    """Where desktop apps keep their settings: Application Support, roaming AppData, or the
    XDG config folder."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else home / ".config"


def client_setup(client: str, config: Config, name: str = SERVER_NAME,
                 upkeep: Upkeep | None = None) -> ClientSetup:
    """The server entry for ``client`` serving the library ``config`` describes, with the
    upkeep tools ``upkeep`` allows (none by default: a read-only server)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ConfigError(f"server name {name!r} may hold only letters, digits, '-' and '_'")
    path = client_config_path(client)
    command, *prefix = executable()
    upkeep_args = upkeep.serve_args() if upkeep is not None else []
    entry: dict[str, Any] = {"command": command,
                             "args": [*prefix, *server_args(config), *upkeep_args]}
    if client in TYPED_ENTRY:
        entry = {"type": "stdio", **entry}
    return ClientSetup(client, name, entry, path)


def write_setup(setup: ClientSetup) -> tuple[str, Path | None]:
    """Merge the entry into the client's file: ``("added"|"replaced"|"unchanged", backup)``.

    A symlinked file (dotfiles kept in a repository) is written through the link, which stays.
    """
    path = setup.path.resolve()
    raw = _read(path)
    old_text, bom, eol = _plain(raw)
    merge = _merge_toml if setup.client == "codex" else _merge_json
    new_text, action = merge(old_text, setup, path)
    if action == "unchanged":
        return action, None
    new_text = bom + new_text.replace("\n", eol)  # the file's own BOM and line endings
    backup = None
    try:
        if old_text is not None:
            backup = _new_backup_path(setup.path)
            shutil.copy2(path, backup)
        _replace_atomically(path, new_text)
    except OSError as exc:  # a read-only HOME or folder, a full disk: the file is as it was
        raise GrimoireError(f"cannot write {path} ({exc.strerror or exc} in {path.parent}); "
                            "it is left as it was — paste the entry `mcp-config` prints "
                            "without --write") from exc
    return action, backup


def _new_backup_path(path: Path) -> Path:
    """A timestamped name beside ``path`` that no earlier backup holds (two writes in one
    second must not overwrite the backup of the original file)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, number = path.with_name(f"{path.name}.bak-{stamp}"), 1
    while backup.exists():
        number += 1
        backup = path.with_name(f"{path.name}.bak-{stamp}-{number}")
    return backup


def _plain(raw: str | None) -> tuple[str | None, str, str]:
    """The text of a file as read (line endings untouched) with its UTF-8 byte order mark
    (a Windows editor's) and line endings split off: ``(text with \\n, bom, eol)``, so a
    write gives back the BOM and CRLF (or CR) lines it found — a new file gets the
    platform's — instead of a file whose every line changed."""
    if raw is None:
        return None, "", os.linesep
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    crlf, lf = raw.count("\r\n"), raw.count("\n")  # mixed: the most lines' ending
    eol = ("\r\n" if crlf and 2 * crlf >= lf else "\n" if lf else "\r" if "\r" in raw
           else os.linesep)
    text = raw[len(bom):].replace("\r\n", "\n").replace("\r", "\n")
    return text, bom, eol


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _replace_atomically(path: Path, text: str) -> None:
    """Write ``text`` beside ``path`` and rename it over; keep the file's permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _merge_json(text: str | None, setup: ClientSetup, path: Path) -> tuple[str, str]:
    commented = False
    if not (text and text.strip()):
        data: Any = {}  # an empty file (made with `touch`) is an empty config
    elif setup.client in JSONC_CLIENTS:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data, commented = _parsed(text, path, jsonc_edit.loads, jsonc_edit.JsoncError), True
    else:
        data = _parsed(text, path, json.loads, json.JSONDecodeError)
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; left as it is")
    key = SERVERS_KEY.get(setup.client, "mcpServers")
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"'{key}' in {path} is not an object; left as it is")
    previous = servers.get(setup.name)
    if previous == setup.entry:
        return text or "", "unchanged"
    servers[setup.name] = setup.entry
    action = "added" if previous is None else "replaced"
    if not commented:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n", action
    assert text is not None
    try:  # edited as text so its comments stay; the result must parse to what we meant
        new_text = jsonc_edit.set_member(text, key, setup.name, setup.entry)
        merged_safely = jsonc_edit.loads(new_text) == data
    except (jsonc_edit.JsoncError, RecursionError):
        merged_safely = False
    if not merged_safely:
        raise ConfigError(f"could not merge the entry into {path} safely (left as it is); "
                          f"add \"{setup.name}\" under \"{key}\" by hand (see mcp-config "
                          "without --write)")
    return new_text, action


def _toml_table(name: str, entry: dict[str, Any]) -> str:
    # A JSON string or array of strings is also a valid TOML basic string or array.
    if "url" in entry:  # a server over HTTP (cli/remote_configs.py): string values only
        return f"[mcp_servers.{name}]\n" + "".join(
            f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in entry.items())
    return (f"[mcp_servers.{name}]\ncommand = {json.dumps(entry['command'])}\n"
            f"args = {json.dumps(entry['args'], ensure_ascii=False)}\n")


def _merge_toml(text: str | None, setup: ClientSetup, path: Path) -> tuple[str, str]:
    text = text or ""
    before = _parsed(text, path, tomllib.loads, ValueError)  # 4,300+ digit integers too
    servers = before.get("mcp_servers", {})
    previous = servers.get(setup.name) if isinstance(servers, dict) else None
    if previous == setup.entry:
        return text, "unchanged"
    table = _toml_table(setup.name, setup.entry)
    if previous is None:
        new_text = text + ("\n" if text and not text.endswith("\n") else "") + \
            ("\n" if text.strip() else "") + table
    else:
        new_text = _replace_toml_table(text, setup.name, table, path)
    expected = {**before, "mcp_servers": {**servers, setup.name: setup.entry}}
    try:
        merged_safely = tomllib.loads(new_text) == expected
    except (ValueError, RecursionError):
        merged_safely = False
    if not merged_safely:
        raise ConfigError(f"could not merge the entry into {path} safely (left as it is); "
                          f"add [mcp_servers.{setup.name}] by hand (see mcp-config without "
                          "--write)")
    return new_text, "added" if previous is None else "replaced"


def _replace_toml_table(text: str, name: str, table: str, path: Path) -> str:
    """``text`` with the ``[mcp_servers.NAME]`` table (and its sub-tables) swapped for
    ``table``; other lines are kept byte for byte, as are the comments just above the table
    that follows ours (they describe that one)."""
    own = re.compile(rf'^\s*\[\s*mcp_servers\s*\.\s*("?){re.escape(name)}\1\s*[\].]')
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if own.match(line)]
    if not starts:
        raise ConfigError(f"{path} defines [mcp_servers.{name}] in a form mcp-config does not "
                          "edit; remove that entry and run it again")
    kept: list[str] = []
    trailing: list[str] = []  # comments and blank lines at the end of our table so far
    inside, placed = False, False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            inside = bool(own.match(line))
            if not inside:
                kept.append("".join(trailing).lstrip("\r\n"))
            elif not placed:
                kept.append(table + "\n")
                placed = True
            trailing = []
        elif inside:
            is_note = not stripped or stripped.startswith("#")
            trailing = [*trailing, line] if is_note else []
            continue
        if not inside:
            kept.append(line)
    return "".join(kept)


def _parsed(text: str, path: Path, parse: Callable[[str], Any], error: type[Exception]) -> Any:
    try:
        return parse(text)
    except RecursionError as exc:  # arrays in arrays thousands deep
        raise ConfigError(f"{path} is not valid (nested too deeply); left as it is") from exc
    except error as exc:
        raise ConfigError(f"{path} is not valid ({exc}); left as it is") from exc
