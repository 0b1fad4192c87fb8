"""What the bundle tells a person before its first start: what it needs, what they see when
that fails, and commands that work as written in the bundle's folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

from grimoire_beholder.mcp_server.server import TOOLS

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = json.loads((ROOT / "mcpb" / "manifest.json").read_text(encoding="utf-8"))
DESCRIPTION = MANIFEST["long_description"]
TEXTS = {"manifest": DESCRIPTION,
         "mcpb/README.md": (ROOT / "mcpb" / "README.md").read_text(encoding="utf-8")}


def test_it_says_what_the_first_start_needs_and_what_a_failure_looks_like() -> None:
    assert "First start needs the network" in DESCRIPTION and "310 MB" in DESCRIPTION
    assert "Connection closed" in DESCRIPTION and "log" in DESCRIPTION
    assert "UV_NATIVE_TLS=1" in DESCRIPTION


def test_every_uv_sync_it_advises_works_in_the_bundle_folder() -> None:
    """The bundle carries no tests/, and the dev group names a test package there: a plain
    `uv sync` fails with "Distribution not found at …/tests/fakes_plugin"."""
    for name, text in TEXTS.items():
        for command in re.findall(r"uv sync[^`;)\n]*", text):
            assert "--no-dev" in command and "--frozen" in command, (name, command)


def test_it_names_every_read_only_tool() -> None:
    for fn, _title in TOOLS:
        assert f"`{fn.__name__}`" in DESCRIPTION, fn.__name__
