"""CLI commands that check and show what the library holds: ``verify`` (a quotation),
``page`` (a PDF page as a PNG with a passage highlighted), ``health`` (per book) and
``lookup`` (a term in the books' printed indexes).

Like the other command modules they parse, call the Library, render and let ``app`` map
errors; they register on the one Typer app (``cli/entry.py`` imports this module).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grimoire_beholder.cli.app import (
    ConfigOpt,
    JsonOpt,
    LibraryOpt,
    app,
    non_blank,
    with_library,
)
from grimoire_beholder.cli.help_pages import command
from grimoire_beholder.text import plural


@command(app, 'Ask it', examples=(
    'grimoire-beholder verify "All warfare is based on deception"',
    'grimoire-beholder verify "the lamp must be trimmed" --book lighthouse-keepers-handbook',
))
def verify(
    quote: Annotated[str, typer.Argument(
        help="The quotation, as you have it (at most 5,000 characters).")],
    book: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only this book (slug or id).")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Check a quotation: where it is (book, chapter, section, page or lines), the book's own
    words, and what differs. Exit code 1 when it is not found."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import out

    data = with_library(config, lambda lib: lib.verify_quote(quote, book=book).to_dict(),
                        library=library, read_only=True)
    if json_out:
        print_json(data)
    else:
        passage = data["passage"]
        verdicts = {"exact": "found", "close": "found, with differences",
                    "not_found": "NOT FOUND"}
        out.print(f"{verdicts[data['verdict']]} (similarity {data['similarity']:.2f})",
                  markup=False)
        if data["note"]:
            out.print(data["note"], markup=False)
        if passage:
            label = "at" if data["found"] else "closest passage"
            out.print(f"{label}: {passage['citation']} · characters "
                      f"{passage['char_start']}–{passage['char_end']} of section "
                      f"{passage['chapter_index']}.{passage['section_index']}", markup=False)
            out.print(f"the book: “{passage['text']}”", markup=False)
        for line in data["differences"]:
            out.print(f"  - {line}", markup=False)
    if not data["found"]:
        raise typer.Exit(1)


@command(app, 'Read it', examples=(
    'grimoire-beholder page art-of-war 12 --highlight "All warfare is based on deception"',
    'grimoire-beholder page art-of-war xii --printed -o page.png',
    'grimoire-beholder page art-of-war 12 -o - | display -',
))
def page(
    book: Annotated[str, typer.Argument(help="Slug or id of a PDF book.")],
    page_: Annotated[str, typer.Argument(
        metavar="PAGE", help="Physical page number (1 = first), or a printed label like xii.")],
    highlight: Annotated[str | None, typer.Option(
        help="Text to highlight on the page (a quotation or a search hit's text).")] = None,
    printed: Annotated[bool, typer.Option(
        "--printed", help="Read PAGE as the printed page label, even if it is a number.")]
    = False,
    output: Annotated[str | None, typer.Option(  # a str: Path("./-") is Path("-")
        "--output", "-o", metavar="FILE", help="PNG file to write (default: BOOK-pPAGE.png "
        "here; a name for another image format, like .jpg, is refused); - writes the PNG "
        "to standard output (a pipe or a file, not a terminal), "
        "./- a file named -.")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Write a PDF page as a PNG with the cited words highlighted (the library is only read).
    Exit code 1 when the --highlight text is not on the page (the page is still written).
    With -o - stdout carries the PNG's bytes alone and what is said goes to stderr."""
    from grimoire_beholder.cli.app import fail
    from grimoire_beholder.cli.plain_output import binary_to_stdout, print_json
    from grimoire_beholder.cli.rendering import err

    to_stdout = output == "-"
    if to_stdout:
        _stdout_takes_png(json_out)
    elif output is not None:
        _named_as_png(Path(output))
    image = with_library(config, lambda lib: lib.page_image(book, page_, highlight,
                                                             printed=printed),
                         library=library, read_only=True)
    target = Path(output) if output is not None else Path(f"{image.slug}-p{image.page}.png")
    if to_stdout:
        try:
            binary_to_stdout(image.png)
        except OSError as exc:
            fail(f"cannot write the PNG to standard output: {exc.strerror or exc}")
    else:
        _write_png(target, image.png)
    if image.note:
        err.print(f"note: {image.note}", markup=False)
    if json_out:
        print_json({**image.to_dict(), "path": str(target)})
        if highlight and not image.boxes:
            raise typer.Exit(1)
        return
    label = f" (printed {image.page_label})" if image.page_label else ""
    marked = f", {len(image.boxes)} highlighted line(s)" if image.boxes else ""
    where = "the PNG to standard output" if to_stdout else target
    said = (f"wrote {where}: page {image.page}{label} of {image.page_count}, "
            f"{image.width}×{image.height} px{marked}")
    if to_stdout:
        err.print(said, markup=False)
    else:
        print(said)
    if highlight and not image.boxes:  # the page is written, but not what was asked for
        raise typer.Exit(1)


