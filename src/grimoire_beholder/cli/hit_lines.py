"""A query's hits as a person reads them: each hit's citation, where to read on and its
text, with the notes that qualify them on stderr.

To a terminal they go through rich (bold citations, dim notes, lines wrapped at words); to a
pipe or a file rich would write the same lines unstyled, so they are written without
importing it when it would change nothing (``plain_output.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from grimoire_beholder.cli.plain_output import lines_stay_plain, plain_stream, write_lines
from grimoire_beholder.text import clip, flat


class Line(NamedTuple):
    """One printed line: its parts, each with its rich style ("" for none). ``fit`` None:
    soft-wrapped as it is; else wrapped at words to the terminal after ``fit`` columns."""

    parts: tuple[tuple[str, str], ...]
    fit: int | None = None

    @property
    def text(self) -> str:
        """The line without its styles: what a pipe receives."""
        return "".join(text for text, _ in self.parts)


def excerpt(text: str, limit: int = 600) -> str:
    """A hit's text on one line, clipped at a word boundary."""
    return clip(flat(text), limit)


def indented(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())


def notes(data: dict[str, Any]) -> list[str]:
    """What stderr says about the hits: none found, probably not covered, the search's note."""
    if not data["results"]:
        return [data.get("note") or "No match in the library."]
    said = []
    if data.get("low_confidence"):
        said.append(f"The library probably does not cover this question (confidence "
                    f"{data['confidence']:.2f}); these are only the best guesses.")
    if data.get("note"):
        said.append(data["note"])
    return said


def hit_lines(data: dict[str, Any], *, explain: bool, expand: bool) -> list[Line]:
    """Every hit's lines, in order, each hit followed by an empty line."""
    lines = []
    for hit in data["results"]:
        role = hit.get("role", "body")
        lines.append(Line(((f"{hit['rank']}. {hit['citation']}", "bold"),
                           *(() if role == "body" else ((" ", ""), (f"({role})", "dim"))))))
        if hit.get("link"):
            lines.append(Line((("   ", ""), (hit["link"], "dim"))))
        if explain:
            ranks = ", ".join(f"{arm} #{r}" if r else f"{arm} —"
                              for arm, r in hit["ranks"].items())
            lines.append(Line((("   ", ""), (f"score {hit['score']:.4f} ({ranks})", "dim"))))
        number = hit["number"]
        own = "" if not number else (f" (the book's §{number})" if number[0].isdigit()
                                     else f" (the book's {number})")
        lines.append(Line(((f"   read it: {hit['open']}{own}", "dim"),), fit=6))
        body = hit.get("section_text") if expand else excerpt(hit["text"])
        lines.append(Line(((indented(body or ""), ""),), fit=3))
        lines.append(Line((("", ""),), fit=0))
    return lines


def print_hits(data: dict[str, Any], *, explain: bool, expand: bool) -> None:
    """The hits with their citations on stdout, the notes that qualify them on stderr."""
    said = notes(data)
    stream = plain_stream(stderr=True)
    if stream is not None and lines_stay_plain(said):
        write_lines(stream, said)
    elif said:
        from grimoire_beholder.cli.rendering import err

        for note in said:
            err.print(note, markup=False)
    if not data["results"]:
        return
    stream = plain_stream()
    if stream is not None:
        lines = hit_lines(data, explain=explain, expand=expand)
        if lines_stay_plain([line.text for line in lines]):
            write_lines(stream, [line.text for line in lines])
            return
    _print_rich(data, explain=explain, expand=expand)


def _print_rich(data: dict[str, Any], *, explain: bool, expand: bool) -> None:
    from rich.text import Text

    from grimoire_beholder.cli.rendering import fit, out
    from grimoire_beholder.cli.terminal import terminal_safe

    wrap = not out.is_terminal  # rich wraps at words to the terminal's width
    for line in hit_lines(data, explain=explain, expand=expand):
        if line.fit is None:  # styled parts, the book's text never read as markup
            out.print(Text.assemble(*((terminal_safe(text), style)
                                      for text, style in line.parts)), soft_wrap=wrap)
        else:
            [(text, style)] = line.parts
            out.print(fit(text, line.fit), markup=False, style=style or None)
