"""The library's core verbs on the command line: ingest, sync, list, delete, status,
check, reindex-fts and query (``serve_commands`` has serve-mcp).

Each command parses its arguments, calls the Library, renders (``rendering``; a folder
ingest's or a sync's report, and ``sync --watch``'s, in ``sync_output``) and lets ``app`` map
errors. Commands register on ``app.app``; ``cli/entry.py`` imports this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from grimoire_beholder.cli.app import (
    ConfigOpt,
    JsonOpt,
    LibraryOpt,
    Mode,
    Role,
    SourceType,
    app,
    fail,
    input_path,
    non_blank,
    unit_share,
    with_library,
)
from grimoire_beholder.cli.help_pages import command
from grimoire_beholder.cli.query_and_list import run_list, run_query
from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.text import MOST_HITS, plural

if TYPE_CHECKING:
    from grimoire_beholder.library import BookRow, Library
    from grimoire_beholder.views import IngestReport, SyncReport

GlobOpt = Annotated[list[str] | None, typer.Option(
    metavar="GLOB",
    help="Glob (repeatable) matched against the path under the folder or the file name.",
    show_default=False)]


@command(app, 'Build the library', examples=(
    'grimoire-beholder ingest ~/Books/art-of-war.pdf',
    'grimoire-beholder ingest ~/notes --exclude drafts --include "*.md"',
    'grimoire-beholder ingest book.epub --name "The Art of War"',
))
def ingest(
    path: Annotated[Path, typer.Argument(
        parser=input_path,
        help="A .pdf, .epub, .md/.markdown/.mdx, .txt, .html or .docx file, a folder "
        "(recursive), a Calibre library or a Zotero data folder.")],
    name: Annotated[str | None, typer.Option(
        parser=non_blank, help="Display name (and slug) for the book.")] = None,
    force: Annotated[bool, typer.Option(help="Replace a different book with the same slug.")]
    = False,
    include: GlobOpt = None,
    exclude: GlobOpt = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress bars (warnings still show).")] = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Parse a file (or every file under a folder) into chapters, sections and chunks, then
    contextualize and embed them. A folder is remembered for `sync`; a Calibre library or
    Zotero data folder is read as such, one book per item with its metadata."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import RichProgress, err, fit
    from grimoire_beholder.cli.sync_output import finish_sync

    if path.is_dir():
        if name or force:
            fail("--name and --force apply to a single file, not a folder")

        progress = RichProgress(quiet=quiet, file_lines=not json_out)

        def run_folder(lib: Library) -> SyncReport:
            with progress:
                return lib.ingest_folder(path, include=tuple(include or ()),
                                         exclude=tuple(exclude or ()), progress=progress)

        finish_sync(with_library(config, run_folder, library=library, create=True).to_dict(),
                    json_out, progress.shown)
        return
    if include or exclude:
        fail("--include and --exclude apply to a folder, not a single file")

    def run(lib: Library) -> IngestReport:
        with RichProgress(quiet=quiet) as progress:
            return lib.ingest(path, name=name, force=force, progress=progress)

    report = with_library(config, run, library=library, create=True)
    if json_out:
        print_json(report.to_dict())
        return
    # Model work on a file that was already there is an interrupted ingest being finished.
    resumed = report.summaries or report.contexts or report.embedded
    status = "resumed" if resumed else "already in the library"
    if report.created:  # new, or cut again (in place, after its file if it moved)
        status = "replaced" if report.replaced else "added"
    verb = (f"{status}; its file moved from {report.moved_from} and the book follows it"
            if report.moved_from else
            f"{status} from {report.copy_of} (the same bytes; the book keeps that file)"
            if report.copy_of else status)
    if report.windowed:
        was = "was" if report.windowed == 1 else "were"
        err.print(f"note: {plural(report.windowed, 'chunk')} {was} longer than the embedding "
                  f"model's window and {was} embedded as averaged windows", markup=False)
    print(fit(f"{report.slug}: {verb} — {plural(report.chapters, 'chapter')}, "
              f"{plural(report.sections, 'section')}, {plural(report.chunks, 'chunk')}; "
              f"{report.embedded} embedded in {report.seconds:.1f}s"
              + (f" ({report.chunks_per_second:.1f} chunks/s)" if report.embedded else ""),
              2))


@command(app, 'Build the library', "sync", examples=(
    'grimoire-beholder sync',
    'grimoire-beholder sync ~/notes --dry-run',
    'grimoire-beholder sync --watch',
))
def sync_(
    folders: Annotated[list[Path] | None, typer.Argument(
        parser=input_path,
        help="Only books under these folders (default: every ingested file and folder).",
        show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would happen.")]
    = False,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Keep syncing as files change, until Ctrl-C.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress output (warnings still show).")] = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Bring the library in line with the files: re-embed only changed chunks, drop deleted
    files, follow moves, add new files under ingested folders."""
    from grimoire_beholder.cli.rendering import RichProgress, err
    from grimoire_beholder.cli.sync_output import finish_sync, watch_folders

    if watch and dry_run:
        fail("--watch and --dry-run cannot be combined")
    if watch:
        with_library(config, lambda lib: watch_folders(lib, folders, quiet=quiet,
                                                       json_out=json_out), library=library)
        return

    progress = RichProgress(quiet=quiet, file_lines=not json_out)

    def run(lib: Library) -> SyncReport:
        if dry_run:
            return lib.sync(folders or None, dry_run=True)
        with progress:
            return lib.sync(folders or None, progress=progress)

    data = with_library(config, run, library=library).to_dict()
    if dry_run and not json_out:
        from grimoire_beholder.views import FileOutcome

        for f in data["files"]:  # failed files follow on stderr, and skipped ones there
            line = FileOutcome(**f).describe()  # (a folder's as the warning naming them)
            if f["action"] == "skipped" and f"skipped {f['path']}: {f['error']}" not in data[
                    "warnings"]:
                err.print(line, markup=False)
            elif f["action"] not in ("unchanged", "failed", "skipped"):
                print(line)
    finish_sync(data, json_out, progress.shown)


