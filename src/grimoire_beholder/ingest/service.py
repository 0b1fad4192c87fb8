"""Ingesting one file: checks, parse, store the structure atomically, run the model stages.

Order matters for the "never a half-written book" promise: every check that can fail on bad
input or missing models happens before the first write, and the whole structure (book,
chapters, sections, pending chunks) is inserted in one transaction. After that, the model
stages checkpoint as they go, so an interrupted ingest is resumed by running it again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import asdict, fields, replace
from pathlib import Path

from grimoire_beholder import faults
from grimoire_beholder.citation import relative_path
from grimoire_beholder.errors import SlugConflictError
from grimoire_beholder.ingest.build import FileInfo, book_slug, file_info, prepare_book
from grimoire_beholder.ingest.deps import IngestDeps
from grimoire_beholder.ingest.folder import group_of
from grimoire_beholder.ingest.progress import Progress
from grimoire_beholder.parse.document import one_line_name
from grimoire_beholder.parse.source import stat_source
from grimoire_beholder.store import book_rows, folders, source_rows
from grimoire_beholder.store.records import BookRow, NewBook
from grimoire_beholder.store.server_engine import Store
from grimoire_beholder.store.transactions import transaction
from grimoire_beholder.views import IngestReport, StageCounts


def store_book(deps: IngestDeps, book: NewBook, progress: Progress, *,
               in_place_of: int | None = None, removing: Collection[int] = (),
               then: Callable[[int], None] | None = None) -> tuple[int, int, StageCounts]:
    """Write a prepared book in one transaction (:func:`write_book`), then run its model
    stages. Returns (book id, vectors reused, stage report)."""
    with deps.book_writer(slug=book.slug):
        book_id, reused = write_book(deps, book, in_place_of=in_place_of, removing=removing,
                                     then=then)
    return book_id, reused, deps.run_stages(book_id, progress)


def write_book(deps: IngestDeps, book: NewBook, *, in_place_of: int | None = None,
               removing: Collection[int] = (), then: Callable[[int], None] | None = None
               ) -> tuple[int, int]:
    """Write a prepared book in one transaction: (its id, vectors reused).

    ``in_place_of`` replaces that book keeping its id and slug, and carries over the work
    done for every unchanged chunk (see ``store.folders.replace_book``); ``removing`` are
    books deleted in the same transaction; ``then(book_id)`` writes more in it (where an
    external library's book came from).
    """
    reused = 0
    with transaction(deps.conn):
        for old in removing:
            book_rows.delete_book(deps.conn, old)
        if in_place_of is not None:
            reused = folders.replace_book(deps.conn, in_place_of, book).vectors
            book_id = in_place_of
        else:
            book_id = book_rows.insert_book(deps.conn, book)
        if then is not None:
            then(book_id)
        faults.reached("structure.before_commit")
    return book_id, reused


def _slug_owner(conn: Store, slug: str, source_hash: str,
                force: bool) -> BookRow | None:
    """The book a new file would replace (with ``force``), or None if the slug is free."""
    existing = book_rows.find_book(conn, slug)
    if existing is None or existing.source_hash == source_hash:
        return existing
    if not force:
        raise SlugConflictError(
            f"slug '{slug}' is already taken by {existing.source_path}; use --name to give "
            "this one another name, or --force to replace that book (it is deleted)")
    return existing


def ingest_file(deps: IngestDeps, path: Path, *, name: str | None, force: bool,
                progress: Progress) -> IngestReport:
    """Ingest one file: its book, new or resumed (the same bytes are never two books).

    ``force`` replaces what stands in the way of a new file — another book holding the
    slug, the book of a file it copies — with a warning naming each; and cuts the file's
    own book (edited or not, or moved here since) again *in place*: same id, slug and name
    (unless ``name`` renames it), folder and group (none once moved out of its folder),
    unchanged chunks' work kept, as sync replaces a changed file, and a Calibre/Zotero
    book's origin (see :func:`_keep_origin`). A refusal writes nothing, not even a move.
    A ``name`` of nothing but spaces and line breaks names nothing, as an empty one does.
    """
    if name is not None and not one_line_name(name):
        name = None
    stat_source(path)
    info = file_info(path)
    conn = deps.conn
    links = [f"{path} is a link to {info.path}: that file is the book's (sync follows it)"
             ] if path.is_symlink() else []
    for note in links:
        progress.message(f"note: {note}")
    with deps.file_writer(info.sha256, str(path)):
        deps.check_models()
        edited = _edited_books(conn, info, path, force)
        same = _same_bytes(conn, info)
        wanted_slug = book_slug(name, path, info.sha256) if name else None
        if same is not None and not force:
            if wanted_slug and wanted_slug != same.slug:
                raise SlugConflictError(
                    f"{path} is already in the library as '{same.slug}'; use --force to "
                    f"re-ingest it as '{wanted_slug}'")
            moved_from = _follow_if_moved(conn, same, info)
            stages = deps.run_stages(same.id, progress)
            report = _report(conn, same.id, created=False, replaced=False, stages=stages,
                             warnings=links)
            report.moved_from = moved_from
            report.copy_of = None if moved_from or same.source_path == info.path else (
                same.source_path)
            return report

        own = next(iter(book_rows.books_of_file(conn, info.path)), None)
        moved_from = None
        if own is None and same is not None and _moved_here(same, info):
            own, moved_from = same, same.source_path  # re-cut where it now is (in place)
        origin = source_rows.origins(conn, [own.id]).get(own.id) if own else None

        def naming(suggested: str) -> tuple[str, str]:
            if not name:
                if own is not None:
                    return own.slug, own.name  # a re-cut keeps them, as sync does
                return book_slug(suggested, path, info.sha256), suggested
            assert wanted_slug is not None
            return wanted_slug, one_line_name(name) or one_line_name(path.stem)

        root, group = _place(own, info) if own else (None, "")
        prepared = prepare_book(path, info, deps.config, label=str(path), progress=progress,
                                naming=naming, limit=deps.chunk_limit, root=root, group=group)
        if origin is not None and own is not None:  # the library's author, not the file's
            prepared.book.author = own.author
        with deps.book_writer(slug=prepared.book.slug):  # a server's other writers
            replaced = _slug_owner(conn, prepared.book.slug, info.sha256, force)
            # a copy's book, unless the file has its own: then the copy is another
            # folder's book (sync follows the same bytes in two folders) and stays
            copy = same if own is None or (same is not None and same.id == own.id) else None
            other = _other_files_book(replaced, own, copy, edited, path)
            others = [other] if other else []
            if copy is not None and own is None:  # a live book of another file: say so
                others.append(f"replaced '{copy.slug}' (id {copy.id}), the book of "
                              f"{copy.source_path}, which has the same bytes")
            for warning in others:
                progress.message(f"warning: {warning}")
            removing = {b.id for b in (replaced, copy, *edited) if b is not None}
            in_place = own.id if own is not None else None
            removing.discard(in_place)
            book_id, _ = write_book(deps, prepared.book, in_place_of=in_place,
                                    removing=sorted(removing),
                                    then=_keep_origin(conn, origin))
        stages = deps.run_stages(book_id, progress)
        report = _report(conn, book_id, created=True,
                         replaced=bool(removing) or in_place is not None,
                         stages=stages,
                         warnings=links + others + prepared.warnings)
        report.moved_from = moved_from
        return report


def _other_files_book(replaced: BookRow | None, own: BookRow | None, copy: BookRow | None,
                      edited: list[BookRow], path: Path) -> str | None:
    """What replacing ``replaced``, the book holding the new slug, costs when it is another
    file's book: a warning naming it (the README's "``--force`` replaces it" for a new file),
    or a refusal when this file already has a book of its own — re-cutting that book must not
    delete another (``--name`` naming a taken slug). None when it is this file's own book."""
    if replaced is None or replaced.id in {b.id for b in (own, copy, *edited) if b}:
        return None
    if own is not None:
        raise SlugConflictError(
            f"slug '{replaced.slug}' is taken by another book, of {replaced.source_path}; "
            f"--force re-cuts {path}'s own book '{own.slug}' and replaces no other: give "
            "--name another name")
    return (f"replaced '{replaced.slug}' (id {replaced.id}), the book of "
            f"{replaced.source_path}, which held that slug")


