"""The core's path allowance for add_book: real paths inside the allowed folders, nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.mcp_server.allowed import AllowedFolders


def test_resolves_inside_and_refuses_everything_else(tmp_path: Path) -> None:
    books = tmp_path / "books"
    (books / "sub").mkdir(parents=True)
    (tmp_path / "books-evil").mkdir()  # shares the allowed folder's name as a prefix
    inside = books / "sub" / "a.md"
    inside.write_text("# A\n")
    evil = tmp_path / "books-evil" / "b.md"
    evil.write_text("# B\n")
    (books / "alias.md").symlink_to(inside)  # a link that stays inside is fine
    (books / "out.md").symlink_to(evil)
    (books / "loop.md").symlink_to(books / "loop.md")
    os.mkfifo(books / "pipe.md")
    (tmp_path / "door").symlink_to(books, target_is_directory=True)
    allowed = AllowedFolders.of([tmp_path / "door"])  # the folder itself through a link

    assert allowed.folders == (books.resolve(),)
    assert allowed.resolve(inside) == inside.resolve()
    assert allowed.resolve("sub/a.md") == inside.resolve()
    assert allowed.resolve("alias.md") == inside.resolve()
    assert allowed.resolve(tmp_path / "door" / "sub") == (books / "sub").resolve()
    assert allowed.resolve(books) == books.resolve()
    for bad, reason in ((evil, "outside"), ("../books-evil/b.md", "outside"),
                        (books / "sub" / ".." / ".." / "books-evil" / "b.md", "outside"),
                        ("out.md", "leads to"), ("loop.md", "cannot be resolved"),
                        ("pipe.md", "not a regular file"), ("/dev/null", "outside"),
                        ("missing.md", "no such file")):
        with pytest.raises(InputFileError, match=reason) as caught:
            allowed.resolve(bad)
        assert str(books.resolve()) in str(caught.value), bad
