"""Raw HTML in Markdown: the library keeps what a reader sees rendered, not the markup.

Real documentation is full of it — ``<a id="…"></a>`` anchors before headings, lint
comments, a centred ``<h1>`` logo line, ``<details>`` blocks, ``<kbd>`` keys — and every tag
kept in a chunk costs model pieces and shows up in the passage an assistant quotes.
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.parse.markdown import parse_markdown

DOC = """\
<h1 align="center">Fastify</h1>

## Routes
<a id="route-options"></a>

Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop,<br>then restart. <!-- TODO: reword -->

<!-- markdownlint-disable MD013
spans several lines -->
<details>
<summary>Options &amp; defaults</summary>
<script>window.trackingSecret = 1;</script>
<style>.x { color: red }</style>
</details>

```html
<a id="kept">code is shown as written</a>
```
"""


def _sections(tmp_path: Path) -> dict[str, list[tuple[str, int | None, int | None]]]:
    path = tmp_path / "routes.md"
    path.write_text(DOC, encoding="utf-8")
    book = parse_markdown(path)
    return {section.title: [(b.text, b.line_start, b.line_end) for b in section.blocks]
            for chapter in book.chapters for section in chapter.sections}


def test_html_blocks_keep_only_their_visible_text(tmp_path: Path) -> None:
    sections = _sections(tmp_path)
    assert sections[""] == [("Fastify", 1, 1)]
    texts = [text for text, _, _ in sections["Routes"]]
    assert texts[0] == "Press Ctrl+C to stop,\nthen restart."
    assert texts[1] == "Options & defaults"
    joined = "\n".join(texts)
    for hidden in ("route-options", "TODO", "markdownlint", "trackingSecret", "color: red",
                   "<kbd>", "<br>", "&amp;"):
        assert hidden not in joined


def test_code_keeps_its_markup_and_blocks_keep_their_lines(tmp_path: Path) -> None:
    blocks = _sections(tmp_path)["Routes"]
    assert blocks[-1][0] == '<a id="kept">code is shown as written</a>'
    # the details block is cited by its source lines, the anchor alone makes no block
    assert blocks[1][1:] == (10, 14)
    assert len(blocks) == 3


def test_a_comment_left_open_hides_the_rest_of_its_block(tmp_path: Path) -> None:
    path = tmp_path / "open.md"
    path.write_text("# Notes\n\n<div>shown\n<!-- never closed\nhidden</div>\n\nAfter.\n",
                    encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["shown", "After."]


def test_a_placeholder_in_angle_brackets_is_kept(tmp_path: Path) -> None:
    """Only the tags of HTML's own elements go: ``<source-file>`` is what the writer typed."""
    path = tmp_path / "cp.md"
    path.write_text("# Copy\n\nRun cp <source-file> <dest>, or <b>never</b> Array<T>.\n\n"
                    "<div>\n<unknown>kept</unknown> <SPAN>shown</SPAN>\n</div>\n",
                    encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["Run cp <source-file> <dest>, or never Array<T>.",
                     "<unknown>kept</unknown> shown"]
