"""Fetch the Markdown docs of a pinned registry archive for a retrieval dev set.

A :class:`DocsArchive` names one npm tarball or PyPI sdist, the hash the registry lists for
it, the folder of its docs and its licence. :func:`fetch` downloads it, checks the hash,
and extracts only the docs' ``.md`` files (under the docs folder, minus ``skipped``
sub-folders) and the licence into ``TARGET`` — by default ``$GRIMOIRE_BENCH_OUT/NAME-docs``
or ``bench/out/NAME-docs``. Idempotent: a complete TARGET (its ``.complete`` stamp names the
archive's URL) is left alone; otherwise the files are written afresh. Members whose path
would leave TARGET, links and anything but regular files are refused. Standard library
only; ``fetch_*_docs.py`` hold the archives and run :func:`main` (the folder on stdout,
progress on stderr, a bad download a one-line error and exit 1).
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
from dataclasses import dataclass
from pathlib import Path

STAMP = ".complete"
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class DocsArchive:
    """One pinned archive: ``sha512`` is npm's ``dist.integrity`` ("sha512-…"), ``sha256``
    PyPI's hex digest (exactly one of them is set)."""

    name: str  # the target folder is NAME-docs
    url: str
    docs: str  # the docs folder inside the archive, ending in "/"
    license: str  # the licence's member name
    license_as: str  # its name under TARGET
    sha512: str = ""
    sha256: str = ""
    skipped: tuple[str, ...] = ()  # sub-folders of ``docs`` that are not documentation


def default_target(archive: DocsArchive) -> Path:
    """``$GRIMOIRE_BENCH_OUT/NAME-docs``, else ``bench/out/NAME-docs`` of this checkout."""
    out = os.environ.get("GRIMOIRE_BENCH_OUT")
    return (Path(out) if out else ROOT / "bench" / "out") / f"{archive.name}-docs"


def download(archive: DocsArchive) -> bytes:
    """The archive's bytes, checked against its pinned hash (ValueError when they differ)."""
    with urllib.request.urlopen(archive.url, timeout=120) as response:
        data: bytes = response.read()
    if archive.sha512:
        digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        expected = archive.sha512
    else:
        digest, expected = hashlib.sha256(data).hexdigest(), archive.sha256
    if digest != expected:
        raise ValueError(f"{archive.url}: {digest} is not the pinned {expected}")
    return data


def wanted(archive: DocsArchive, name: str) -> str | None:
    """The path under TARGET for a tar member name, or None when it is not kept.

    ValueError for a kept-looking member whose path is absolute or climbs out."""
    if name == archive.license:
        return archive.license_as
    if not (name.startswith(archive.docs) and name.endswith(".md")):
        return None
    rel = name[len(archive.docs):]
    if archive.skipped and rel.startswith(archive.skipped):
        return None
    clean = posixpath.normpath(rel)
    if rel.startswith("/") or clean.startswith("..") or clean != rel or "\\" in rel:
        raise ValueError(f"refusing tar member {name!r}: its path leaves the docs folder")
    return rel


def extract(archive: DocsArchive, data: bytes, target: Path) -> int:
    """Write the kept members of the archive under ``target``; -> the number of .md files."""
    target = target.resolve()
    count = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            rel = wanted(archive, member.name)
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
    (target / STAMP).write_text(archive.url + "\n", encoding="utf-8")
    return count


def fetch(archive: DocsArchive, target: Path | None = None) -> Path:
    """The docs folder, downloaded and extracted unless already complete."""
    target = target or default_target(archive)
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == archive.url:
        return target
    print(f"fetching {archive.url}", file=sys.stderr)
    count = extract(archive, download(archive), target)
    print(f"{count} Markdown files in {target}", file=sys.stderr)
    return target


def main(archive: DocsArchive, argv: list[str]) -> int:
    """``fetch_*_docs.py [TARGET]``: print the docs folder; exit 1 with one line on failure."""
    try:
        target = fetch(archive, Path(argv[0]) if argv else None)
    except (OSError, ValueError, tarfile.TarError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(target)
    return 0
