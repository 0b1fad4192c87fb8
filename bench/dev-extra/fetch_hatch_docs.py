#!/usr/bin/env python3
"""Fetch the Hatch 1.18.2 documentation (Markdown, MIT) for the ``hatch`` retrieval dev set.

usage: fetch_hatch_docs.py [TARGET]

The pinned PyPI sdist, checked against the sha256 that
``https://pypi.org/pypi/hatch/1.18.2/json`` lists for it: only the documentation's Markdown
pages, ``hatch-1.18.2/docs/**.md`` (as ``TARGET/config/build.md`` ...), without the release
posts and changelogs (``docs/blog/``, ``docs/history/``), and ``hatch-1.18.2/LICENSE.txt`` (as
``TARGET/LICENSE.txt``) are extracted, into ``$GRIMOIRE_BENCH_OUT/hatch-docs`` or
``bench/out/hatch-docs`` by default (``docs_archive.py`` says how).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_archive  # a sibling module: this folder is no package

ARCHIVE = docs_archive.DocsArchive(
    name="hatch",
    url=("https://files.pythonhosted.org/packages/4d/55/"
         "45033136574fc89bce07e2c64e4ffb151df5007518b2739b54c95838e14f/hatch-1.18.2.tar.gz"),
    # digests.sha256 of the sdist in https://pypi.org/pypi/hatch/1.18.2/json
    sha256="7f365f1a5b8f1a8162813daed9bf9fce83f15dc933fc99c6d04cbb942e64f4d0",
    docs="hatch-1.18.2/docs/", skipped=("blog/", "history/"),
    license="hatch-1.18.2/LICENSE.txt", license_as="LICENSE.txt")


def fetch(target: Path | None = None) -> Path:
    """The docs folder, downloaded and extracted unless already complete."""
    return docs_archive.fetch(ARCHIVE, target)


if __name__ == "__main__":
    raise SystemExit(docs_archive.main(ARCHIVE, sys.argv[1:]))
