#!/usr/bin/env python3
"""Fetch the Fastify 5.12.8 documentation (Markdown, MIT) for the ``fastify`` retrieval dev set.

usage: fetch_fastify_docs.py [TARGET]

The pinned npm tarball, checked against the registry's sha512 ``integrity``: only
``package/docs/**.md`` (as ``TARGET/Reference/Hooks.md`` ...) and ``package/LICENSE`` (as
``TARGET/LICENSE``) are extracted, into ``$GRIMOIRE_BENCH_OUT/fastify-docs`` or
``bench/out/fastify-docs`` by default (``docs_archive.py`` says how).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_archive  # a sibling module: this folder is no package

ARCHIVE = docs_archive.DocsArchive(
    name="fastify",
    url="https://registry.npmjs.org/fastify/-/fastify-5.12.8.tgz",
    # dist.integrity of https://registry.npmjs.org/fastify/5.12.8
    sha512=("sha512-moP8exb2sCHLUbJkwp+I6C0padhy4D8lp0SdmzY7HhSdZuqm7O/u3o2aq7u8okaQ//33QDzj3G"
            "/u+FsSdB8Qzw=="),
    docs="package/docs/", license="package/LICENSE", license_as="LICENSE")


def fetch(target: Path | None = None) -> Path:
    """The docs folder, downloaded and extracted unless already complete."""
    return docs_archive.fetch(ARCHIVE, target)


if __name__ == "__main__":
    raise SystemExit(docs_archive.main(ARCHIVE, sys.argv[1:]))