def _keep_origin(conn: Store, origin: source_rows.Origin | None
                 ) -> Callable[[int], None] | None:
    """Writes back the Calibre or Zotero origin of a book re-cut in place by ``ingest
    --force``, marked as changed (no content key), so the next sync of that library
    ingests the item again as its own (with the reader's annotations, which the file
    alone does not hold); None for a book of no such library."""
    if origin is None:
        return None
    stale = replace(origin, metadata={**origin.metadata, "content_key": ""})
    return lambda book_id: source_rows.save_origin(conn, book_id, stale)


def _edited_books(conn: Store, info: FileInfo, path: Path,
                  force: bool) -> list[BookRow]:
    """The books of this very file whose bytes have changed since: ``--force`` replaces them;
    without it, a refusal, never a second book of one file (its new title would otherwise
    give it a new slug, and both books would then follow the file)."""
    edited = [b for b in book_rows.books_of_file(conn, info.path)
              if b.source_hash != info.sha256]
    if edited and not force:
        raise SlugConflictError(
            f"{path} has changed since it was ingested as '{edited[0].slug}'; run "
            f"`grimoire-beholder sync {path}` to update that book in place (same id, only "
            "changed chunks re-embedded), or add --force to replace it")
    return edited


def _same_bytes(conn: Store, info: FileInfo) -> BookRow | None:
    """The book these bytes already are: this file's own; else one whose file is gone (it
    moved here, and is followed); else the first by id, whose file this one copies. Never
    a live book of another file when the moved one is there too (sync keeps the same bytes
    in two folders as two books), so ``--force`` re-cuts only the book it is about."""
    books = book_rows.books_with_hash(conn, info.sha256)
    return (next((b for b in books if b.source_path == info.path), None)
            or next((b for b in books if not Path(b.source_path).is_file()), None)
            or next(iter(books), None))


