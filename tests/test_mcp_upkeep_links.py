"""Links swapped in under the upkeep tools (hostile input, round three).

A book's file, once stored, replaced by a link to a file outside (mode 600, no extension):
``sync_library`` warned and then re-read it through the link. ``add_book`` checked a path
and opened it again by name, so a link swapped in between was followed. Files are now read
through no link at all in these tools. A real MCP client session, real files and links.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from grimoire_beholder.mcp_server.allowed import AllowedFolders
from grimoire_beholder.mcp_server.upkeep_tools import Upkeep
from mcp_helpers import call, connect, folder_library, structured

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
SECRET = "The vault code is heliotrope seven seven nine. " * 6
BOOK = "# Knots\n\n## Bowline\n\n" + "The bowline makes a fixed loop that will not slip. " * 6


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    config = folder_library(tmp_path)
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "shelf").mkdir(parents=True)
    outside.mkdir()
    (allowed / "shelf" / "knots.md").write_text(BOOK, encoding="utf-8")
    secret = outside / "secret"
    secret.write_text(SECRET, encoding="utf-8")
    secret.chmod(0o600)
    return config, allowed, secret


async def _leaked(client: object) -> bool:
    found = structured(await call(client, "search_book", question="vault code heliotrope"))
    return any("heliotrope" in hit.get("text", "") for hit in found["results"])


async def test_sync_never_rereads_a_stored_file_through_a_link_out(tmp_path: Path) -> None:
    config, allowed, secret = _setup(tmp_path)
    upkeep = Upkeep(sync=True, add=AllowedFolders.of([allowed]))
    async with connect(config, upkeep=upkeep) as client:
        added = structured(await call(client, "add_book", path="shelf"))
        knots = allowed / "shelf" / "knots.md"
        knots.unlink()
        knots.symlink_to(secret)
        synced = structured(await call(client, "sync_library"))
        leaked = await _leaked(client)
    assert added["counts"]["added"] == 1
    assert synced["counts"]["changed"] == 0, synced
    assert not leaked


async def test_add_book_racing_a_swapped_link_never_reads_outside(tmp_path: Path) -> None:
    config, allowed, secret = _setup(tmp_path)
    target = allowed / "race.md"
    real, link = allowed / ".race-real", allowed / ".race-link"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            real.write_text(BOOK.replace("Knots", "Race"), encoding="utf-8")
            os.replace(real, target)
            link.symlink_to(secret)
            os.replace(link, target)

    upkeep = Upkeep(add=AllowedFolders.of([allowed]))
    swapper = threading.Thread(target=swap, daemon=True)
    async with connect(config, upkeep=upkeep) as client:
        swapper.start()
        try:
            for _ in range(40):
                await call(client, "add_book", path="race.md")
        finally:
            stop.set()
            swapper.join()
        leaked = await _leaked(client)
    assert not leaked


def test_reading_through_no_link_refuses_a_link_anywhere_on_the_way(tmp_path: Path) -> None:
    from grimoire_beholder.errors import InputFileError
    from grimoire_beholder.parse.source import links_not_followed, read_source

    _config, allowed, secret = _setup(tmp_path)
    (allowed / "leaf.md").symlink_to(secret)
    (allowed / "hop").symlink_to(secret.parent)
    with links_not_followed():
        assert read_source(allowed / "shelf" / "knots.md").decode() == BOOK
        for through in (allowed / "leaf.md", allowed / "hop" / "secret"):
            with pytest.raises(InputFileError, match="now a link"):
                read_source(through)
    assert read_source(allowed / "leaf.md").decode() == SECRET  # the CLI follows links
