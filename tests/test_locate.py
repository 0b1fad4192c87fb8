"""Which library a command uses (locate.py): flags, environment, the nearest library folder,
the per-user library — and that looking never creates anything."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grimoire_beholder.config import load_config
from grimoire_beholder.errors import ConfigError, StorageError
from grimoire_beholder.library import Library
from grimoire_beholder.locate import (
    BY_CONFIG_ENV,
    BY_CONFIG_FLAG,
    BY_FOLDER,
    BY_LIBRARY_ENV,
    BY_LIBRARY_FLAG,
    BY_USER_DEFAULT,
    CONFIG_ENV,
    LIBRARY_ENV,
)

MARKED = '[grimoire-beholder]\nembedding_backend = "fake"\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME with XDG folders inside it, the working directory an empty folder in it."""
    home = tmp_path / "home"
    (home / "empty").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.delenv(LIBRARY_ENV, raising=False)
    monkeypatch.chdir(home / "empty")
    return home


def files_under(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


def test_with_nothing_chosen_the_per_user_library_is_used(home: Path) -> None:
    cfg = load_config()
    assert cfg.database_path == home / ".local" / "share" / "grimoire-beholder" / "book.db"
    assert (cfg.source, cfg.origin) == (None, BY_USER_DEFAULT)


def test_the_per_user_config_file_is_read_and_the_database_stays_in_the_data_folder(
        home: Path) -> None:
    user_config = home / ".config" / "grimoire-beholder" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("top_k = 9\n")
    cfg = load_config()
    assert (cfg.top_k, cfg.source) == (9, str(user_config))
    assert cfg.database_path.parent == home / ".local" / "share" / "grimoire-beholder"


@pytest.mark.parametrize("depth", [0, 1, 3], ids=["here", "child", "deep"])
def test_the_nearest_marked_config_is_found_from_a_subfolder(
        home: Path, monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    library = home / "books"
    library.mkdir()
    (library / "config.toml").write_text(MARKED + "top_k = 3\n")
    work = library.joinpath(*["sub"] * depth)
    work.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(work)
    cfg = load_config()
    assert (cfg.top_k, cfg.origin) == (3, BY_FOLDER)
    assert cfg.database_path == library / "book.db"


@pytest.mark.parametrize("text", [
    'baseURL = "https://example.org/"\ntitle = "My Hugo site"\n',  # a Hugo site
    "[build]\ntarget = \"x86_64-unknown-linux-gnu\"\n",            # .cargo/config.toml
    "top_k = 3\n",                                                 # our keys, but unmarked
    "# [grimoire-beholder] mentioned in a comment only\n",
])
def test_another_tools_config_toml_is_never_read(home: Path, text: str) -> None:
    (home / "empty" / "config.toml").write_text(text)
    cfg = load_config()
    assert (cfg.origin, cfg.source, cfg.top_k) == (BY_USER_DEFAULT, None, 5)


def test_the_walk_stops_at_home(home: Path, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(MARKED)  # above HOME
    assert load_config().origin == BY_USER_DEFAULT


def test_a_quoted_marker_counts_and_a_broken_marked_file_is_reported(home: Path) -> None:
    config = home / "empty" / "config.toml"
    config.write_text('title = "site"\n["grimoire-beholder"]\ntop_k = 4\n')
    assert load_config().top_k == 4
    config.write_text("[grimoire-beholder]\ntop_k = = 4\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config()


def test_flags_beat_the_environment_which_beats_the_folder(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = {}
    for name, top_k in (("flagcfg", 1), ("flaglib", 2), ("envcfg", 3), ("envlib", 4),
                        ("empty", 5)):
        folders[name] = home / name
        folders[name].mkdir(exist_ok=True)
        (folders[name] / "config.toml").write_text(MARKED + f"top_k = {top_k}\n")
    monkeypatch.setenv(CONFIG_ENV, str(folders["envcfg"] / "config.toml"))
    monkeypatch.setenv(LIBRARY_ENV, str(folders["envlib"]))
    flag_config = folders["flagcfg"] / "config.toml"
    assert load_config(flag_config).origin == BY_CONFIG_FLAG
    assert load_config(library=folders["flaglib"]).origin == BY_LIBRARY_FLAG
    assert (load_config().origin, load_config().top_k) == (BY_CONFIG_ENV, 3)
    monkeypatch.delenv(CONFIG_ENV)
    assert (load_config().origin, load_config().top_k) == (BY_LIBRARY_ENV, 4)
    monkeypatch.delenv(LIBRARY_ENV)
    assert (load_config().origin, load_config().top_k) == (BY_FOLDER, 5)
    with pytest.raises(ConfigError, match="not both"):
        load_config(flag_config, library=folders["flaglib"])


def test_a_named_library_folder_reads_its_config_marked_or_not(home: Path) -> None:
    """Named explicitly, a folder's config.toml is read even without the table (an older
    library, an empty file); another tool's fails on its first unknown key."""
    shelf = home / "shelf"
    shelf.mkdir()
    (shelf / "config.toml").write_text("top_k = 7\n")
    assert load_config(library=shelf).top_k == 7
    (shelf / "config.toml").write_text("")
    assert load_config(library=shelf).source == str(shelf / "config.toml")
    (shelf / "config.toml").write_text('baseURL = "https://example.org/"\n')
    with pytest.raises(ConfigError, match="unknown config key 'baseURL'"):
        load_config(library=shelf)


def test_reading_a_missing_library_names_the_path_and_creates_nothing(home: Path) -> None:
    before = files_under(home)
    for kwargs in ({"read_only": True}, {"create": False}):
        with pytest.raises(StorageError) as caught:
            Library.open(**kwargs)  # type: ignore[arg-type]
        message = str(caught.value)
        assert str(home / ".local" / "share" / "grimoire-beholder" / "book.db") in message
        assert "grimoire-beholder ingest FILE" in message and "\n" not in message
    assert files_under(home) == before


def test_creating_a_library_folder_marks_it_so_commands_inside_find_it(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = home / "new" / "library"
    with Library.open(library=folder) as lib:
        assert lib.config.database_path == folder / "book.db"
    assert (folder / "book.db").is_file()
    (folder / "notes").mkdir()
    monkeypatch.chdir(folder / "notes")
    cfg = load_config()
    assert (cfg.origin, cfg.database_path) == (BY_FOLDER, folder / "book.db")


def test_creating_the_per_user_library_makes_its_folder(home: Path) -> None:
    with Library.open() as lib:
        assert lib.config.origin == BY_USER_DEFAULT
    assert (home / ".local" / "share" / "grimoire-beholder" / "book.db").is_file()
    assert not (home / ".config").exists()  # no config file is needed, none is written
    assert not list((home / "empty").iterdir())


def test_naming_the_per_user_folder_is_the_per_user_library(home: Path) -> None:
    """``mcp-config`` pins the per-user library as ``--library <its folder>``: that must
    still read the per-user config file, and creating it writes no config into the folder."""
    user_config = home / ".config" / "grimoire-beholder" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("top_k = 9\n")
    folder = home / ".local" / "share" / "grimoire-beholder"
    cfg = load_config(library=folder)
    assert (cfg.top_k, cfg.source, cfg.database_path) == (9, str(user_config),
                                                           folder / "book.db")
    Library.open(library=folder).close()
    assert sorted(p.name for p in folder.iterdir()) == ["book.db"]


NOBODY = 65534


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_outside_home_a_config_another_user_owns_is_passed_over(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Like git's ownership check: in a shared folder such as /tmp, a marked config.toml
    another user wrote does not choose this user's database; one of the user's own does."""
    shared = tmp_path / "shared"
    (shared / "work").mkdir(parents=True)
    planted = shared / "config.toml"
    planted.write_text(MARKED + 'db_path = "/tmp/theirs.db"\n')
    os.chown(planted, NOBODY, NOBODY)
    monkeypatch.chdir(shared / "work")
    cfg = load_config()
    assert cfg.origin == BY_USER_DEFAULT, cfg.source
    os.chown(planted, os.geteuid(), os.getegid())
    os.chown(shared, NOBODY, NOBODY)  # the user's file in someone else's folder: no either
    assert load_config().origin == BY_USER_DEFAULT
    os.chown(shared, os.geteuid(), os.getegid())
    assert load_config().origin == BY_FOLDER


@pytest.mark.parametrize("given", ["C:\\Books\\lib", "c:/books/lib", "D:lib"])
def test_a_drive_letter_library_is_a_folder_not_an_address(
        home: Path, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # On Windows these are folders (elsewhere refused: test_locate_windows_env); the drive
    # letter must never be read as a URL scheme ("c:" of an address like "postgresql://").
    from grimoire_beholder import portable
    from grimoire_beholder.locate import locate

    monkeypatch.setattr(portable, "PLATFORM", "win32")

    found = locate(library=given)
    assert found.origin == BY_LIBRARY_FLAG
    assert found.folder == (home / "empty" / given).resolve()
    with pytest.raises(StorageError, match="no library database"):
        Library.open(library=given, create=False)


@pytest.mark.parametrize("name", ["x.db", "x.SQLite", "x.sqlite3"])
def test_a_library_path_naming_a_database_file_is_that_file(
        home: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``--library ~/new/x.db`` (or the environment) is the library's file, not a folder of
    that name: a read fails in one line naming it and creates nothing; ``ingest`` creates that
    file (and its folders), with no config.toml that would point later commands elsewhere."""
    from grimoire_beholder.cli.client_configs import server_args

    file = home / "new" / name
    before = files_under(home)
    with pytest.raises(StorageError) as caught:
        Library.open(library=file, read_only=True)
    assert f"no library database at {file} " in str(caught.value)
    assert f"--library {file}`" in str(caught.value)
    assert files_under(home) == before
    Library.open(library=file).close()
    assert file.is_file() and sorted(p.name for p in file.parent.iterdir()) == [name]
    monkeypatch.setenv(LIBRARY_ENV, str(file))
    by_env = load_config()
    assert (by_env.database_path, by_env.origin) == (file, BY_LIBRARY_ENV)
    assert server_args(by_env) == ["serve-mcp", "--library", str(file)]
    written_as_folder = load_config(library=f"{home / 'other'/ name}/")  # the slash says so
    assert written_as_folder.database_path == home / "other" / name / "book.db"


def test_a_named_database_file_takes_the_marked_config_beside_it(home: Path) -> None:
    """Settings come from the library folder's marked config.toml; an SQLite file without a
    suffix is a library file too; any other file is refused, naming it."""
    (home / "config.toml").write_text(MARKED + "top_k = 3\n")
    cfg = load_config(library=home / "other.db")
    assert (cfg.top_k, cfg.database_path) == (3, home / "other.db")
    Library.open(library=home / "other.db").close()
    (home / "library").write_bytes((home / "other.db").read_bytes())
    assert load_config(library=home / "library").database_path == home / "library"
    (home / "notes.txt").write_text("not a database\n")
    with pytest.raises(ConfigError, match=r"notes\.txt, a file that is neither"):
        load_config(library=home / "notes.txt")
