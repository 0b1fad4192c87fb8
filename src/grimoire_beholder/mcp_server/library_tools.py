"""The MCP tools that show what the library holds: ``list_books`` and ``book_status`` — their
result shapes (the output schemas), their text, the tools themselves."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, Field, field_validator

from grimoire_beholder.citation import extent, relative_path
from grimoire_beholder.library import BookRow
from grimoire_beholder.mcp_server.serving import bounded_result, one_line, served, with_note
from grimoire_beholder.text import clip, plural
from grimoire_beholder.views import IngestedFolder, book_dict, find_folder, model_shown, shelves

T = TypeVar("T")
U = TypeVar("U")

PAGE_ENTRIES = 50  # books and folders per list_books / book_status page
MAX_LABELS = 30  # tags or collections per book
FOLDER_GROUPS = 12  # subfolders named in a folder's entry
FOLDER_FIRST = 5  # file names shown in a folder's entry
FOLDER_INCOMPLETE = 10  # unfinished files named in a folder's status

Offset = Annotated[int, Field(ge=0, description="Skip this many entries: the previous "
                              "page's next_offset. Leave out for the first page.")]
FolderRef = Annotated[str | None, Field(description=(
    "Expand one ingested folder: its path as listed in `folders` (or its last name, e.g. "
    "\"notes\", when no other folder has it). Leave out to list the books ingested one by "
    "one and each ingested folder as one entry."))]

class BookEntry(BaseModel):
    id: int = Field(description="Numeric book id (accepted wherever book_id is asked for).")
    slug: str = Field(description="Stable short name (also accepted as book_id).")
    name: str
    author: str | None
    source_type: str = Field(description="pdf, epub, markdown, text, html or docx.")
    page_count: int | None = Field(
        description="Pages (PDF), synthetic ~1,024-character pages (EPUB), else null.")
    line_count: int | None = Field(description="Lines (Markdown/text), else null.")
    group: str = Field(default="", description="Top-level folder within an ingested folder "
                       "(search_book's group filter); empty for files ingested one by one.")
    path: str | None = Field(default=None, description="Its file's path within its ingested "
                             "folder; null for files ingested one by one.")
    chapters: int
    sections: int
    approx_tokens: int
    tags: list[str] = Field(default_factory=list, description="Tags in its Calibre or Zotero "
                            "library (search_book's tag filter); at most 30 shown.")
    collections: list[str] = Field(default_factory=list, description="Its Zotero collections "
                                   "(search_book's collection filter).")
    series: str | None = Field(default=None, description="Its Calibre series "
                               "(search_book's series filter).")
    link: str | None = Field(default=None, description="Opens it in Calibre or Zotero.")

    @field_validator("tags", "collections")
    @classmethod
    def _bounded(cls, values: list[str]) -> list[str]:
        return values[:MAX_LABELS]


class FolderEntry(BaseModel):
    folder: str = Field(description="The ingested folder's path: list_books(folder=…) and "
                        "book_status(folder=…) expand it; search_book(path_prefix=…) "
                        "searches only it.")
    name: str = Field(description="Its last name (also accepted as folder).")
    files: int = Field(description="Books in it: one per file.")
    source_types: dict[str, int] = Field(description="Files by type, e.g. {\"markdown\": 96}.")
    groups: dict[str, int] = Field(description="Its top-level subfolders with their file "
                                   "counts, largest first (search_book's group filter); at "
                                   f"most {FOLDER_GROUPS}.")
    chunks: int
    approx_tokens: int
    first: list[str] = Field(description=f"The names of its first {FOLDER_FIRST} files "
                             "(books before notes).")


class BookList(BaseModel):
    count: int = Field(description="Books in the library, those in ingested folders included.")
    folder: str | None = Field(default=None, description="The folder expanded, if one was "
                               "asked for (then `books` are its files).")
    entries: int = Field(description="Entries at this level: books ingested one by one plus "
                         "folders, or the files of the folder expanded.")
    offset: int = Field(default=0, description="Entries skipped before this page.")
    books: list[BookEntry]
    folders: list[FolderEntry] = Field(default_factory=list)
    next_offset: int | None = Field(default=None, description="Pass as offset for the next "
                                    "page; null on the last page.")
    note: str | None = None


class BookStatus(BaseModel):
    id: int
    slug: str
    name: str
    chapters: int
    sections: int
    sections_summarized: int
    chunks: int
    status: dict[str, int] = Field(description="Chunks by stage: pending, contextualized, "
                                               "embedded (searchable by meaning).")
    complete: bool
    health: dict[str, Any] | None = Field(
        default=None, description="The last `grimoire-beholder health` check of this book: "
        "reachability (share of sections retrieval finds from their own text), pages "
        "without text, problems found; null if never checked.")


class FolderStatus(BaseModel):
    folder: str = Field(description="The ingested folder's path (book_status(folder=…) "
                        "shows each of its files).")
    name: str
    files: int
    complete: int = Field(description="Files whose ingest is complete.")
    incomplete: list[str] = Field(description="Slugs of files still being ingested (at most "
                                  f"{FOLDER_INCOMPLETE}).")
    chunks: int
    status: dict[str, int] = Field(description="Its chunks by stage.")
    health_checked: int = Field(description="Files a `grimoire-beholder health` run checked.")
    lowest_reachability: float | None = Field(
        default=None, description="The lowest reachability among the files checked.")
    lowest_reachable: str | None = Field(default=None, description="That file's slug.")


class LibraryStatus(BaseModel):
    embedding_backend: str = Field(description="The configured embedding backend.")
    embedding_model: str = Field(description="The configured embedding model.")
    embedding_stamp: dict[str, Any] | None = Field(
        default=None, description="The model the library's vectors were made with: "
        "identity (backend:model) and dimension; null before anything is embedded.")
    embedding_mismatch: str | None = Field(
        default=None, description="Set when the configured model is not the library's: "
        "searches fail until the person running the server does what this says.")
    llm_backend: str
    retrieval_mode: str
    chunks: dict[str, int]
    folder: str | None = Field(default=None, description="The folder expanded, if one was "
                               "asked for (then `books` are its files).")
    entries: int = Field(description="Entries at this level: books ingested one by one plus "
                         "folders, or the files of the folder expanded.")
    offset: int = Field(default=0, description="Entries skipped before this page.")
    books: list[BookStatus]
    folders: list[FolderStatus] = Field(default_factory=list)
    next_offset: int | None = Field(default=None, description="Pass as offset for the next "
                                    "page; null on the last page.")
    savings: dict[str, Any] | None = Field(
        default=None, description="Characters served by searches vs the full size of the "
                                  "books they came from (the context this library saved).")
    note: str | None = None


def books_text(result: BookList) -> str:
    """A heading, then one line per book (ids, name, author, size, group) and one per
    ingested folder (its path, size, subfolders and how to expand or search it)."""
    where = f" in folder {one_line(result.folder)}" if result.folder else ""
    lines = [f"{plural(result.count, 'book')} in the library; "
             + _page(result.entries, where, result.offset,
                     len(result.books) + len(result.folders), result.next_offset) + ":"]
    for b in result.books:
        size = extent(b.source_type, b.page_count, b.line_count)
        lines.append(f"- id={b.id} slug={b.slug}: {one_line(b.name)}"
                     + (f" — {one_line(b.author)}" if b.author else "")
                     + f" [{b.source_type}, {size}, {plural(b.chapters, 'chapter')}, "
                     + plural(b.sections, "section")
                     + (f", group={one_line(b.group)}" if b.group else "")
                     + (f", file {one_line(b.path)}" if b.path else "") + "]"
                     + one_line(_labels(b.series, b.collections, b.tags, b.link)))
    lines += [_folder_line(f) for f in result.folders]
    return with_note(lines, result.note)


def _page(entries: int, where: str, offset: int, shown: int, next_offset: int | None) -> str:
    """``3 entries, all shown`` or ``62 entries in folder X, 51–62 shown`` (and where the
    next page starts)."""
    head = plural(entries, "entry", "entries") + where
    if offset == 0 and next_offset is None:
        return f"{head}, all shown"
    if not shown:
        return f"{head}, none from offset {offset}"
    return (f"{head}, {offset + 1}–{offset + shown} shown"
            + (f" (more: offset={next_offset})" if next_offset is not None else ""))


def _folder_line(f: FolderEntry) -> str:
    """One ingested folder: size, types, subfolders, first names, how to open it."""
    groups = ", ".join(f"{one_line(g)} {n}" for g, n in f.groups.items())
    return (f"- folder {one_line(f.folder)!r}: {plural(f.files, 'file')} ("
            + ", ".join(f"{n} {t}" for t, n in f.source_types.items()) + ")"
            + (f", subfolders {groups}" if groups else "")
            + f", {plural(f.chunks, 'chunk')}; first: "
            + "; ".join(one_line(n) for n in f.first)
            + f" — expand: list_books(folder={f.folder!r}); search only it: "
            f"search_book(path_prefix={f.folder!r})")
def _labels(series: str | None, collections: list[str], tags: list[str],
            link: str | None) -> str:
    """`` series=… collections=… tags=… link=…`` for a Calibre or Zotero book, else ""."""
    parts = [f"series={series}"] if series else []
    if collections:
        parts.append("collections=" + "; ".join(collections))
    if tags:
        parts.append("tags=" + ", ".join(tags))
    if link:
        parts.append(f"open: {link}")
    return (" " + " ".join(parts)) if parts else ""


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items())


def status_text(result: LibraryStatus) -> str:
    """Models and retrieval mode, characters saved so far, then one line per book and per
    ingested folder; "not checked" is said once for all the books never health-checked."""
    stamp, configured = result.embedding_stamp, (f"{result.embedding_backend} · "
                                                 f"{result.embedding_model}")
    made = (f"{model_shown(stamp['identity'])} ({stamp['dimension']} dimensions)" if stamp
            else f"{configured} (configured; nothing embedded yet)")
    lines = [f"embeddings: {made}; retrieval: {result.retrieval_mode}; "
             f"chunks: {_counts(result.chunks)}"]
    if result.embedding_mismatch:
        lines.append(f"the server is configured for {configured}, not the library's model: "
                     f"{result.embedding_mismatch}")
    savings = result.savings or {}
    if savings.get("searches"):
        lines.append(f"searches so far served {savings.get('chars_served', 0):,} characters "
                     f"from books totalling {savings.get('chars_books', 0):,}")
    where = f" in folder {one_line(result.folder)}" if result.folder else ""
    lines.append(_page(result.entries, where, result.offset,
                       len(result.books) + len(result.folders), result.next_offset) + ":")
    lines += [f"- {b.slug} (id={b.id}): {plural(b.chapters, 'chapter')}, "
              f"{plural(b.sections, 'section')} ({b.sections_summarized} summarized), "
              f"{plural(b.chunks, 'chunk')} ({_counts(b.status)})"
              f" — " + ("complete" if b.complete else "incomplete") + _health(b)
              for b in result.books]
    lines += [_folder_status_line(f) for f in result.folders]
    unchecked = sum(1 for b in result.books if not b.health)
    unchecked += sum(f.files - f.health_checked for f in result.folders)
    if unchecked:
        lines.append(f"health: {plural(unchecked, 'book')} listed here not checked yet "
                     "(`grimoire-beholder health` checks them)")
    return with_note(lines, result.note)


def _folder_status_line(f: FolderStatus) -> str:
    """One ingested folder: files complete, chunks by stage, its health in one clause."""
    line = (f"- folder {one_line(f.folder)!r}: {f.complete} of {plural(f.files, 'file')} "
            f"complete, {plural(f.chunks, 'chunk')} ({_counts(f.status)})")
    if f.incomplete:
        line += "; unfinished: " + ", ".join(f.incomplete)
    if f.health_checked:
        line += f"; health checked {f.health_checked} of {f.files}"
        if f.lowest_reachability is not None:
            line += f", lowest {f.lowest_reachability:.0%} reachable ({f.lowest_reachable})"
    return line


def _health(book: BookStatus) -> str:
    """`; health (2026-01-02): 94% reachable; scanned pages …` from the last health check;
    "" when never checked (said once, for all such books, by status_text)."""
    h = book.health
    if not h:
        return ""
    reach = h.get("reachability")
    parts = [f"{reach:.0%} of sections reachable" if reach is not None else "not probed"]
    if h.get("pages_without_text"):
        parts.append(f"pages without text: {h['pages_without_text']}")
    parts += list(h.get("problems") or [])[:3]
    return f"; health ({str(h.get('checked_at', ''))[:10]}): " + "; ".join(parts)


def _level(books: list[BookRow], folder: str | None,
           ) -> tuple[str | None, list[BookRow], list[IngestedFolder]]:
    """What one level shows: the books ingested one by one and each ingested folder, or
    (``folder`` given) that folder's files; ToolError naming the folders for an unknown one."""
    singles, folders = shelves(books)
    if folder is None:
        return None, singles, folders
    found = find_folder(folders, folder)
    if found is None:
        known = ", ".join(repr(f.root) for f in folders[:10]) or "none"
        raise ToolError(f"no ingested folder {clip(folder, 200)!r}; ingested folders: {known} "
                        "(list_books shows them)")
    return found.root, list(found.books), []


