#!/usr/bin/env python3
"""Fetch the Fastify 5.12.8 documentation (Markdown, MIT) for the ``fastify`` retrieval dev set.

usage: fetch_fastify_docs.py [TARGET]

Downloads the pinned npm tarball, checks it against the registry's sha512 ``integrity``, and
extracts only ``package/docs/**.md`` (as ``TARGET/Reference/Hooks.md`` ...) and
``package/LICENSE`` (as ``TARGET/LICENSE``). TARGET defaults to ``$GRIMOIRE_BENCH_OUT/fastify-docs``
or ``bench/out/fastify-docs``. Idempotent: a complete TARGET (its ``.complete`` stamp names this
tarball) is left alone; otherwise the files are written afresh. Members whose path would leave
TARGET, links and anything but regular files are refused. Standard library only; prints the
target folder on stdout, progress on stderr; a bad download is a one-line error and exit 1.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import posixpath
import sys
import tarfile
import urllib.request
from pathlib import Path

URL = "https://registry.npmjs.org/fastify/-/fastify-5.12.8.tgz"
# dist.integrity of https://registry.npmjs.org/fastify/5.12.8
INTEGRITY = ("sha512-moP8exb2sCHLUbJkwp+I6C0padhy4D8lp0SdmzY7HhSdZuqm7O/u3o2aq7u8okaQ//33QDzj3G"
             "/u+FsSdB8Qzw==")
DOCS = "package/docs/"
LICENSE = "package/LICENSE"
STAMP = ".complete"
ROOT = Path(__file__).resolve().parents[2]


def default_target() -> Path:
    """``$GRIMOIRE_BENCH_OUT/fastify-docs``, else ``bench/out/fastify-docs`` of this checkout."""
    out = os.environ.get("GRIMOIRE_BENCH_OUT")
    return (Path(out) if out else ROOT / "bench" / "out") / "fastify-docs"


def download() -> bytes:
    """The tarball's bytes, checked against INTEGRITY (ValueError when they differ)."""
    with urllib.request.urlopen(URL, timeout=120) as response:
        data: bytes = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        raise ValueError(f"{URL}: sha512 {digest} is not the pinned {INTEGRITY}")
    return data


def wanted(name: str) -> str | None:
    """The path under TARGET for a tar member name, or None when it is not kept.

    ValueError for a kept-looking member whose path is absolute or climbs out."""
    if name == LICENSE:
        return "LICENSE"
    if not (name.startswith(DOCS) and name.endswith(".md")):
        return None
    rel = name[len(DOCS):]
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
