"""Every parser reads its input through one helper that refuses what is not a regular file.

A named pipe used to block ``open`` forever, and a link to ``/dev/zero`` or ``/dev/urandom``
read without end. Each parser, called directly and through ``parse_file``, must refuse them
at once with one line naming the path (and, for a link, where it leads).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.epub import parse_epub
from grimoire_beholder.parse.markdown import parse_markdown
from grimoire_beholder.parse.pdf import parse_pdf
from grimoire_beholder.parse.plain_text import parse_text
from grimoire_beholder.parse.source import read_source

pytestmark = pytest.mark.timeout(60)  # a regression blocks: fail, do not hang the suite

PARSERS: dict[str, Callable[[Path], object]] = {
    ".pdf": parse_pdf, ".epub": parse_epub, ".md": parse_markdown, ".txt": parse_text,
}


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        yield path
    finally:
        server.close()


def _specials(tmp_path: Path, sock: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return {"fifo": (fifo, "named pipe"), "zero": (Path("/dev/zero"), "character device"),
            "urandom": (Path("/dev/urandom"), "character device"),
            "socket": (sock, "socket")}


@pytest.mark.parametrize("ext", sorted(PARSERS))
def test_every_parser_refuses_pipes_devices_and_sockets(tmp_path: Path, unix_socket: Path,
                                                        ext: str) -> None:
    for name, (target, kind) in _specials(tmp_path, unix_socket).items():
        link = tmp_path / f"{name}-link{ext}"
        link.symlink_to(target)
        for parse in (PARSERS[ext], parse_file):
            with pytest.raises(InputFileError) as info:
                parse(link)
            message = str(info.value)
            assert kind in message and str(link) in message, message
            assert str(target.resolve()) in message  # says where the link leads
            assert "\n" not in message


def test_a_named_pipe_with_a_writer_waiting_is_still_refused(tmp_path: Path) -> None:
    """Even when data would arrive, a pipe is not a book: refused, nothing read."""
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never finishes
    try:
        os.write(writer, b"# Heading\n\nSome text that never ends")
        with pytest.raises(InputFileError, match="named pipe"):
            parse_file(fifo)
    finally:
        os.close(writer)


def test_a_directory_named_like_a_book_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "shelf.epub"
    folder.mkdir()
    for parse in (parse_epub, parse_file):
        with pytest.raises(InputFileError, match="directory"):
            parse(folder)


def test_read_source_returns_exactly_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    data = os.urandom(3 * (1 << 20) + 17)
    path.write_bytes(data)
    assert read_source(path) == data
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InputFileError, match="empty"):
        read_source(empty)
    with pytest.raises(InputFileError, match="not found"):
        read_source(tmp_path / "gone.txt")