def _page_of(singles: list[T], folders: list[U], offset: int,
             ) -> tuple[list[T], list[U], int | None]:
    """One page of PAGE_ENTRIES entries from books then folders, and the next offset."""
    books = singles[offset:offset + PAGE_ENTRIES]
    start = max(0, offset - len(singles))
    shown_folders = folders[start:start + PAGE_ENTRIES - len(books)]
    end = offset + len(books) + len(shown_folders)
    return books, shown_folders, end if end < len(singles) + len(folders) else None


def _folder_entry(folder: IngestedFolder) -> FolderEntry:
    types: dict[str, int] = {}
    for b in folder.books:
        types[b.source_type] = types.get(b.source_type, 0) + 1
    return FolderEntry(
        folder=folder.root, name=folder.name, files=len(folder.books), source_types=types,
        groups=dict(folder.groups()[:FOLDER_GROUPS]),
        chunks=sum(b.chunks for b in folder.books),
        approx_tokens=sum(b.approx_tokens for b in folder.books),
        first=[b.name for b in folder.books[:FOLDER_FIRST]])


def _book_entry(book: BookRow) -> BookEntry:
    entry = BookEntry.model_validate(book_dict(book))
    if book.source_root:
        entry.path = relative_path(book.source_path, book.source_root)
    return entry