@command(app, 'Read it', "list", examples=(
    'grimoire-beholder list',
    'grimoire-beholder list --json',
))
def list_(json_out: JsonOpt = False, config: ConfigOpt = None,
          library: LibraryOpt = None) -> None:
    """Every book with author, type, pages, chapters, sections and chunk status counts."""
    run_list(json_out=json_out, config=config, library=library)


@command(app, 'Build the library', examples=(
    'grimoire-beholder delete art-of-war',
    'grimoire-beholder delete 3 --yes',
    'grimoire-beholder delete art-of-war --yes --json',
))
def delete(
    book: Annotated[str, typer.Argument(help="Slug or id of the book to remove.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
    = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Remove a book and everything under it (one transaction)."""

    def run(lib: Library) -> BookRow:
        found = lib.book(book)
        if not yes:
            if not sys.stdin.isatty():
                raise GrimoireError("refusing to delete without confirmation; pass --yes")
            typer.confirm(f"Delete '{found.slug}' ({found.name}, "
                          f"{plural(found.chunks, 'chunk')})?",
                          abort=True, err=True)
        return lib.delete(found.id)

    removed = with_library(config, run, library=library)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json
        from grimoire_beholder.views import book_dict

        print_json({"deleted": book_dict(removed)})
    else:
        print(f"deleted {removed.slug}")
    if removed.source_root:
        from grimoire_beholder.cli.rendering import err

        err.print(f"note: sync leaves {removed.source_path} out from now on; `grimoire-beholder "
                  "ingest` of that file brings it back", markup=False)


@command(app, 'Build the library', "unfollow", examples=(
    'grimoire-beholder unfollow ~/notes',
    'grimoire-beholder unfollow ~/notes --delete-books',
))
def unfollow(
    folder: Annotated[Path, typer.Argument(
        parser=input_path,
        help="A folder given to `ingest DIR` earlier.")],
    delete_books: Annotated[bool, typer.Option(
        "--delete-books", help="Also delete the folder's books (default: keep them, as "
        "books of single files that sync still follows).")] = False,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Stop following a folder: sync adds none of its new files again."""
    root, books = with_library(
        config, lambda lib: lib.unfollow(folder, delete_books=delete_books), library=library)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json
        from grimoire_beholder.views import book_dict

        print_json({"folder": root, "books_deleted": delete_books,
                    "books": [book_dict(b) for b in books]})
        return
    what = "deleted" if delete_books else "kept as single files"
    print(f"unfollowed {root}: {plural(len(books), 'book')} {what}")


@command(app, 'Check it', examples=(
    'grimoire-beholder status',
    'grimoire-beholder status --json',
))
def status(json_out: JsonOpt = False, config: ConfigOpt = None,
           library: LibraryOpt = None) -> None:
    """The library's embedding model (and the configured one, when it differs), database
    path, and per-book counts by status."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import fit, out
    from grimoire_beholder.views import model_shown

    info = with_library(config, lambda lib: lib.status(), library=library, read_only=True)
    if json_out:
        print_json(info.to_dict())
        return
    c, stamp = info.chunks, info.embedding_stamp
    made = (f"embeddings: {stamp.shown}, {stamp.dimension} dimensions (the library's vectors)"
            if stamp else f"embeddings: {model_shown(info.embedding_configured)} (configured; "
            "nothing embedded yet)")
    lines = [f"database:   {info.database}",
             f"config:     {info.config_file or '(none: built-in defaults)'}",
             f"chosen by:  {info.chosen_by}", made,
             *([f"configured: {model_shown(info.embedding_configured)}, not the library's "
                f"model: {info.embedding_mismatch}"] if info.embedding_mismatch else []),
             f"contexts:   {info.llm_backend}"
             + (f" · {info.llm_model}" if info.llm_model else " (extractive, no LLM)"),
             f"chunks:     {c['embedded']} embedded, {c['contextualized']} contextualized, "
             f"{c['pending']} pending"]
    for line in lines:
        out.print(fit(line, 12), markup=False)
    for b in info.books:
        s = b.status
        state = "complete" if b.complete else "incomplete — run ingest again to resume"
        out.print(fit(f"  {b.slug}: {plural(b.chunks, 'chunk')} ({s['embedded']} "
                      f"embedded, {s['contextualized']} contextualized, {s['pending']} "
                      f"pending), {b.sections_summarized}/{b.sections} summaries — "
                      f"{state}", 4), markup=False)


@command(app, 'Check it', examples=(
    'grimoire-beholder check',
))
def check(json_out: JsonOpt = False, config: ConfigOpt = None,
          library: LibraryOpt = None) -> None:
    """Check the library file: SQLite's integrity check and the index consistency rules."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import out

    result = with_library(config, lambda lib: lib.check(), library=library, read_only=True)
    if json_out:
        print_json(result.to_dict())
    else:
        for problem in result.problems:
            out.print(f"problem: {problem}", markup=False)
        out.print(f"search index: {result.search_index}", markup=False)
        figures = ", ".join(plural(v, k.replace("_", " ")[:-1])  # "1 book", "0 fts rows"
                            for k, v in result.figures.items())
        verdict = "ok" if result.ok else plural(len(result.problems), "problem")
        out.print(f"{result.database}: {verdict} · {figures}", markup=False)
    if not result.ok:
        raise typer.Exit(1)


@command(app, 'Check it', "reindex-fts", examples=(
    'grimoire-beholder reindex-fts',
    'grimoire-beholder reindex-fts --book art-of-war',
))
def reindex_fts(
    book: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only this book (slug or id).")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Drop and rebuild the keyword (FTS5) index from embedded chunks."""
    count = with_library(config, lambda lib: lib.reindex_fts(book), library=library)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json

        print_json({"reindexed_chunks": count})
        return
    print(f"reindexed {plural(count, 'chunk')}")


@command(app, 'Ask it', examples=(
    'grimoire-beholder query "how is the lamp trimmed?"',
    'grimoire-beholder query "spies" --book art-of-war --top-k 3',
    'grimoire-beholder query "install on windows" --type markdown --json',
))
def query(
    question: Annotated[str, typer.Argument(help="What to look for, in your own words.")],
    book: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only this book (slug or id).")] = None,
    author: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only books by this author.")] = None,
    source_type: Annotated[SourceType | None, typer.Option(
        "--type", help="Only books of this kind.")] = None,
    mode: Annotated[Mode | None, typer.Option(
        help="How to search (default: retrieval_mode of the config).")] = None,
    group: Annotated[str | None, typer.Option(
        parser=non_blank,
        help="Only files in this top-level folder of an ingested folder.")] = None,
    path_prefix: Annotated[str | None, typer.Option(
        "--path-prefix", parser=non_blank, help="Only files whose absolute path, or path "
        "under the ingested folder, starts with this.")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", parser=non_blank, help="Only up to and including this chapter of --book "
        "(its index from the outline, or its title): no spoilers past where you are.")] = None,
    role: Annotated[list[Role] | None, typer.Option(
        metavar="ROLE", help="Only sections of this role (repeatable): "
        + ", ".join(Role) + ". Default: all, body text first.",
        show_default=False)] = None,
    tag: Annotated[str | None, typer.Option(
        parser=non_blank,
        help="Only books with this tag (from a Calibre or Zotero library).")] = None,
    collection: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only items of this Zotero collection.")] = None,
    series: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only books of this Calibre series.")] = None,
    top_k: Annotated[int | None, typer.Option(
        "--top-k", "-k", min=1, max=MOST_HITS, help="How many hits.")] = None,
    expand: Annotated[bool, typer.Option(help="Print each hit's whole section.")] = False,
    explain: Annotated[bool, typer.Option(help="Show each arm's rank and the fused score.")]
    = False,
    min_confidence: Annotated[float | None, typer.Option(
        "--min-confidence", parser=unit_share, metavar="NUMBER", help="Below this "
        "confidence (0 to 1), say the library probably does not cover the question "
        "(default: min_confidence).", show_default=False)] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Hybrid search over the library, with book · chapter · section · page citations."""
    run_query(question, book=book, author=author, source_type=source_type, mode=mode,
              group=group, path_prefix=path_prefix, until=until, role=role, tag=tag,
              collection=collection, series=series, top_k=top_k, expand=expand,
              explain=explain, min_confidence=min_confidence, json_out=json_out,
              config=config, library=library)
