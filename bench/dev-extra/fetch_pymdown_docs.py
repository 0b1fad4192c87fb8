#!/usr/bin/env python3
"""Fetch the PyMdown Extensions 13.1.2 documentation (Markdown, MIT) for the ``pymdown`` dev set.

usage: fetch_pymdown_docs.py [TARGET]

The pinned PyPI sdist, checked against the sha256 that
``https://pypi.org/pypi/pymdown-extensions/13.1.2/json`` lists for it: only the documentation's
Markdown pages, ``pymdown_extensions-13.1.2/docs/src/markdown/**.md`` (as
``TARGET/extensions/superfences.md`` ...), without the snippet includes (``.snippets/``) and the
changelog and release notes (``about/changelog.md``, ``about/releases/``), and
``pymdown_extensions-13.1.2/LICENSE.md`` (as ``TARGET/LICENSE``, so it is no docs page) are
extracted, into ``$GRIMOIRE_BENCH_OUT/pymdown-docs`` or ``bench/out/pymdown-docs`` by default
(``docs_archive.py`` says how).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_archive  # a sibling module: this folder is no package

ARCHIVE = docs_archive.DocsArchive(
    name="pymdown",
    url=("https://files.pythonhosted.org/packages/fc/68/"
         "6da10ec6620ea74b621437f2d20df2e96f1c44dc3976c7136de4ebd0cc68/"
         "pymdown_extensions-13.1.2.tar.gz"),
    # digests.sha256 of the sdist in https://pypi.org/pypi/pymdown-extensions/13.1.2/json
    sha256="724701395585d027fb18a6ad3377636570bac4f2917ed809f06cbc811d7e60bb",
    docs="pymdown_extensions-13.1.2/docs/src/markdown/",
    skipped=(".snippets/", "about/changelog.md", "about/releases/"),
    license="pymdown_extensions-13.1.2/LICENSE.md", license_as="LICENSE")


def fetch(target: Path | None = None) -> Path:
    """The docs folder, downloaded and extracted unless already complete."""
    return docs_archive.fetch(ARCHIVE, target)


if __name__ == "__main__":
    raise SystemExit(docs_archive.main(ARCHIVE, sys.argv[1:]))