def list_books(ctx: Context, folder: FolderRef = None,
               offset: Offset = 0) -> Annotated[CallToolResult, BookList]:
    """List the library: each book ingested one by one (id, slug, name, author, type, pages
    or lines, chapters, sections; tags, collections, series and link for books from Calibre
    or Zotero), real books before notes, and each ingested folder as ONE entry (its path,
    file count, subfolders, first names). list_books(folder=PATH) lists that folder's files
    as books. Long lists come in pages: pass the result's next_offset as offset.

    Use it to find a book_id (the numeric id or the slug both work) for get_book_outline,
    get_section, or to restrict search_book to one book, group or folder (path_prefix)."""
    books = served(ctx).run(lambda lib: lib.list_books())
    shown, singles, folders = _level(books, folder)
    page_books, page_folders, next_offset = _page_of(singles, folders, offset)
    note = ("The library is empty: books are added with `grimoire-beholder ingest FILE`."
            if not books else None if page_books or page_folders else
            f"offset {offset} is past the last entry ({len(singles) + len(folders)}).")
    result = BookList(count=len(books), folder=shown, entries=len(singles) + len(folders),
                      offset=offset,
                      books=[_book_entry(b) for b in page_books],
                      folders=[_folder_entry(f) for f in page_folders],
                      next_offset=next_offset, note=note)
    return bounded_result(books_text, result)


