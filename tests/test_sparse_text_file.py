"""Probe of the pathological-file class (issue 24): a sparse file of gigabytes named
``.md`` (or ``.txt``) was read whole before it was found to be binary: 3 GB of NULs took
19 s and 3.2 GB of memory to be refused. Its first 64 KiB decide now."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.plain_text import read_text_file


@pytest.mark.parametrize("name", ["big.md", "big.txt"])
def test_a_sparse_file_of_nuls_is_refused_without_reading_it_whole(
        tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with path.open("wb") as fh:
        fh.truncate(256 << 20)  # 256 MB of NULs, almost no disk
    tracemalloc.start()
    try:
        with pytest.raises(InputFileError, match="does not look like text"):
            read_text_file(path)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak:,} bytes"


def test_utf16_without_a_bom_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes(("Plain words in UTF-16. " * 5000).encode("utf-16-le"))
    assert read_text_file(path).startswith("Plain words")
    assert os.path.getsize(path) > 1 << 16
