"""Markdown written for a doc-site generator: the library keeps what the built site shows.

MkDocs admonitions and tabs, Docusaurus/MDX imports, admonitions and JSX components, Hugo
shortcodes and Jekyll/Liquid tags are neither prose nor code; kept as text they are BM25
words, word pieces in the model's window and noise in every quoted passage. Each page
here goes through the real parser (and the real ingest), and every chunk must still cite
the lines it came from.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.markdown_sitegen import strip_site_markup
from helpers import fake_config

pytestmark = pytest.mark.timeout(60)

MKDOCS = """\
# Database

Intro paragraph about the database, [in short](#){ .md-button } :material-check:

## Pools {#pools}

!!! note "Connection pooling"
    The pool keeps ten connections open.

    Each request borrows one and returns it.

    ```python
    pool = Pool(size=10)
    ```

???+ tip
    Collapsed tips open by default.

=== "Sync"

    Call `connect()` and wait.

=== "Async"

    Await `connect()` instead.

/// details | Pool sizing
    type: warning
    open: True
Size the pool to the worker count.
///

--8<-- "includes/abbreviations.md"

1. Open the console.

    !!! warning "Mind the gap"
        Nested admonition body in a list item.

Write admonitions like this:

```markdown
!!! note "Shown as written"
    Inside a fence nothing changes.
```

Or indented:

    ??? tip "Also code"
        Still as written.
"""

DOCUSAURUS = """\
---
title: Installation
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
import {
  Highlight,
} from '@site/src/components';

export const Version = () => <span>3.1</span>;

# Installation

:::tip Before you start
Install Node.js 18 or newer.
:::

:::note[Windows users]
Use PowerShell, not the old command prompt.
:::

<Tabs groupId="package-manager">
<TabItem value="npm" label="npm">

```bash
npm install docusaurus
import Tabs from '@theme/Tabs';
```

</TabItem>
<TabItem value="yarn">

Run yarn add in the project folder.

</TabItem>
</Tabs>

<Tabs>
  <TabItem value="pnpm">

Plain tab text.

  </TabItem>
</Tabs>

Copy it with cp <source-file> <dest>, then pass the file:

<FILE>

<DocCardList />

{/* a comment for the editors */}
"""

HUGO = """\
+++
title = "Configure Hugo"
authors = ["Ada", "Grace"]
+++

## Config files

{{< note >}}
Hugo reads config.toml by default.
{{< /note >}}

{{% alert title="Careful" color="warning" %}}
Themes override layouts.
{{% /alert %}}

See the [guide]({{< ref "guide.md" >}}) and {{< youtube w7Ft2ymGmfc >}} for more.

{% include toc.html %}
The site is called {{ site.title }} and lives at {{ site.baseurl }}/docs.

{% raw %}
Literal {{ braces }} here.
{% endraw %}

Inline `{{< note >}}` code span stays.

{% highlight ruby %}
# a comment, not a heading
puts "hi"
{% endhighlight %}

```go-html-template
{{< note >}}kept in code{{< /note >}}
{% include x.html %}
```
"""

MARKERS = ("!!!", "???", '=== "', "///", "open: True", "--8<--", ":::", "@theme",
           "export const", "<Tabs", "TabItem", "DocCardList", "{/*", "{{<", "{{%", "{%",
           "site.title", "{#pools}", "md-button", ":material")


def _library(tmp_path: Path) -> Library:
    """A fake-model library cutting chunks small, so a page makes several."""
    (tmp_path / "lib").mkdir(exist_ok=True)
    return Library.open(config=fake_config(tmp_path / "lib", chunk_size=40, chunk_overlap=0),
                        embedder=FakeEmbedder())


def _chunks(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, int]]:
    """Ingest ``files`` one by one; every chunk as (file name, text, first line, last)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with _library(tmp_path) as lib:
        for name in files:
            lib.ingest(tmp_path / name)
        rows = lib.conn.execute(
            "SELECT b.source_path, c.text, c.line_start, c.line_end FROM chunks c "
            "JOIN books b ON b.id = c.book_id ORDER BY c.id").fetchall()
    return [(Path(path).name, text, start, end) for path, text, start, end in rows]


def _assert_cites_its_lines(source: str, text: str, start: int, end: int) -> None:
    """Every word of ``text`` is on the source lines ``start``–``end`` it cites."""
    cited = "\n".join(source.split("\n")[start - 1:end])
    for word in re.findall(r"\w+", text):
        assert word in cited, (word, text, start, end)


def _blocks(path: Path) -> list[tuple[str, int | None, int | None]]:
    book = parse_file(path)
    return [(b.text, b.line_start, b.line_end)
            for c in book.chapters for s in c.sections for b in s.blocks]


def test_mkdocs_admonitions_and_tabs_read_as_the_prose_they_wrap(tmp_path: Path) -> None:
    path = tmp_path / "database.md"
    path.write_text(MKDOCS, encoding="utf-8")
    book = parse_file(path)
    assert [s.title for c in book.chapters for s in c.sections] == ["", "Pools"]
    blocks = _blocks(path)
    texts = [text for text, _, _ in blocks]
    # the title is kept and cited by its marker's line; the body is prose, not indented code
    assert blocks[0] == ("Intro paragraph about the database, in short", 3, 3)
    assert ("Connection pooling\nThe pool keeps ten connections open.", 7, 8) in blocks
    assert ("Each request borrows one and returns it.", 10, 10) in blocks
    assert ("pool = Pool(size=10)", 13, 13) in blocks  # the fence inside is still code
    assert "Collapsed tips open by default." in texts
    assert "Sync" in texts and "Call connect() and wait." in texts
    assert "Pool sizing" in texts and "Size the pool to the worker count." in texts
    assert "1. Open the console.\nMind the gap\nNested admonition body in a list item." \
        in texts
    # markers inside code stay as written
    assert '!!! note "Shown as written"\n    Inside a fence nothing changes.' in texts
    assert '??? tip "Also code"\n    Still as written.' in texts
    prose = "\n".join(text for text in texts if "written" not in text)
    for marker in MARKERS:
        assert marker not in prose


def test_mkdocs_chunks_cite_their_own_lines(tmp_path: Path) -> None:
    chunks = _chunks(tmp_path, {"database.md": MKDOCS})
    assert len(chunks) > 2
    for _, text, start, end in chunks:
        _assert_cites_its_lines(MKDOCS, text, start, end)
    pooling = next(c for c in chunks if "Connection pooling" in c[1])
    assert pooling[2] == 7
    for _, text, _, _ in chunks:
        if "written" not in text:  # the chunk of the examples in code keeps their markers
            assert not any(marker in text for marker in MARKERS), text


def test_a_docusaurus_mdx_page_is_ingested_without_its_markup(tmp_path: Path) -> None:
    chunks = _chunks(tmp_path, {"installation.mdx": DOCUSAURUS})
    text = "\n".join(chunk for _, chunk, _, _ in chunks)
    for phrase in ("Before you start\nInstall Node.js 18 or newer.", "Windows users",
                   "Run yarn add in the project folder.", "Plain tab text.",
                   "cp <source-file> <dest>", "<FILE>"):  # all-capitals: a placeholder
        assert phrase in text
    # the code block keeps even an import line
    assert "npm install docusaurus\nimport Tabs from '@theme/Tabs';" in text
    prose = text.replace("import Tabs from '@theme/Tabs';", "")
    for marker in MARKERS:
        assert marker not in prose
    for _, chunk, start, end in chunks:
        _assert_cites_its_lines(DOCUSAURUS, chunk, start, end)


def test_hugo_shortcodes_and_liquid_tags_are_dropped_outside_code(tmp_path: Path) -> None:
    path = tmp_path / "configure.md"
    path.write_text(HUGO, encoding="utf-8")
    book = parse_file(path)
    assert (book.title, book.author) == ("Configure Hugo", "Ada, Grace")  # TOML front matter
    blocks = _blocks(path)
    texts = [text for text, _, _ in blocks]
    assert ("Hugo reads config.toml by default.", 9, 9) in blocks
    assert ("Careful\nThemes override layouts.", 12, 13) in blocks  # the title= kept
    assert "See the guide and for more." in texts
    assert "The site is called and lives at /docs." in texts
    assert "Literal {{ braces }} here." in texts  # {% raw %} shows its content as written
    assert "Inline {{< note >}} code span stays." in texts
    # a highlight region is code: its "#" line is no heading
    assert ('# a comment, not a heading\nputs "hi"', 28, 29) in blocks
    assert [s.title for c in book.chapters for s in c.sections] == ["Config files"]
    assert texts[-1] == "{{< note >}}kept in code{{< /note >}}\n{% include x.html %}"
    prose = "\n".join(texts[:-1]).replace("{{< note >}} code span", "")
    for marker in MARKERS:
        assert marker not in prose
    for text, start, end in blocks:
        assert start is not None and end is not None
        _assert_cites_its_lines(HUGO, text, start, end)


def test_a_docs_folder_of_mdx_files_is_ingested_and_synced(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "installation.mdx").write_text(DOCUSAURUS, encoding="utf-8")
    (docs / "guides" / "database.md").write_text(MKDOCS, encoding="utf-8")
    with _library(tmp_path) as lib:
        report = lib.ingest_folder(docs)
        assert sorted(f.path for f in report.files) == ["guides/database.md",
                                                        "installation.mdx"]
        assert not report.failed
        (docs / "guides" / "deploy.mdx").write_text(
            "# Deploy\n\n:::warning[Back up first]\nCopy the database.\n:::\n",
            encoding="utf-8")
        report = lib.sync()
        assert report.counts()["added"] == 1
        book = lib.book("deploy")
        assert book.source_type == "markdown"
        hit = lib.search("back up first copy the database", book="deploy").hits[0]
        assert hit.text.split() == ["Back", "up", "first", "Copy", "the", "database."]
        assert (hit.line_start, hit.line_end) == (3, 4)
    conn = sqlite3.connect(tmp_path / "lib" / "book.db")
    try:
        paths = {row[0] for row in conn.execute("SELECT source_path FROM books")}
    finally:
        conn.close()
    assert any(path.endswith("installation.mdx") for path in paths)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("body", [
    "".join(" " * (4 * depth) + "!!! note\n" for depth in range(1_500)),  # 4.5 MB of nesting
    "{{<" * 300_000 + "\n" + "{% raw %}" * 100_000 + "\n",  # openers never closed
    "import " + "a " * 300_000 + "\n\n<Tabs" + " x='1'" * 100_000 + "\n",
    "# Title " + "{#" * 300_000 + "\n" + "`{{<" * 200_000 + "\n",
], ids=["nested admonitions", "unclosed shortcodes", "long import and tag", "brace soup"])
def test_hostile_markup_costs_linear_time_and_keeps_every_line(body: str) -> None:
    out = strip_site_markup(body)
    assert out.count("\n") == body.count("\n")


def test_hugo_front_matter_python_cannot_read_leaves_the_page_readable(tmp_path: Path) -> None:
    """A TOML front matter with an integer of more than 4,300 digits (tomllib's ValueError,
    not a TOMLDecodeError) failed the page — a traceback for ingest FILE — where front
    matter that is not TOML is left out and the page read."""
    path = tmp_path / "big.md"
    path.write_text('+++\ntitle = "Big"\nweight = ' + "9" * 5000 + "\n+++\n# Heading\n\n"
                    "Herons wade.\n", encoding="utf-8")
    book = parse_file(path)
    assert book.title == "Heading" and "Herons wade." in book.chapters[0].sections[0].text
