"""Raw HTML in Markdown: the library keeps what a reader sees rendered, not the markup.

Real documentation is full of it — ``<a id="…"></a>`` anchors before headings, lint
comments, a centred ``<h1>`` logo line, ``<details>`` blocks, ``<kbd>`` keys — and every tag
kept in a chunk costs model pieces and shows up in the passage an assistant quotes.
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.parse.markdown import parse_markdown
from grimoire_beholder.structure.chunks import chunk_section

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
    # the details block is cited by the line that shows its text, the anchor makes no block
    assert blocks[1][1:] == (11, 11)
    assert len(blocks) == 3


def test_a_comment_left_open_hides_the_rest_of_its_block(tmp_path: Path) -> None:
    path = tmp_path / "open.md"
    path.write_text("# Notes\n\n<div>shown\n<!-- never closed\nhidden</div>\n\nAfter.\n",
                    encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["shown", "After."]


def _texts(tmp_path: Path, text: str) -> list[tuple[str, int | None, int | None]]:
    path = tmp_path / "doc.md"
    path.write_text(text, encoding="utf-8")
    book = parse_markdown(path)
    return [(b.text, b.line_start, b.line_end)
            for c in book.chapters for s in c.sections for b in s.blocks]


def test_tags_a_browser_lays_out_apart_keep_words_apart(tmp_path: Path) -> None:
    doc = ("# T\n\n<p>first para</p><p>second para</p>\n\n"
           "<table><tr><td>Name</td><td>Type</td></tr></table>\n\n"
           '<p align="center">one<br>two<BR/>three</p>\n\n'
           "Inline <script>var secret = 1;</script>prose<div>boxed</div>\n\n"
           '<div><a title="a > b">link</a><img src="data:image/png;base64,'
           + "A" * 5000 + '"> logo</div>\n\n'
           "| a | b |\n|---|---|\n| one<br>two | x <!-- hidden --> y |\n")
    texts = [text for text, _, _ in _texts(tmp_path, doc)]
    assert texts[:4] == ["first para second para", "Name Type", "one two three",
                         "Inline prose boxed"]
    assert texts[4] == "link logo"
    assert texts[5] == "a | b\none two | x  y"


def test_a_comment_or_script_longer_than_a_piece_stays_hidden(tmp_path: Path) -> None:
    # markdown-it reads a long document piece by piece: a comment running past blank
    # lines must not be cut, its tail shown as paragraphs
    secret = "secret note line\n" * 4 + "\n"
    doc = ("# T\n\nBefore.\n\n<!--\n" + secret * 2_000 + "-->\n\nBetween.\n\n<script>\n"
           + "var tracked = 1;\n\n" * 3_000 + "</script>\n\nAfter.\n")
    blocks = _texts(tmp_path, doc)
    lines = doc.split("\n")
    assert [text for text, _, _ in blocks] == ["Before.", "Between.", "After."]
    assert [lines[start - 1] for _, start, _ in blocks] == ["Before.", "Between.", "After."]


def test_dense_markup_read_plain_hides_closed_comments_only(tmp_path: Path) -> None:
    dense = ("*a* _b_ `c` [d](e) <i>zq</i> " * 40 + "\n\n") * 300
    doc = ("# T\n\n" + dense + "<!-- secret\nnote -->\n\nshown <!-- inline secret --> words\n"
           "\n<script>var leaked = 1;</script>\n\nafter <!-- never closed\n\n" + dense)
    path = tmp_path / "dense.md"
    path.write_text(doc, encoding="utf-8")
    book = parse_markdown(path)
    assert "read as plain text" in book.warnings[0]
    texts = "\n".join(b.text for c in book.chapters for s in c.sections for b in s.blocks)
    assert "secret" not in texts and "leaked" not in texts
    assert "shown  words" in texts and "after <!-- never closed" in texts
    assert texts.count("zq") == doc.count("<i>zq</i>")  # the unclosed one hides nothing


def test_a_chunk_of_a_long_pre_block_cites_its_own_lines(tmp_path: Path) -> None:
    rows = [f"  --option-{n:03d}  sets the value of setting number {n}" for n in range(300)]
    rows[150] = "  --zebra  the one line a reader is looking for"
    doc = "# Tool\n\n<pre>\n" + "\n".join(rows[:100]) + "\n\n" + "\n".join(rows[100:]) \
        + "\n</pre>\n\nThe end.\n"
    path = tmp_path / "tool.md"
    path.write_text(doc, encoding="utf-8")
    section = parse_markdown(path).chapters[0].sections[0]
    lines = doc.split("\n")
    for block in section.blocks:  # each block's text holds one line per source line
        assert block.line_start is not None and block.line_end is not None
        assert block.text.split("\n") == lines[block.line_start - 1:block.line_end]
    hit = next(c for c in chunk_section(section, 200, 0) if "--zebra" in c.text)
    assert hit.line_start is not None and hit.line_end is not None
    assert hit.line_start <= lines.index(rows[150]) + 1 <= hit.line_end
    assert hit.line_end - hit.line_start < 40


def test_a_heading_that_is_only_a_logo_is_named_by_its_alt_text(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_text('# <img src="logo.svg" alt="Fastify">\n\nFast web framework.\n\n'
                    "## <img src=badge.svg> Install\n\nnpm i fastify\n", encoding="utf-8")
    book = parse_markdown(path)
    assert book.title == "Fastify"
    assert [c.title for c in book.chapters] == ["Fastify"]
    assert [s.title for s in book.chapters[0].sections] == ["", "Install"]


def test_a_long_comment_never_closed_hides_the_rest_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "open.md"
    path.write_text("---\ntitle: Notes\n---\n# Notes\n\nShown.\n\n<!-- draft\n\n"
                    + "Hidden paragraph.\n\n" * 500, encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["Shown."]
    assert book.warnings == ["line 8: <!-- is never closed, so the 1,001 lines from it to the "
                             "end of the file are hidden, as a browser hides them"]


def test_a_short_file_left_open_by_a_comment_says_what_it_hides(tmp_path: Path) -> None:
    """A stray ``<!--`` in a small note hides its last section as a browser would: the
    user is told which line hides how much, not left to wonder why it is never found."""
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nApples.\n\n<!-- todo: fix\n\nBananas.\n\n## More\n\n"
                    "Cherries.\n", encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["Apples."]
    assert book.warnings == ["line 5: <!-- is never closed, so the 7 lines from it to the "
                             "end of the file are hidden, as a browser hides them"]
    # a comment that is closed hides nothing past itself: no warning
    path.write_text("# Notes\n\n<!-- closed -->\n\nApples.\n", encoding="utf-8")
    assert parse_markdown(path).warnings == []


def test_a_placeholder_in_angle_brackets_is_kept(tmp_path: Path) -> None:
    """HTML's tags go, and so does other markup (MDX components with attributes, closing
    tags, and a bare ``<Tabs>`` alone on its line: ``markdown_sitegen``); a bare
    ``<source-file>`` is what the writer typed and stays."""
    path = tmp_path / "cp.md"
    path.write_text("# Copy\n\nRun cp <source-file> <dest>, or <b>never</b> Array<T>.\n\n"
                    "<div>\n<unknown>kept</unknown> <SPAN>shown</SPAN>\n</div>\n\n"
                    '<Tabs>\n<TabItem value="js" label="JavaScript">\n\nnpm run build\n\n'
                    "</TabItem>\n<Note />\n</Tabs>\n", encoding="utf-8")
    book = parse_markdown(path)
    texts = [b.text for c in book.chapters for s in c.sections for b in s.blocks]
    assert texts == ["Run cp <source-file> <dest>, or never Array<T>.",
                     "<unknown>kept shown", "npm run build"]