def _stdout_takes_png(json_out: bool) -> None:
    """Refuse ``-o -`` where the bytes cannot go: with ``--json`` (both would be on stdout)
    or to a terminal, where a PNG only garbles the screen (gzip and zstd refuse the same)."""
    import sys

    from grimoire_beholder.cli.app import fail

    if json_out:
        fail("-o - writes the PNG to standard output, where --json would go too; "
             "give -o a file name with --json")
    if sys.stdout.isatty():
        fail("not writing a PNG image to a terminal (-o -): redirect standard output "
             "(> page.png, | viewer) or give -o a file name")


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Names that promise another format: a PNG written under them misleads the viewer or the
# person (a .jpg that is a PNG), so they are refused before anything is read.
_OTHER_IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".jpe", ".jfif", ".gif", ".webp", ".tif",
                                   ".tiff", ".bmp", ".avif", ".heic", ".svg", ".pdf", ".eps",
                                   ".ico", ".ppm", ".pgm", ".pbm", ".pnm"})


def _named_as_png(target: Path) -> None:
    """Refuse an output file named for another image format (``-o page.jpg``)."""
    from grimoire_beholder.cli.app import fail

    if target.suffix.lower() in _OTHER_IMAGE_SUFFIXES:
        fail(f"page writes PNG images, not {target.suffix} ones: name the file "
             f"{target.with_suffix('.png').name}")


def _write_png(target: Path, png: bytes) -> None:
    """Write the image, but never over a file that is not a PNG: ``-o book.db`` or ``-o``
    the book's own PDF would otherwise destroy the library or the book."""
    from grimoire_beholder.cli.app import fail

    try:
        if target.is_dir():
            fail(f"{target} is a folder; give the PNG file to write, e.g. {target / 'page.png'}")
        if target.exists():
            with target.open("rb") as existing:
                if existing.read(len(_PNG_SIGNATURE)) != _PNG_SIGNATURE:
                    fail(f"{target} exists and is not a PNG image; not overwriting it")
        target.write_bytes(png)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")


@command(app, 'Check it', examples=(
    'grimoire-beholder health',
    'grimoire-beholder health art-of-war --json',
))
def health(
    book: Annotated[str | None, typer.Argument(help="Slug or id (default: every book).")]
    = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Per book: how much of it retrieval finds from its own text, and what looks wrong
    (pages without text, empty sections, contents pages, garbled text). The summary is kept
    for the MCP book_status."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import out

    reports = with_library(config, lambda lib: [r.to_dict() for r in lib.health(book)],
                           library=library, resumable=False)
    if json_out:
        print_json(reports)
        return
    if not reports:  # only without BOOK: a book that is not there is an error
        from grimoire_beholder.cli.rendering import err

        err.print("The library is empty: add a book with `grimoire-beholder ingest FILE`.",
                  markup=False)
    for report in reports:
        _print_health(out, report)


def _print_health(out: Any, r: dict[str, Any]) -> None:
    reach = ("not measured (no section long enough to probe)" if r["reachability"] is None
             else f"{r['reachability']:.0%} of {r['probed']:,} probed "
                  + ("section found by its" if r["probed"] == 1 else "sections found by their")
                  + " own text")
    out.print(f"{r['slug']} ({r['source_type']}, {plural(r['sections'], 'section')}): {reach}",
              markup=False)
    for problem in r["problems"]:
        out.print(f"  ! {problem}", markup=False)
    if r["unreached"]:
        out.print("  sections nothing finds:", markup=False)
        for s in r["unreached"][:10]:
            out.print(f"    {s['chapter_index']}.{s['section_index']} {s['section']} — "
                      f"probe: “{s['probe']}”", markup=False)
    if r["near_empty"]:
        shown = ", ".join(f"{s['chapter_index']}.{s['section_index']}"
                          for s in r["near_empty"][:10])
        out.print(f"  near-empty sections: {shown}"
                  + (" …" if len(r["near_empty"]) > 10 else ""), markup=False)
    if not r["problems"]:
        out.print("  no problems found", markup=False)


@command(app, 'Ask it', examples=(
    'grimoire-beholder lookup "deception"',
    'grimoire-beholder lookup "spies" --book art-of-war',
))
def lookup(
    term: Annotated[str, typer.Argument(help="The term, as a book's index might print it.")],
    book: Annotated[str | None, typer.Option(
        parser=non_blank, help="Only this book (slug or id).")] = None,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Look a term up in the books' printed back-of-book indexes: each entry's pages (the
    file's page and the printed one) and the sections there. Exit code 1 when no index
    names it."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import err, out
    from grimoire_beholder.text import clip

    entries = with_library(config, lambda lib: [e.to_dict() for e in lib.lookup(term, book)],
                           library=library, read_only=True)
    if json_out:
        print_json(entries)
    elif not entries:
        err.print(f"no printed index names {clip(term, 80)!r}", markup=False)
    for entry in [] if json_out else entries:
        head = f"{entry['parent']} › {entry['term']}" if entry["parent"] else entry["term"]
        see = f" (see {'; '.join(entry['see'])})" if entry["see"] else ""
        out.print(f"{head} — {entry['book']} [{entry['slug']}]{see}", markup=False)
        for loc in entry["locators"]:
            where = "; ".join(f"{s['breadcrumb']} [{s['chapter_index']}.{s['section_index']}]"
                              for s in loc["sections"])
            out.print(f"  {loc['location']}" + (f" · {where}" if where else ""), markup=False)
    if not entries:
        raise typer.Exit(1)
