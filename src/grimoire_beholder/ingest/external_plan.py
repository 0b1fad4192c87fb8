"""Planning a Calibre or Zotero library's sync: one step per item, from the library's rows
and the stored books' origins; reads files' stats, writes nothing (``external.py`` carries
the steps out, or previews them for a dry run)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from grimoire_beholder.ingest import library_moves
from grimoire_beholder.ingest.build import FileInfo, file_info
from grimoire_beholder.sources.items import KIND_NAMES, SourceItem, SourceLibrary
from grimoire_beholder.store import source_rows
from grimoire_beholder.store.server_engine import Store


@dataclass
class ItemStep:
    """What a sync does with one item: ``added``, ``changed``, ``updated``, ``moved``,
    ``unchanged``, ``removed``, ``skipped``, ``failed`` or ``left out``."""

    action: str
    item: SourceItem | None
    stored: source_rows.StoredOrigin | None
    info: FileInfo | None = None
    error: str | None = None

    @property
    def display(self) -> str:
        if self.item is None:
            assert self.stored is not None
            return f"{self.stored.slug} [{self.stored.item}]"
        return f"{self.item.title} [{self.item.key}]"


def content_key(info: FileInfo, item: SourceItem) -> str:
    return f"{info.sha256}:{item.annotations_hash()}"


def item_file(item: SourceItem, stored: source_rows.StoredOrigin | None) -> FileInfo:
    """The chosen file's identity; its stored hash reused when path, size and mtime agree."""
    assert item.file is not None
    path = item.file.resolve(strict=True)
    st = path.stat()
    if stored is not None and (stored.source_path, stored.source_size,
                               stored.source_mtime) == (str(path), st.st_size, st.st_mtime):
        return FileInfo(str(path), stored.content_key.split(":")[0], st.st_size, st.st_mtime)
    return file_info(path)


def plan(conn: Store, library: SourceLibrary, *, remove_missing: bool,
         within: list[str] | None = None) -> list[ItemStep]:
    """What bringing the library's books in line takes; reads files' stats, writes nothing.

    ``within``: a new item whose file (links followed) lies outside these folders is
    skipped (MCP ``add_book`` and ``sync_library``: a Zotero linked file can be anywhere).
    """
    stored = source_rows.stored_items(conn, str(library.path))
    dropped = source_rows.dropped_items(conn, str(library.path))
    steps: list[ItemStep] = []
    for item in library.items:
        old = stored.pop(item.key, None)
        if old is None and item.key in dropped:  # its book was deleted: it stays out
            steps.append(ItemStep("left out", item, None))
            continue
        if (within is not None and old is None and item.file is not None
                and not under(str(item.file.resolve()), within)):
            steps.append(ItemStep("skipped", item, None, error=f"its file {item.file} lies "
                               "outside the allowed folders"))
            continue
        if item.file is None:
            why = (f"no format grimoire-beholder can read ({', '.join(item.formats)})"
                   if item.formats else "no file: an entry with metadata only")
            steps.append(ItemStep("removed" if old else "skipped", item, old, error=why))
            continue
        try:
            info = item_file(item, old)
        except FileNotFoundError:  # the library's state, not a failure to fix here
            steps.append(ItemStep("skipped", item, old, error=_not_on_disk(library, item, old)))
            continue
        except (OSError, RuntimeError) as exc:
            steps.append(ItemStep("failed", item, old, error=f"cannot read {item.file} ({exc})"))
            continue
        if old is None:  # a book of this file ingested on its own is adopted
            old = library_moves.single_file_book(conn, info.path, info.sha256, item.key)
            if old is not None and not item.annotations:
                old = replace(old, content_key=content_key(info, item))
        if old is None:
            action = "added"
        elif content_key(info, item) != old.content_key:
            action = "changed"
        elif item.metadata_hash() != old.metadata_hash:
            action = "updated"
        elif info.path != old.source_path:
            action = "moved"
        else:  # the same bytes where they were (a touched file: its new stat is kept)
            action = "unchanged"
        steps.append(ItemStep(action, item, old, info))
    if remove_missing:
        steps += [ItemStep("removed", None, old) for old in stored.values()]
    return steps


def _not_on_disk(library: SourceLibrary, item: SourceItem,
                 old: source_rows.StoredOrigin | None) -> str:
    """Why an item whose every listed file is missing is skipped (Calibre's file removed by
    hand, a Zotero attachment not downloaded): ``…EPUB, PDF, but …epub is not on disk``."""
    app = KIND_NAMES[library.kind].split()[0]
    kept = "; its book is kept as last read" if old is not None else ""
    return (f"no file on disk: {app} lists {', '.join(item.formats)}, but {item.file} is "
            f"missing{kept}")


def under(path: str, dirs: list[str]) -> bool:
    """Whether ``path`` is one of ``dirs`` or lies below one (resolved strings)."""
    return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)
