"""``query`` and ``list`` as plain functions, importable without typer: what their typer
commands (``library_commands``) run with the parsed options, and what ``shortcuts`` runs for
their plain forms with no parser loaded at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grimoire_beholder.cli.running import same_library, with_library

if TYPE_CHECKING:
    from grimoire_beholder.library import Library


def run_query(question: str, *, book: str | None = None, author: str | None = None,
              source_type: str | None = None, mode: str | None = None,
              group: str | None = None, path_prefix: str | None = None,
              until: str | None = None, role: Sequence[str] | None = None,
              tag: str | None = None, collection: str | None = None,
              series: str | None = None, top_k: int | None = None, expand: bool = False,
              explain: bool = False, min_confidence: float | None = None,
              json_out: bool = False, config: Path | None = None,
              library: Path | None = None) -> None:
    """Search and print the hits (or ``--json``); see ``library_commands.query``."""
    from grimoire_beholder.citation import own_number, show_command

    def run(lib: Library) -> dict[str, Any]:
        if book is not None:
            lib.book(book)  # an unknown book is refused before the model starts loading
        if mode != "keyword" and question.strip():  # an empty one is refused by the search
            lib.preload()  # the model loads while the search code is imported
        results = lib.search(question, top_k=top_k, book=book, author=author,
                             source_type=source_type, mode=mode, group=group,
                             path_prefix=path_prefix, until_chapter=until, role=role,
                             tag=tag, collection=collection, series=series)
        data = results.to_dict()
        for hit in data["results"]:  # how to read on, and the book's own number
            hit["open"] = show_command(hit["slug"], hit["chapter_index"],
                                       hit["section_index"]) + same_library(library, config)
            hit["number"] = own_number(hit["section"])
        if expand:
            for hit in data["results"]:
                hit["section_text"] = lib.section(
                    hit["book_id"], hit["chapter_index"], hit["section_index"]).text
        if min_confidence is not None and data["confidence"] is not None:
            data["low_confidence"] = data["confidence"] < min_confidence
        return data

    data = with_library(config, run, library=library, read_only=True)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json

        print_json(data)
        return
    from grimoire_beholder.cli.hit_lines import print_hits

    print_hits(data, explain=explain, expand=expand)


def run_list(*, json_out: bool = False, config: Path | None = None,
             library: Path | None = None) -> None:
    """Print the books as a table (or ``--json``); see ``library_commands.list_``."""
    from grimoire_beholder.views import book_dict

    books = with_library(config, lambda lib: [book_dict(b) for b in lib.list_books()],
                         library=library, read_only=True)
    from grimoire_beholder.cli.plain_output import print_json
    from grimoire_beholder.cli.rendering import books_table, err, out

    if json_out:
        print_json(books)
    elif not books:
        err.print("The library is empty: add a book with `grimoire-beholder ingest FILE`.")
    else:
        print(books_table(books, out.width))
