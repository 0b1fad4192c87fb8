"""A chunk cut from inside a long block — a code listing of a reference page, a wall of text
in a .txt — cites the lines it holds, not the whole block's: a 240-line listing is cut into
many chunks, and a hit on one of them must point at its own few lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.library import Library
from mcp_helpers import write_config

pytestmark = pytest.mark.timeout(120)

LISTING = 240


def _listing_line(n: int) -> str:
    return f"const relay{n} = connect(port{n}, {{ retries: {n % 7}, name: 'relay-{n}' }});"


def _page(path: Path) -> Path:
    lines = ["# Relays", "", "## Wiring many relays", "", "Every relay needs its own port.",
             "", "```js", *(_listing_line(n) for n in range(LISTING)), "```", "",
             "## Afterwards", "", "Check the relays twice.", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _manuscript(path: Path) -> Path:
    """A .txt whose one paragraph runs over 240 lines (lines kept, as poetry or code)."""
    path.write_text("\n".join(f"The keeper logged lamp number {n} as trimmed at dusk."
                              for n in range(LISTING)) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("make", "probe", "first_line"), [
    (_page, "relay137 port137 relay-137", 8),  # the listing starts on line 8, after ```js
    (_manuscript, "lamp number 137", 1),
])
def test_a_hit_inside_a_long_block_cites_its_own_lines(tmp_path: Path, make, probe: str,
                                                       first_line: int) -> None:
    path = make(tmp_path / ("relays.md" if make is _page else "keeper.txt"))
    with Library.open(write_config(tmp_path)) as lib:
        lib.ingest(path)
        hit = lib.search(probe, top_k=1).hits[0]
    wanted = first_line + 137  # the source line holding the probe
    source = path.read_text(encoding="utf-8").split("\n")
    assert "137" in source[wanted - 1]
    assert hit.line_start is not None and hit.line_end is not None
    assert hit.line_start <= wanted <= hit.line_end
    cited = hit.line_end - hit.line_start + 1
    # the passage returned and the chunks it draws on, not the 240-line block they sit in
    assert cited <= 3 * (hit.text.count("\n") + 1), (hit.line_start, hit.line_end)
