#!/usr/bin/env python3
"""Fetch the Hatch 1.18.2 documentation (Markdown, MIT) for the ``hatch`` retrieval dev set.

usage: fetch_hatch_docs.py [TARGET]

Downloads the pinned PyPI sdist, checks it against the sha256 that
``https://pypi.org/pypi/hatch/1.18.2/json`` lists for it, and extracts only the documentation's
Markdown pages, ``hatch-1.18.2/docs/**.md`` (as ``TARGET/config/build.md`` ...), without the
release posts and changelogs (``docs/blog/``, ``docs/history/``), and ``hatch-1.18.2/LICENSE.txt``
(as ``TARGET/LICENSE.txt``). TARGET defaults to ``$GRIMOIRE_BENCH_OUT/hatch-docs`` or
``bench/out/hatch-docs``. Idempotent: a complete TARGET (its ``.complete`` stamp names this
sdist) is left alone; otherwise the files are written afresh. Members whose path would leave
TARGET, links and anything but regular files are refused. Standard library only; prints the
target folder on stdout, progress on stderr; a bad download is a one-line error and exit 1.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import sys
import tarfile
import urllib.request
from pathlib import Path

URL = ("https://files.pythonhosted.org/packages/4d/55/"
       "45033136574fc89bce07e2c64e4ffb151df5007518b2739b54c95838e14f/hatch-1.18.2.tar.gz")
# digests.sha256 of the sdist in https://pypi.org/pypi/hatch/1.18.2/json
SHA256 = "7f365f1a5b8f1a8162813daed9bf9fce83f15dc933fc99c6d04cbb942e64f4d0"
DOCS = "hatch-1.18.2/docs/"
SKIPPED = ("blog/", "history/")  # release posts and changelogs, not documentation
LICENSE = "hatch-1.18.2/LICENSE.txt"
STAMP = ".complete"
ROOT = Path(__file__).resolve().parents[2]


def default_target() -> Path:
    """``$GRIMOIRE_BENCH_OUT/hatch-docs``, else ``bench/out/hatch-docs`` of this checkout."""
    out = os.environ.get("GRIMOIRE_BENCH_OUT")
    return (Path(out) if out else ROOT / "bench" / "out") / "hatch-docs"


def download() -> bytes:
    """The sdist's bytes, checked against SHA256 (ValueError when they differ)."""
    with urllib.request.urlopen(URL, timeout=120) as response:
        data: bytes = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise ValueError(f"{URL}: sha256 {digest} is not the pinned {SHA256}")
    return data


def wanted(name: str) -> str | None:
    """The path under TARGET for a tar member name, or None when it is not kept.

    ValueError for a kept-looking member whose path is absolute or climbs out."""
    if name == LICENSE:
        return "LICENSE.txt"
    if not (name.startswith(DOCS) and name.endswith(".md")):
        return None
    rel = name[len(DOCS):]
    if rel.startswith(SKIPPED):
        return None
    clean = posixpath.normpath(rel)
    if rel.startswith("/") or clean.startswith("..") or clean != rel or "\\" in rel:
        raise ValueError(f"refusing tar member {name!r}: its path leaves the docs folder")
    return rel


def extract(data: bytes, target: Path) -> int:
    """Write the kept members of the tarball under ``target``; -> the number of .md files."""
    target = target.resolve()
    count = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            rel = wanted(member.name)
            if rel is None:
                continue
            if not member.isfile():
                raise ValueError(f"refusing tar member {member.name!r}: not a regular file")
            dest = (target / rel).resolve()
            if target not in dest.parents:
                raise ValueError(f"refusing tar member {member.name!r}: outside {target}")
            source = tar.extractfile(member)
            assert source is not None  # a regular file always has contents
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read())
            count += rel.endswith(".md")
    (target / STAMP).write_text(URL + "\n", encoding="utf-8")
    return count


def fetch(target: Path | None = None) -> Path:
    """The docs folder, downloaded and extracted unless already complete."""
    target = target or default_target()
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == URL:
        return target
    print(f"fetching {URL}", file=sys.stderr)
    count = extract(download(), target)
    print(f"{count} Markdown files in {target}", file=sys.stderr)
    return target


def main() -> int:
    try:
        target = fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    except (OSError, ValueError, tarfile.TarError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
