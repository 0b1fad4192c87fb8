"""The Claude Desktop bundle as a user gets it: packed, unzipped alone, started as it says.

The bundle is packed by ``mcpb/build.py`` (or taken from ``$GRIMOIRE_TEST_MCPB``: CI packs it
once), unzipped into an empty folder, and its server command is derived by the MCPB package's
own substitution code. That command runs the host's ``uv`` on the bundle's locked project, so
the server comes up from the bundle alone — no checkout, no dev venv — and a real MCP client
searches a library the test built. Needs npx and uv, as a host does; skips without them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from grimoire_beholder.library import Library
from mcp_helpers import cli_command, structured

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # packs, installs with uv, serves

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "mcpb"))
from build import MCPB_CLI  # noqa: E402

HOST_CONFIG = Path(__file__).parent / "mcpb_host_config.mjs"
SAMPLE = ROOT / "samples" / "lighthouse-keepers-handbook.md"
TOOLS = {"list_books", "get_book_outline", "search_book", "get_section", "book_status",
         "verify_quote", "get_page_image", "lookup_index"}
MAX_BUNDLE_BYTES = 1_000_000


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npx") is None or shutil.which("uv") is None:
        pytest.skip("packing and starting the bundle need npx and uv (CI has both)")
    given = os.environ.get("GRIMOIRE_TEST_MCPB")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("packed") / "grimoire-beholder.mcpb"
    subprocess.run([sys.executable, str(ROOT / "mcpb" / "build.py"), str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="module")
def extension(packed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle unzipped alone into an empty folder, as the host installs it."""
    folder = tmp_path_factory.mktemp("extension")
    with zipfile.ZipFile(packed) as archive:
        archive.extractall(folder)
    return folder


def host_mcp_config(extension: Path, user_config: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        ["npx", "-y", "-p", MCPB_CLI, "-c",
         f"node {HOST_CONFIG} {extension} '{json.dumps(user_config)}'"],
        capture_output=True, text=True, check=True, timeout=300)
    config: dict[str, Any] = json.loads(proc.stdout)
    return config


def test_the_bundle_carries_the_project_source_and_nothing_heavy(packed: Path) -> None:
    with zipfile.ZipFile(packed) as archive:
        names = archive.namelist()
    assert {"manifest.json", "server.py", "pyproject.toml", "uv.lock",
            "minilm/pyproject.toml", "src/grimoire_beholder/mcp_server/server.py"} <= set(names)
    heavy = [n for n in names if n.startswith(("tests/", "bench/", "samples/", ".venv/"))
             or n.endswith((".safetensors", ".onnx", ".db", ".whl", ".pyc"))]
    assert heavy == []
    assert packed.stat().st_size < MAX_BUNDLE_BYTES


def test_an_empty_library_setting_serves_the_per_user_library(
        extension: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The setting is optional: left empty, the server gets an empty variable, which
    chooses nothing, so the per-user library is served (as every command would use it)."""
    from grimoire_beholder.config import load_config
    from grimoire_beholder.locate import BY_USER_DEFAULT

    env = host_mcp_config(extension, {})["env"]
    assert env["GRIMOIRE_BEHOLDER_LIBRARY"] == ""
    monkeypatch.setenv("GRIMOIRE_BEHOLDER_LIBRARY", env["GRIMOIRE_BEHOLDER_LIBRARY"])
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert load_config().origin == BY_USER_DEFAULT


@pytest.mark.anyio
async def test_the_server_started_as_the_manifest_says_answers_a_search(
        extension: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    library.mkdir()
    (library / "config.toml").write_text('db_path = "book.db"\n', encoding="utf-8")
    with Library.open(library / "config.toml") as lib:  # the default, embedded model
        lib.ingest(SAMPLE)
    config = host_mcp_config(extension, {"library_dir": str(library)})
    elsewhere = tmp_path / "host-cwd"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}  # not the dev venv
    params = StdioServerParameters(command=config["command"], args=config["args"],
                                   env={**env, **config["env"]}, cwd=str(elsewhere))
    with anyio.fail_after(600):  # the first start installs the locked dependencies
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            found = structured(await client.call_tool(
                "search_book", {"question": "what did keepers burn before kerosene?"}))
    assert tools == TOOLS
    top = found["results"][0]
    assert top["section"].endswith("The Lamp and Its Fuel") and "colza oil" in top["text"]
    venv = extension / ".venv"  # the server ran in the bundle's own environment,
    assert venv.is_dir() and not list(venv.glob("lib*/python*/site-packages/pytest"))  # no dev
    assert list(elsewhere.iterdir()) == []  # and wrote nothing where the host started it


@pytest.mark.anyio
async def test_upkeep_settings_are_off_by_default_and_turn_tools_on(tmp_path: Path) -> None:
    """The manifest's settings, substituted by the host's code, reach serve-mcp's options."""
    if shutil.which("npx") is None:
        pytest.skip("deriving the host's command needs npx (CI has it)")
    bundle = tmp_path / "bundle"  # the manifest is all the substitution reads
    bundle.mkdir()
    shutil.copy(ROOT / "mcpb" / "manifest.json", bundle)
    library = tmp_path / "library"
    (library / "inbox").mkdir(parents=True)
    (library / "config.toml").write_text('db_path = "book.db"\nembedding_backend = "fake"\n'
                                         'llm_backend = "none"\n', encoding="utf-8")
    with Library.open(library / "config.toml") as lib:
        lib.ingest(SAMPLE)
    chosen = {"library_dir": str(library)}
    command, *args = cli_command()
    tools = {}
    for name, settings in (("off", chosen), ("on", {**chosen, "allow_sync": True,
                                                    "allow_add": str(library / "inbox"),
                                                    "allow_remove": True})):
        env = host_mcp_config(bundle, settings)["env"]
        params = StdioServerParameters(  # this checkout's serve-mcp, the bundle's environment
            command=command, args=[*args, "serve-mcp"],
            env={**os.environ, **env}, cwd=str(tmp_path))
        async with Client(params) as client:
            tools[name] = {t.name for t in (await client.list_tools()).tools}
    assert tools["off"] == TOOLS
    assert tools["on"] == TOOLS | {"sync_library", "add_book", "remove_book"}
