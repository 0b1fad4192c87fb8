"""Prose that only looks like doc-site markup keeps every word; real markup still goes.

``markdown_sitegen`` removes what a site generator would not show. These pages are the
hostile side: a Jinja tutorial whose examples are not in code spans, a README line that
opens with ``!!!``, a sentence after ``:::``, icons on a line without a brace, a heading
made only of markup. Each goes through the real parser, as ``show`` and search read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grimoire_beholder.parse import parse_file

pytestmark = pytest.mark.timeout(60)

JINJA_TUTORIAL = """\
# Jinja in five minutes

Write {% if user %}Hello {{ user.name }}{% endif %} to greet a signed-in user.

Loop with {% for item in items %}{{ item }}{% endfor %} over a list.

In Jekyll, {{ site.title }} is the site's title and {% include footer.html %} pulls a file.

{% raw %}
Escaping shows {{ this }} as written.
{% endraw %}
"""

JEKYLL_PAGE = "---\nlayout: page\n---\n" + JINJA_TUTORIAL


def _book(tmp_path: Path, name: str, text: str) -> tuple[list[str], list[str]]:
    """(every block's text, every section title) of ``text`` saved as ``name``."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    book = parse_file(path)
    sections = [s for c in book.chapters for s in c.sections]
    return [b.text for s in sections for b in s.blocks], [s.title for s in sections]


def test_a_page_without_front_matter_keeps_its_liquid_and_jinja_as_written(
        tmp_path: Path) -> None:
    # Jekyll renders Liquid only in a page with front matter: anywhere else these are the
    # words a reader sees (and searches for), like a Jinja tutorial's examples
    texts, _ = _book(tmp_path, "jinja.md", JINJA_TUTORIAL)
    assert "Write {% if user %}Hello {{ user.name }}{% endif %} to greet a signed-in user." \
        in texts
    assert "Loop with {% for item in items %}{{ item }}{% endfor %} over a list." in texts
    assert "In Jekyll, {{ site.title }} is the site's title and {% include footer.html %} " \
        "pulls a file." in texts
    assert "{% raw %}\nEscaping shows {{ this }} as written.\n{% endraw %}" in texts
    # the same page as a Jekyll page (front matter): what the built site shows
    texts, _ = _book(tmp_path, "page.md", JEKYLL_PAGE)
    assert "Write Hello {{ user.name }} to greet a signed-in user." in texts
    assert "In Jekyll, is the site's title and pulls a file." in texts
    assert "Escaping shows {{ this }} as written." in texts


def test_prose_opening_like_an_admonition_or_a_container_keeps_every_word(
        tmp_path: Path) -> None:
    page = """\
# Release notes

!!! Do not run the migration on production

??? What happens to old backups

::: not a directive, only a sentence

!!! note
    A real admonition's body.

::: info Custom title
A VitePress container.
:::

::: {.warning}
A Pandoc div.
:::
"""
    texts, _ = _book(tmp_path, "notes.md", page)
    assert "!!! Do not run the migration on production" in texts
    assert "??? What happens to old backups" in texts
    assert "::: not a directive, only a sentence" in texts
    # real markup still goes
    assert "A real admonition's body." in texts
    assert "Custom title\nA VitePress container." in texts
    assert "A Pandoc div." in texts


def test_icons_go_from_lines_without_a_brace(tmp_path: Path) -> None:
    page = """\
# Features

Sync :material-check: supported, async :octicons-x-16: not yet.

## Setup :fontawesome-solid-gear:

| Feature | Status |
|---|---|
| Sync | :material-check: |
"""
    texts, titles = _book(tmp_path, "features.md", page)
    assert "Sync supported, async not yet." in texts
    assert titles == ["", "Setup"]
    assert not any(":material" in text or ":octicons" in text for text in texts), texts


def test_a_heading_made_only_of_markup_keeps_its_text(tmp_path: Path) -> None:
    page = """\
---
title: Guide
---
# Guide

## {% include chapter-title.html %}

Text under the first heading.

## :material-rocket-launch:

Text under the second.

## Options {#options}

Text under the third.
"""
    _, titles = _book(tmp_path, "guide.md", page)
    # not "Untitled" twice: the outline shows what the heading holds
    assert titles == ["{% include chapter-title.html %}", ":material-rocket-launch:",
                      "Options"]


def test_a_bare_capitalised_placeholder_alone_on_its_line_is_kept(tmp_path: Path) -> None:
    # MDX closes every component it opens: a bare <Enter> never closed is a key the writer
    # typed (as before .mdx support), while <Tabs> ... </Tabs> is a component and goes
    page = """\
# Keys

Type the command and press
<Enter>

<Ctrl> <Alt>

<Tabs>
<TabItem value="npm">

Run npm install.

</TabItem>
</Tabs>
"""
    texts, _ = _book(tmp_path, "keys.md", page)
    assert texts == ["Type the command and press\n<Enter>", "<Ctrl> <Alt>",
                     "Run npm install."]


def test_a_mkdocstrings_identifier_is_kept_whole_and_its_options_go(tmp_path: Path) -> None:
    # "::: package.module.Class" is replaced by that object's API docs: its dotted name is
    # what a reader searches for, its YAML options are configuration
    page = """\
# Environment plugins

Whenever an environment is used, this logic runs:

::: hatch.env.plugin.interface.EnvironmentInterface
    options:
      show_root_heading: false
      members:
      - PLUGIN_NAME
      - install_project

The end.
"""
    texts, _ = _book(tmp_path, "reference.md", page)
    assert texts == ["Whenever an environment is used, this logic runs:",
                     "hatch.env.plugin.interface.EnvironmentInterface",
                     "- PLUGIN_NAME", "- install_project", "The end."], texts


def test_a_github_alert_marker_goes_and_its_quote_stays(tmp_path: Path) -> None:
    # GitHub shows "> [!NOTE]" as a boxed note: the marker is not words of the page
    page = """\
# Alerts

> [!NOTE]
> Useful information for users.

> [!warning]
> Critical content.

> A plain quote with [!NOTE] inside stays.
"""
    path = tmp_path / "alerts.md"
    path.write_text(page, encoding="utf-8")
    book = parse_file(path)
    blocks = [(b.text, b.line_start, b.line_end)
              for c in book.chapters for s in c.sections for b in s.blocks]
    assert blocks == [("Useful information for users.", 3, 4), ("Critical content.", 6, 7),
                      ("A plain quote with [!NOTE] inside stays.", 9, 9)]


def test_a_shortcode_title_on_the_line_of_its_text_stays_a_word_of_its_own(
        tmp_path: Path) -> None:
    # "{{< note title="Careful" >}}Themes…" was read as "CarefulThemes…": one word that a
    # search for "themes" (or "careful") never finds
    page = ('# Hugo\n\n{{< note title="Careful" >}}Themes override layouts.{{< /note >}}\n\n'
            '{{% alert title="Heads up" %}}**Back up** first.{{% /alert %}}\n')
    texts, _ = _book(tmp_path, "hugo.md", page)
    assert "Careful Themes override layouts." in texts
    assert "Heads up Back up first." in texts