def _folder_status(folder: IngestedFolder, states: dict[int, BookStatus]) -> FolderStatus:
    members = [states[b.id] for b in folder.books if b.id in states]
    stages: dict[str, int] = {}
    for m in members:
        for stage, n in m.status.items():
            stages[stage] = stages.get(stage, 0) + n
    checked = [m for m in members if m.health]
    reached = [(m.health.get("reachability"), m.slug) for m in checked
               if m.health and m.health.get("reachability") is not None]
    lowest = min(reached) if reached else (None, None)
    return FolderStatus(
        folder=folder.root, name=folder.name, files=len(folder.books),
        complete=sum(m.complete for m in members),
        incomplete=[m.slug for m in members if not m.complete][:FOLDER_INCOMPLETE],
        chunks=sum(m.chunks for m in members), status=stages,
        health_checked=len(checked), lowest_reachability=lowest[0],
        lowest_reachable=lowest[1])


def book_status(ctx: Context, folder: FolderRef = None,
                offset: Offset = 0) -> Annotated[CallToolResult, LibraryStatus]:
    """Per book ingested one by one: chapters, sections (and how many are summarized), and
    chunks by stage (pending → contextualized → embedded); per ingested folder, ONE entry:
    files complete, chunks by stage, health checked. book_status(folder=PATH) shows each
    file of that folder. A book is searchable by meaning once its chunks are embedded;
    'complete' is false while an ingest is unfinished. Also names the embedding model the
    library's vectors were made with (and, when the server is configured for another, that
    searches fail until it is set back), the retrieval mode, and each book's last health
    check (how much of it retrieval finds, pages without text, parse problems). Pages: pass
    next_offset as offset."""
    state = served(ctx)
    info, books = state.run(lambda lib: (
        {**lib.status().to_dict(),  # no savings kept for a library in a server yet
         "savings": None if lib.server else lib.savings().to_dict()}, lib.list_books()))
    states = {s.id: s for s in (BookStatus.model_validate(b) for b in info["books"])}
    shown, singles, folders = _level(books, folder)
    page_books, page_folders, next_offset = _page_of(singles, folders, offset)
    note = (None if page_books or page_folders or not books else
            f"offset {offset} is past the last entry ({len(singles) + len(folders)}).")
    result = LibraryStatus.model_validate({
        **info, "retrieval_mode": state.library.config.retrieval_mode, "folder": shown,
        "entries": len(singles) + len(folders), "offset": offset,
        "books": [states[b.id] for b in page_books if b.id in states],
        "folders": [_folder_status(f, states) for f in page_folders],
        "next_offset": next_offset, "note": note})
    return bounded_result(status_text, result)
