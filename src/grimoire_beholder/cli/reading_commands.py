"""Reading a book as the assistant does: ``outline BOOK`` (the chapters and sections with the
indices ``show`` takes, like MCP ``get_book_outline``) and ``show BOOK CHAPTER SECTION
[--part N]`` (a section's citation, summary and text, in the same parts as ``get_section``).

Both call the core (``Library.outline``, ``Library.section_part``) on a read-only library and
register on ``app.app``; ``cli/entry.py`` imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from grimoire_beholder.cli.app import (
    ConfigOpt,
    JsonOpt,
    LibraryOpt,
    app,
    same_library,
    with_library,
)
from grimoire_beholder.cli.help_pages import command

if TYPE_CHECKING:
    from grimoire_beholder.views import Outline

BookArg = Annotated[str, typer.Argument(help="Slug or id of the book (see `list`).")]


def _outline_dict(outline: Outline) -> dict[str, Any]:
    """The outline for scripts: indices, titles, locations, sizes (no text)."""
    return {"book_id": outline.book_id, "slug": outline.slug, "name": outline.name,
            "chapters": [{
                "chapter_index": ch.chapter_index, "title": ch.title,
                "location": ch.citation.location, "sections": [{
                    "section_index": s.section_index, "title": s.title,
                    "breadcrumb": s.breadcrumb, "location": s.citation.location,
                    "approx_tokens": s.approx_tokens, "chunks": s.chunks,
                } for s in ch.sections]} for ch in outline.chapters]}


@command(app, 'Read it', examples=(
    'grimoire-beholder outline art-of-war',
))
def outline(book: BookArg, json_out: JsonOpt = False, config: ConfigOpt = None,
            library: LibraryOpt = None) -> None:
    """A book's chapters and sections, with the CHAPTER and SECTION numbers `show` takes."""
    from grimoire_beholder.citation import show_command
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import fit
    from grimoire_beholder.text import plural

    data = _outline_dict(with_library(config, lambda lib: lib.outline(book), library=library,
                                      read_only=True))
    if json_out:
        print_json(data)
        return
    print(fit(f"{data['name']} ({data['slug']}, id {data['book_id']})", 2))
    for ch in data["chapters"]:
        where = f" · {ch['location']}" if ch["location"] else ""
        print(fit(f"{ch['chapter_index']:>3}  {ch['title']}{where} — "
                  f"{plural(len(ch['sections']), 'section')}", 5))
        for s in ch["sections"]:
            where = f" · {s['location']}" if s["location"] else ""
            print(fit(f"{ch['chapter_index']:>3}.{s['section_index']:<3} "
                      f"{s['title'] or '(lead-in)'}{where} · ~{s['approx_tokens']} tokens", 8))
    print()
    print(fit(f"Read one with: {show_command(data['slug'], 'CHAPTER', 'SECTION')}"
              f"{same_library(library, config)}"
              " (the numbers on the left, from 0)", 2))


@command(app, 'Read it', examples=(
    'grimoire-beholder show art-of-war 3 2',
    'grimoire-beholder show art-of-war 3 2 --part 2',
))
def show(
    book: BookArg,
    chapter: Annotated[int, typer.Argument(help="Chapter number, from `outline` or a hit.")],
    section: Annotated[int, typer.Argument(help="Section number within the chapter.")],
    part: Annotated[int, typer.Option(
        help="Which part of a long section (1-based), as the assistant reads it.")] = 1,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """A section's citation, summary and full text: what the assistant's get_section reads."""
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import err, fit

    sec, text, total = with_library(
        config, lambda lib: lib.section_part(book, chapter, section, part), library=library,
        read_only=True)
    if json_out:
        print_json({**sec.to_dict(), "part": part, "total_parts": total, "text": text})
        return
    # In a terminal every line is wrapped at words to its width; piped, lines stay whole.
    print(fit(str(sec.citation) + (f" (part {part} of {total})" if total > 1 else ""), 2))
    if sec.summary:
        print(fit(f"Summary: {sec.summary}", 2))
    print()
    print("\n".join(fit(line) for line in text.splitlines()))
    if part < total:
        err.print(f"(part {part} of {total}: add --part {part + 1} for the next)",
                  markup=False)

