"""Paths compared the way the file system compares them, not as text.

Allowed folders (``serve-mcp --allow-add``): ``C:\\Books`` and ``c:\\books\\`` are one folder on
Windows (checked with Windows path semantics through ``PureWindowsPath``), and on a
case-insensitive volume a path spelled in another case is inside the folder; on this Linux
folder it is not. ``sync``: a case-only rename on a case-insensitive volume, and a file whose
name changed from NFC to NFD, are the same book moved (no second book, nothing re-embedded).

The case-insensitive volume is a real one: an exFAT image mounted through FUSE (Debian's
exfat-fuse, as a USB stick or SD card formatted on Windows or macOS is), where the machine
allows mounting; elsewhere those tests are skipped and the probe's own answer on this
volume is still checked.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path, PureWindowsPath

import pytest

from grimoire_beholder import portable
from grimoire_beholder.errors import InputFileError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.allowed import AllowedFolders
from helpers import fake_config, write_markdown_book

pytestmark = pytest.mark.timeout(120)


def _tools() -> bool:
    return all(shutil.which(t) for t in ("mkfs.exfat", "mount.exfat-fuse", "losetup")) \
        and Path("/dev/fuse").exists()


@pytest.fixture
def insensitive(tmp_path: Path) -> Iterator[Path]:
    """A mounted exFAT volume (case-insensitive, case-preserving), unmounted afterwards."""
    if not _tools():
        pytest.skip("no exfat-fuse/exfatprogs/losetup or /dev/fuse here")
    image, point = tmp_path / "stick.img", tmp_path / "stick"
    point.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(32 << 20)
    subprocess.run(["mkfs.exfat", str(image)], check=True, capture_output=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True)
    if loop.returncode != 0:
        pytest.skip(f"cannot attach a loop device: {loop.stderr.strip()}")
    device = loop.stdout.strip()
    try:
        mounted = subprocess.run(["mount.exfat-fuse", device, str(point)],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount exFAT here: {mounted.stderr.strip()}")
        try:
            yield point
        finally:
            subprocess.run(["umount", str(point)], check=False, capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", device], check=False, capture_output=True)


# ------------------------------------------------------------------ allowed folders
def test_windows_paths_compare_without_case_and_trailing_separator() -> None:
    books = portable.FolderNames(PureWindowsPath("C:\\Books"), ((True, False),))
    assert books.holds(PureWindowsPath("c:\\books\\"))
    assert books.holds(PureWindowsPath("c:\\BOOKS\\Dune.pdf"))
    assert books.holds(PureWindowsPath("C:/Books/sub/x.epub"))
    assert not books.holds(PureWindowsPath("D:\\Books\\x.pdf"))
    assert not books.holds(PureWindowsPath("c:\\bookshelf\\x.pdf"))
    assert not books.holds(PureWindowsPath("c:\\"))
    # a case-sensitive folder (Windows allows one per folder) compares exactly; the drive
    # letter still never does
    exact = portable.FolderNames(PureWindowsPath("C:\\Books"), ((False, False),))
    assert exact.holds(PureWindowsPath("c:\\Books\\x.pdf"))
    assert not exact.holds(PureWindowsPath("c:\\books\\x.pdf"))
    # simple case mapping, as NTFS's table: "Straße" is not "STRASSE" (another folder there)
    street = portable.FolderNames(PureWindowsPath("C:\\Straße"), ((True, False),))
    assert street.holds(PureWindowsPath("c:\\STRAßE\\x.pdf"))
    assert not street.holds(PureWindowsPath("c:\\STRASSE\\x.pdf"))


def test_nfc_and_nfd_compare_equal_only_where_the_volume_says_so() -> None:
    nfc, nfd = "Bücher", unicodedata.normalize("NFD", "Bücher")
    assert portable.FolderNames(Path("/") / nfc, ((False, True),)).holds(Path("/") / nfd / "a")
    assert not portable.FolderNames(Path("/") / nfc, ((False, False),)).holds(Path("/") / nfd)


def test_this_linux_folder_compares_exactly(tmp_path: Path) -> None:
    (tmp_path / "Books").mkdir()
    (tmp_path / "books").mkdir()  # a different folder here
    (tmp_path / "books" / "x.txt").write_text("not allowed")
    names = portable.FolderNames.probe(tmp_path / "Books")
    assert not any(case or form for case, form in names.folds)
    allowed = AllowedFolders.of([tmp_path / "Books"])
    with pytest.raises(InputFileError, match="outside the allowed folders"):
        allowed.resolve(tmp_path / "books" / "x.txt")


def test_allowed_folder_on_a_case_insensitive_volume(insensitive: Path) -> None:
    (insensitive / "Books" / "Sea").mkdir(parents=True)
    (insensitive / "Books" / "Sea" / "tides.txt").write_text("High water at noon.\n")
    (insensitive / "Other").mkdir()
    (insensitive / "Other" / "x.txt").write_text("not allowed")
    assert portable.FolderNames.probe(insensitive / "Books").folds[-1] == (True, False)
    allowed = AllowedFolders.of([insensitive / "Books"])
    got = allowed.resolve(insensitive / "books" / "SEA" / "tides.txt")
    assert got == insensitive / "Books" / "SEA" / "tides.txt"  # the allowed folder's spelling
    assert got.is_file()
    assert allowed.resolve(insensitive / "BOOKS") == insensitive / "Books"
    with pytest.raises(InputFileError, match="outside the allowed folders"):
        allowed.resolve(insensitive / "OTHER" / "x.txt")
    # the mount point itself lies on this (case-sensitive) volume: its case still counts
    upper = insensitive.with_name(insensitive.name.upper())
    upper.mkdir()
    (upper / "Books").mkdir()
    (upper / "Books" / "y.txt").write_text("a different folder")
    with pytest.raises(InputFileError, match="outside the allowed folders"):
        allowed.resolve(upper / "Books" / "y.txt")


# ------------------------------------------------------------------ sync
def _library(base: Path, folder: Path) -> Library:
    base.mkdir()
    lib = Library.open(config=fake_config(base))
    report = lib.ingest_folder(folder)
    assert report.counts()["added"] == 2, report
    return lib


def _books(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_markdown_book(folder / "tides.md", "Tides", {"Sea": {"Water": "High water. " * 40}})
    write_markdown_book(folder / "café.md", "Café", {"Town": {"Square": "Coffee. " * 40}})


def test_case_only_rename_on_a_case_insensitive_volume_is_a_move(
        insensitive: Path, tmp_path: Path) -> None:
    _books(insensitive / "notes")
    lib = _library(tmp_path / "lib", insensitive / "notes")
    try:
        (insensitive / "notes" / "tides.md").rename(insensitive / "notes" / "Tides.md")
        assert (insensitive / "notes" / "tides.md").exists()  # the volume ignores case
        dry = lib.sync(dry_run=True)
        assert dry.counts()["added"] == 0 and dry.counts()["moved"] == 1, dry
        report = lib.sync()
        assert report.counts()["moved"] == 1 and report.counts()["added"] == 0, report
        assert report.embedded == 0
        paths = sorted(Path(b.source_path).name for b in lib.list_books())
        assert paths == ["Tides.md", "café.md"]
        again = lib.sync()
        assert again.counts()["unchanged"] == 2 and not again.changed_anything, again
    finally:
        lib.close()


def test_nfc_to_nfd_rename_is_a_move_not_a_new_book(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    _books(notes)
    lib = _library(tmp_path / "lib", notes)
    try:
        nfd = unicodedata.normalize("NFD", "café.md")
        (notes / "café.md").rename(notes / nfd)  # as a copy from HFS+ spells it
        report = lib.sync()
        assert report.counts()["moved"] == 1, report
        assert report.counts()["added"] == 0 and report.counts()["removed"] == 0, report
        assert report.embedded == 0
        assert len(lib.list_books()) == 2
    finally:
        lib.close()


def test_a_synced_folder_named_in_another_case_is_the_same_folder(
        insensitive: Path, tmp_path: Path) -> None:
    _books(insensitive / "Notes")
    lib = _library(tmp_path / "lib", insensitive / "Notes")
    try:
        scoped = lib.sync([insensitive / "notes"])  # as typed on macOS or Windows
        assert scoped.counts()["unchanged"] == 2 and not scoped.changed_anything, scoped
        again = lib.ingest_folder(insensitive / "NOTES")
        assert again.counts()["added"] == 0 and again.counts()["unchanged"] == 2, again
        assert len(lib.list_books()) == 2
        assert {Path(b.source_path).parent.name for b in lib.list_books()} == {"Notes"}
    finally:
        lib.close()
