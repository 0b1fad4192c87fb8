"""The core is a library first: importing and using it pulls in no adapter or model stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ADAPTER_OR_HEAVY = ("typer", "rich", "mcp", "onnxruntime", "ollama", "tokenizers", "pymupdf",
                    "ebooklib")


def _loaded_after(code: str, cwd: Path) -> set[str]:
    probe = (f"{code}\nimport sys\n"
             f"print(','.join(m for m in {ADAPTER_OR_HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True,
                         text=True, check=True, timeout=60).stdout.strip()
    return {m for m in out.split(",") if m}


def test_core_api_imports_without_adapters_or_models(tmp_path: Path) -> None:
    assert _loaded_after("from grimoire_beholder import Library, SearchHit, GrimoireError",
                         tmp_path) == set()


def test_keyword_search_on_a_markdown_book_needs_no_adapter(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n'
                                          'retrieval_mode = "keyword"\n')
    (tmp_path / "notes.md").write_text("# Notes\n\n## Tea\n\nGreen tea is steeped briefly.\n")
    loaded = _loaded_after(
        "from grimoire_beholder import Library\n"
        "lib = Library.open()\nlib.ingest('notes.md')\n"
        "assert lib.search('green tea').hits\nlib.close()", tmp_path)
    assert not loaded & {"typer", "rich", "mcp", "onnxruntime", "ollama", "pymupdf",
                         "ebooklib"}
