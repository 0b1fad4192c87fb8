"""The package without POSIX-only calls, as on Windows: ``fcntl`` cannot be imported and
``os.pread``/``os.pwrite`` do not exist, from before the first import of the package (a
``sitecustomize`` on the subprocesses' path). ingest, sync, query through the persisted
index and serve-mcp (a real MCP client over stdio) must all work there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from grimoire_beholder import portable
from grimoire_beholder.ingest.lock import writer_lock
from grimoire_beholder.search import index_writer
from helpers import write_markdown_book
from mcp_helpers import cli_command, structured, write_config

BLOCKER = '''\
import importlib.abc, importlib.util, os, sys, types

# The MCP SDK's stdio module imports fcntl at its top off Windows; serve-mcp never calls
# that module (mcp_server/stdio_wire.py is its transport), so that one importer gets a
# module every use of which fails, as it would on Windows.
SDK_IMPORTER = "mcp.server.stdio"


class _Unusable(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"fcntl.{name} used")


class _Halt(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name != "fcntl":
            return None
        frame = sys._getframe(1)
        while frame and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen")):
            frame = frame.f_back
        if frame and frame.f_globals.get("__name__") == SDK_IMPORTER:
            return importlib.util.spec_from_loader(name, self)
        raise ModuleNotFoundError("import of fcntl halted", name=name)

    def create_module(self, spec):
        return _Unusable(spec.name)

    def exec_module(self, module):
        pass


sys.modules.pop("fcntl", None)
sys.meta_path.insert(0, _Halt())
for _name in ("pread", "pwrite"):
    if hasattr(os, _name):
        delattr(os, _name)
'''


def _posix_free_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, index_writer.MIN_ROWS_ENV: "1"}


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*cli_command(), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_ingest_sync_query_serve_without_posix_only_calls(tmp_path: Path) -> None:
    env = _posix_free_env(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", "import os\ntry:\n import fcntl\nexcept ImportError: pass\n"
         "else: raise SystemExit('fcntl imported')\nassert not hasattr(os, 'pread')"],
        env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    library, books = tmp_path / "lib", tmp_path / "lib" / "books"
    books.mkdir(parents=True)
    write_config(library)
    write_markdown_book(books / "garden.md", "Garden", {
        "Pests": {"Slugs": "copper tape stops slugs " * 20,
                  "Aphids": "ladybirds eat aphids " * 20}})
    _run(env, library, "ingest", str(books))
    write_markdown_book(books / "kitchen.md", "Kitchen", {
        "Bread": {"Sourdough": "a starter of flour and water " * 20}})
    synced = _run(env, library, "sync", "--json")
    assert json.loads(synced.stdout)["counts"]["added"] == 1, synced.stdout
    assert (library / "book.db.search" / "manifest.json").is_file()  # the persisted index
    hits = json.loads(_run(env, library, "query", "sourdough starter", "--json").stdout)
    assert hits["results"][0]["book"] == "Kitchen", hits
    command, *args = cli_command()
    params = StdioServerParameters(command=command, args=[*args, "serve-mcp"],
                                   cwd=str(library), env=env)
    async with Client(params) as client:
        found = structured(await client.call_tool("search_book", {"question": "copper slugs"}))
    assert found["results"][0]["section"].endswith("Slugs"), found


def test_writer_lock_refuses_a_second_writer_and_names_it(tmp_path: Path) -> None:
    db = tmp_path / "book.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from grimoire_beholder.ingest.lock import writer_lock\n"
         f"with writer_lock(Path({str(db)!r})):\n print('held', flush=True)\n time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(Exception, match=f"pid {holder.pid}"), writer_lock(db):
            pass
    finally:
        holder.kill()
        holder.wait()
    with writer_lock(db):  # the lock died with its process
        pass


def test_index_lock_never_truncates_what_it_opens(tmp_path: Path) -> None:
    folder = tmp_path / "book.db.search"
    folder.mkdir()
    victim = tmp_path / "notes.txt"
    victim.write_text("ten bytes!", encoding="utf-8")
    (folder / "lock").write_text("mine", encoding="utf-8")
    with index_writer._locked(folder) as held:
        assert held
    assert (folder / "lock").read_text(encoding="utf-8") == "mine"
    (folder / "lock").unlink()
    (folder / "lock").symlink_to(victim)
    with pytest.raises(Exception, match="symbolic link"), index_writer._locked(folder):
        pass
    assert victim.read_text(encoding="utf-8") == "ten bytes!"


def test_case_insensitive_is_false_on_this_linux_folder(tmp_path: Path) -> None:
    assert not portable.case_insensitive(tmp_path)