def _moved_here(book: BookRow, info: FileInfo) -> bool:
    """Whether the book's file moved to ``info.path``: it is elsewhere and gone from there.

    The book's file still in place means the file named now is a copy: the book keeps its
    own file, which is what a later sync compares and what citations name."""
    return book.source_path != info.path and not Path(book.source_path).is_file()


def _place(book: BookRow, info: FileInfo) -> tuple[str | None, str]:
    """(folder, group) of ``book`` with its file at ``info.path``: its own while the file is
    under its folder, else none (a single file's book), as sync records a move."""
    relative = relative_path(info.path, book.source_root)
    if book.source_path == info.path:
        return book.source_root, book.source_group
    return (book.source_root, group_of(relative)) if relative else (None, "")


def _follow_if_moved(conn: Store, book: BookRow, info: FileInfo) -> str | None:
    """The old path when the book's file moved to ``info.path`` (and the book now points
    there, as sync does for a move); None when it did not move (:func:`_moved_here`)."""
    if not _moved_here(book, info):
        return None
    root, group = _place(book, info)
    with transaction(conn):
        book_rows.relocate_book(conn, book.id, source_path=info.path,
                                 source_mtime=info.mtime, source_root=root,
                                 source_group=group)
    return book.source_path


def _report(conn: Store, book_id: int, *, created: bool, replaced: bool,
            stages: StageCounts, warnings: list[str]) -> IngestReport:
    book = book_rows.find_book(conn, book_id)
    assert book is not None
    return IngestReport(
        slug=book.slug, name=book.name, book_id=book.id, source_path=book.source_path,
        created=created, replaced=replaced, chapters=book.chapters, sections=book.sections,
        chunks=book.chunks, warnings=warnings, **asdict(stages),
    )


def resume(deps: IngestDeps, progress: Progress) -> StageCounts:
    """Finish the model stages of every book an earlier run left unfinished (after a crash
    or a dead model server), under the library's writer lock and, on a server, each book's
    own lock. What the stages did, summed."""
    total = StageCounts()
    with deps.library_writer():
        unfinished = folders.unfinished_books(deps.conn)
        for book in book_rows.list_books(deps.conn):
            if book.id not in unfinished:
                continue
            with deps.book_writer(book.source_hash):
                done = deps.run_stages(book.id, progress)
            for field in fields(StageCounts):
                setattr(total, field.name, getattr(total, field.name) + getattr(done, field.name))
    return total
