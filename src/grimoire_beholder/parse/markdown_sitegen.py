"""Doc-site generator markup in Markdown, reduced to what the built site shows.

Documentation written for a site generator carries markup that is neither prose nor code,
and that the published page never shows as written. ``strip_site_markup`` rewrites a
Markdown body before it is parsed, line for line — the result has exactly as many lines
as the input, so every block is still cited by its own source lines:

* MkDocs-Material / Python-Markdown: admonitions ``!!! note "Title"``, collapsible
  ``??? tip`` / ``???+ tip`` and content tabs ``=== "Sync"``. The marker line becomes its
  title (nothing when it has none); the body, indented four spaces under it, loses those
  four spaces, so it is read as the prose (lists, fences…) it is, not as indented code.
  pymdownx.blocks' ``/// note | Title`` openers become their title (their indented
  options go) and ``///`` closers go. ``--8<--`` snippet lines go.
* Docusaurus / MDX: ``import`` / ``export`` statements at the top level (each with its
  continuation lines, up to a blank line); ``:::tip Title`` / ``:::note[Title]`` openers
  become their title and ``:::`` closers go (Pandoc's ``::: {.note}`` divs too); a line
  holding only JSX component tags — ``<Tabs>``, ``</TabItem>``, ``<DocCardList />``, a tag
  whose name starts with a capital and has a small letter, so ``<FILE>`` stays a placeholder
  — goes, as do ``{/* comments */}``. mkdocstrings' ``::: package.module.Class`` keeps its
  dotted name (the API docs it stands for are titled by it); the ``key: value`` lines of its
  indented YAML options go, their ``- member`` names stay. A bare ``<Enter>`` that the page
  never closes (MDX closes every component it opens) is a placeholder too, and stays.
* Hugo shortcodes ``{{< note >}}`` / ``{{% alert title="Careful" %}}`` (a ``title``,
  ``summary``, ``caption`` or ``header`` value is kept as text); ``{{< highlight go >}}``
  regions become fenced code. Jekyll / Liquid tags ``{% include … %}`` and
  ``{{ site.x }}`` / ``{{ page.x }}`` values go only from a page with front matter
  (``liquid=True``): Jekyll renders Liquid nowhere else, and anywhere else they are words
  a reader sees, like a Jinja tutorial's examples. There, what ``{% raw %}`` wraps stays as
  written and ``{% highlight ruby %}`` regions become fenced code.
* GitHub alerts: a quote's ``> [!NOTE]`` (``TIP``, ``IMPORTANT``, ``WARNING``, ``CAUTION``)
  line loses its marker; the quote stays.
* Attribute lists (``## Setup {#setup}``, ``[Start](#){ .md-button }``, ``{: .note}``
  lines) and MkDocs-Material icons (``:material-check:``) go; a heading made only of
  markup keeps its text as written rather than becoming untitled.

Prose that only opens like a marker stays as written, every word of it: an admonition
line with no quoted title and no indented body under it ("!!! Do not run this"), and
words after ``::: `` and a space that are not one name (Pandoc) or a known container's
type and title (VitePress ``::: tip Title``).

Inside fenced and indented code and code spans nothing changes. A body with none of these
markers is returned as it is, found by one scan at C speed; otherwise the work is one pass
over the lines, linear in the body's size.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field

# Jekyll's objects: {{ site.title }} shows the site's configuration, not the page's words.
_LIQUID_OBJECTS = r"(?:site|page|layout|include|jekyll|paginator|content)\b"
# Any line that may hold a marker: a body without one is returned untouched.
_ANY_MARKER = re.compile(
    r"^[ \t]*(?:!!!|\?\?\?|===|:::|///|--8<--|</?[A-Z]|\{/\*)|\{:?[ \t]*[#.]"
    r"|:(?:material|octicons|fontawesome|simple|lucide)-"
    r"|^(?:import|export)[ \t{*]|\{\{[<%]|\{%|\{\{-?[ \t]*" + _LIQUID_OBJECTS
    + r"|^ {0,3}#{1,6}[ \t][^\n]*\}[ \t]*$|^ {0,3}>[ \t]*\[!", re.M)

_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# MkDocs: "!!! type", "??? type", "???+ type", maybe more words, maybe a quoted title.
_ADMONITION = re.compile(r"[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*"
                         r"(?:[ \t]+\"(.*)\")?[ \t]*")
_TAB = re.compile(r"[ \t]*===[+!]*[ \t]+\"(.*)\"[ \t]*")
# pymdownx.blocks: "/// type | Title" (its options indented below it), closed by "///".
_BLOCK = re.compile(r"[ \t]*/{3,}[ \t]*(?:(?P<name>[\w-]+)(?:[ \t]*\|[ \t]*(?P<title>.*?))?)?"
                    r"[ \t]*")
_BLOCK_OPTION = re.compile(r"[\w-]+:(?:[ \t].*)?")
_SNIPPET = re.compile(r"[ \t]*-{1,3}8<-{1,3}[ \t].*|[ \t]*-{1,3}8<-{1,3}[ \t]*")
# Docusaurus / remark-directive / Pandoc containers: ":::name[label]{attrs} rest" or ":::".
_DIRECTIVE = re.compile(r"[ \t]*:{3,}(?P<gap>[ \t]*)(?P<name>[A-Za-z][\w-]*)?(?P<rest>.*)")
# VitePress / VuePress containers, written "::: tip Title" (a space, then type and title).
_CONTAINERS = frozenset({"note", "tip", "info", "warning", "caution", "danger", "details",
                         "important", "success", "code-group", "raw", "v-pre"})
_ATTRS = re.compile(r"\{[^{}]*\}")
# MDX's top-level ESM: an import with a quoted source, or an export of a declaration.
_ESM = re.compile(r"import[ \t]+(?:[\w*{}\s,$]+?[ \t]+from[ \t]*)?['\"]"
                  r"|import[ \t]*\{|export[ \t]+(?:const|let|var|function|class|async|default"
                  r"|type|interface|\{|\*)")
# A JSX component: a capital, then at least one small letter (TabItem, Tabs.Item).
_COMPONENT = (r"</?[A-Z][A-Z0-9_.]*[a-z][\w.]*(?:\s(?:[^<>\"'{}]|\"[^\"]*\"|'[^']*'"
              r"|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})*)?/?>")
_COMPONENT_LINE = re.compile(rf"[ \t]*(?:{_COMPONENT}[ \t]*)+")
_BARE_COMPONENT = re.compile(r"<([A-Z][A-Z0-9_.]*[a-z][\w.]*)[ \t]*>")  # no attributes
_CLOSING_COMPONENT = re.compile(r"</([A-Z][A-Z0-9_.]*[a-z][\w.]*)")
_COMPONENT_OPEN = re.compile(r"[ \t]*<[A-Z][A-Z0-9_.]*[a-z][\w.]*[ \t]*")  # attributes follow
_COMPONENT_END = re.compile(r".*>[ \t]*")
_MDX_COMMENT = re.compile(r"[ \t]*\{/\*.*?\*/\}[ \t]*")
_ATTR_LINE = re.compile(r"[ \t]*\{[ \t]*:?[ \t]*[#.][\w-][^{}]*\}[ \t]*")
_HEADING_ATTRS = re.compile(r"( {0,3}#{1,6}[ \t].*?)[ \t]*\{[ \t]*:?[ \t]*[#.][^{}]*\}[ \t]*")
# Regions kept as code: their opener alone on a line, and what closes them.
_CODE_REGION = re.compile(r"[ \t]*(?:\{%-?[ \t]*highlight[ \t]+([\w+#.-]+)[^%]*-?%\}"
                          r"|\{\{<[ \t]*highlight[ \t]+([\w+#.-]+)[^>]*>\}\})[ \t]*")
_CODE_REGION_END = re.compile(r"[ \t]*(?:\{%-?[ \t]*endhighlight[ \t]*-?%\}"
                              r"|\{\{<[ \t]*/highlight[ \t]*>\}\})[ \t]*")
_RAW_OPEN = re.compile(r"[ \t]*\{%-?[ \t]*raw[ \t]*-?%\}[ \t]*")
_RAW_CLOSE = re.compile(r"\{%-?[ \t]*endraw[ \t]*-?%\}")
# Inline markers, each scanning at most a bounded distance (a shortcode or tag no further
# than the next brace); a code span is matched first and kept, so nothing in it changes.
_INLINE_CODE = r"(?P<code>(?<!`)(`++)[^`\n]{1,2000}?(?<!`)\2(?!`))"
_INLINE_LIQUID = (
    r"|(?P<raw>\{%-?[ \t]*raw[ \t]*-?%\}(?P<verbatim>(?:[^{\n]|\{(?!%-?[ \t]*raw\b)){0,200}?)"
    r"\{%-?[ \t]*endraw[ \t]*-?%\})"
    r"|\{%[^{}\n]{0,500}?%\}"
    r"|\{\{-?[ \t]*" + _LIQUID_OBJECTS + r"[^{}\n]{0,200}\}\}")
_INLINE_SITE = (
    r"|(?P<shortcode>\{\{<(?![ \t]*/\*)[^{}\n]{0,500}?>\}\}|\{\{%[^{}\n]{0,500}?%\}\})"
    r"|\{:?[ \t]*[.#][A-Za-z][\w-]*"  # an attribute list: [Start](#){ .md-button }
    r"(?:[ \t]+(?:[.#][\w-]+|[\w-]+=(?:\"[^\"\n]{0,200}\"|[^\s{}\"]+)))*[ \t]*\}"
    r"|:(?:material|octicons|fontawesome|simple|lucide)-[\w-]{1,100}:")  # an icon
_INLINE = re.compile(f"(?:{_INLINE_CODE}{_INLINE_LIQUID}{_INLINE_SITE})(?P<after>[ \t]*)")
_INLINE_NO_LIQUID = re.compile(f"(?:{_INLINE_CODE}{_INLINE_SITE})(?P<after>[ \t]*)")
_EMPTY_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]+#*)?[ \t]*")
_KEPT_PARAM = re.compile(r"\b(?:title|summary|caption|header)[ \t]*=[ \t]*"
                         r"(?:\"([^\"]*)\"|'([^']*)')")
_ALERT = re.compile(r"( {0,3}>[ \t]?)[ \t]*\[!(?:note|tip|important|warning|caution)\][ \t]*",
                    re.I)
_TAB_STOP = 4
_LIST_START = frozenset("-+*0123456789")
# The first characters of a line that may be one marker (ESM starts "import"/"export").
_MARKER_START = frozenset("!?=:/<{-ie")
_ESM_SCAN = 500  # an import's "from '…'" is looked for this far into its line
_MAX_FRONT_MATTER_LINES = 200


def _indent(line: str) -> int:
    """Columns of leading whitespace (tabs to the next multiple of four)."""
    spaces = len(line) - len(line.lstrip(" "))
    if line[spaces:spaces + 1] != "\t":
        return spaces
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += _TAB_STOP - width % _TAB_STOP
        else:
            break
    return width


def _dedent(line: str, columns: int) -> str:
    """``line`` without ``columns`` columns of its leading whitespace."""
    if not columns:
        return line
    if line[:columns] == " " * columns:
        return line[columns:]
    width = index = 0
    while index < len(line) and width < columns and line[index] in " \t":
        width += _TAB_STOP - width % _TAB_STOP if line[index] == "\t" else 1
        index += 1
    return " " * (width - columns) + line[index:] if width > columns else line[index:]


def _inline(found: re.Match[str]) -> str:
    """A code span as written; a marker replaced by what it shows. The blanks after a
    marker that shows nothing go when blanks precede it, so words stay one space apart; a
    title a marker shows is followed by a space when text follows it at once."""
    groups = found.groupdict()
    after = groups["after"]
    if groups["code"] is not None:
        return found.group()
    if groups.get("raw") is not None:
        return groups["verbatim"] + after
    shown = ""
    if groups["shortcode"] is not None and (kept := _KEPT_PARAM.search(found.group())):
        shown = next(part for part in kept.groups() if part is not None)
    start = found.start()
    if not shown and (start == 0 or found.string[start - 1] in " \t"):
        return ""
    if shown and not after and found.string[found.end():found.end() + 1].strip():
        after = " "  # a title kept is a word of its own: "Careful Text", not "CarefulText"
    return shown + after


def _title(rest: str) -> str:
    """The title on a ``:::name`` line: ``[Title]`` or the words after the name."""
    rest = _ATTRS.sub("", rest).strip()
    if rest.startswith("[") and "]" in rest:
        return rest[1:rest.index("]")].strip()
    return rest


@dataclass
class _Reader:
    """The state of one pass: open fence, MkDocs blocks, ESM statement, JSX tag, region."""

    lines: list[str]
    liquid: bool = True  # Liquid tags are markup (a page with front matter), else text
    blocks: list[int] = field(default_factory=list)  # body indent of each open MkDocs block
    fence: tuple[str, int, int] | None = None  # mark, length, blocks open when it opened
    region: re.Pattern[str] | None = None  # what closes a raw or highlight region
    esm: bool = False
    options: int | None = None  # below a "///" opener (its indent): its options
    api_options: int | None = None  # below a mkdocstrings "::: a.b" (its indent): its YAML
    component: bool = False
    comment: bool = False
    in_list: bool = False
    code: bool = False  # the previous line was indented code
    blank: bool = True  # the previous line was blank
    # The last line that could close each multi-line construct: one left open past it is
    # not one (its opener stays as written), so no opener hides the rest of the file.
    last: dict[str, int] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)  # the components closed anywhere

    def run(self) -> list[str]:
        for number, line in enumerate(self.lines):
            for closer in ("*/}", "endraw", "highlight"):
                if closer in line:
                    self.last[closer] = number
            if "</" in line:
                self.closed.update(_CLOSING_COMPONENT.findall(line))
        out = []
        for number, raw in enumerate(self.lines):
            line = self._unnest(raw)
            out.append(self._line(number, line))
            self.blank = not line.strip()
        return out

    def _unnest(self, raw: str) -> str:
        """The line in the frame of its innermost open MkDocs block (blocks it leaves close)."""
        if raw.strip():
            width = _indent(raw)
            while self.blocks and width < self.blocks[-1]:
                self.blocks.pop()
                if self.fence and self.fence[2] > len(self.blocks):
                    self.fence = None
        return _dedent(raw, _TAB_STOP * len(self.blocks))

    def _line(self, number: int, line: str) -> str:
        if self.fence is not None:
            closing = _FENCE_CLOSE.fullmatch(line)
            if closing and closing.group(1)[0] == self.fence[0] \
                    and len(closing.group(1)) >= self.fence[1]:
                self.fence = None
            return line
        if self.region is not None:
            if self.region is _CODE_REGION_END and _CODE_REGION_END.fullmatch(line):
                self.region = None
                return "~~~~~~~~~"
            if self.region is _RAW_CLOSE and _RAW_CLOSE.search(line):
                self.region = None
                return _RAW_CLOSE.sub("", line, count=1)
            return line
        if not line.strip():
            self.esm = self.component = False
            self.options = self.api_options = None
            if not self.comment:
                return line
        if self.options is not None and _indent(line) >= self.options + _TAB_STOP \
                and _BLOCK_OPTION.fullmatch(line.strip()):
            return ""
        self.options = None
        if self.api_options is not None:
            if _indent(line) >= self.api_options + _TAB_STOP:
                return "" if _BLOCK_OPTION.fullmatch(line.strip()) else line.lstrip()
            self.api_options = None
        if self.esm or self.component or self.comment:
            return self._continued(line)
        return self._open_line(number, line)

    def _continued(self, line: str) -> str:
        """A line of an ESM statement, a JSX tag or an MDX comment begun above: dropped."""
        if self.component and _COMPONENT_END.fullmatch(line):
            self.component = False
        if self.comment and "*/}" in line:
            self.comment = False
        return ""

    def _open_line(self, number: int, line: str) -> str:
        text = line.lstrip()
        width, first = _indent(line), text[:1]
        if first in _LIST_START and _LIST_ITEM.match(line):
            self.in_list = True
        elif width == 0 and self.blank:
            self.in_list = False
        if width >= 4 and not self.in_list and (self.blank or self.code):
            self.code = True  # indented code: as written
            return line
        self.code = False
        if first in "`~" and (fence := _FENCE.fullmatch(line)):
            mark = fence.group(1)
            if mark[0] != "`" or "`" not in fence.group(2):
                self.fence = (mark[0], len(mark), len(self.blocks))
                return line
        if first == ">" and (alert := _ALERT.fullmatch(line)):
            return alert.group(1)
        if first in _MARKER_START:
            shown = self._line_marker(number, line, text, width)
            if shown is not None:
                return shown
        if "{" in line or ":" in line:
            written = line
            line = (_INLINE if self.liquid else _INLINE_NO_LIQUID).sub(_inline, line)
            if first == "#" and (heading := _HEADING_ATTRS.fullmatch(line)):
                line = heading.group(1)
            if first == "#" and _EMPTY_HEADING.fullmatch(line):
                return written  # a heading of markup only: its text, not "Untitled"
        return line

    def _has_body(self, number: int) -> bool:
        """Whether the next non-blank line after line ``number`` is indented under it (each
        blank line is looked at by one opener at most: linear)."""
        below = number + 1
        while below < len(self.lines) and not self.lines[below].strip():
            below += 1
        return below < len(self.lines) \
            and _indent(self.lines[below]) >= _indent(self.lines[number]) + _TAB_STOP

    def _line_marker(self, number: int, line: str, text: str, width: int) -> str | None:
        """What a line that is one marker shows (its title, or nothing), else None."""
        if found := _ADMONITION.fullmatch(line) or _TAB.fullmatch(line):
            if found.re is _ADMONITION and found.group(1) is None \
                    and not self._has_body(number):
                return None  # "!!! Do not run this": a sentence, not an empty admonition
            self.blocks.append(_TAB_STOP * (len(self.blocks) + 1) + width)
            return " " * width + (found.group(1) or "").strip()
        if found := _BLOCK.fullmatch(line):
            self.options = width if found.group("name") is not None else None
            title = "" if found.group("name") == "html" else (found.group("title") or "")
            return " " * width + title if title else ""
        if found := _DIRECTIVE.fullmatch(line):
            rest, name = found.group("rest").strip(), found.group("name")
            if name and found.group("gap") and rest and rest[0] not in "{:[" \
                    and name.lower() not in _CONTAINERS:
                if rest[0] == "." and len(rest.split()) == 1:  # mkdocstrings: "::: a.b.C"
                    self.api_options = width
                    return " " * width + name + rest
                return None  # "::: not a directive": words after the colons
            if name or not rest or rest.startswith("{"):
                title = _title(rest)
                return " " * width + title if title else ""
        if width == 0 and not self.blocks and self.blank and _ESM.match(line[:_ESM_SCAN]):
            self.esm = True
            return ""
        if _COMPONENT_LINE.fullmatch(line):
            bare = _BARE_COMPONENT.findall(line)
            return "" if all(name in self.closed for name in bare) else None
        if _SNIPPET.fullmatch(line) \
                or _ATTR_LINE.fullmatch(line) or _MDX_COMMENT.fullmatch(line):
            return ""
        if _COMPONENT_OPEN.fullmatch(line):
            self.component = True
            return ""
        if text.startswith("{/*") and "*/}" not in text \
                and number < self.last.get("*/}", -1):
            self.comment = True
            return ""
        if (found := _CODE_REGION.fullmatch(line)) and (self.liquid or found.group(2)) \
                and number < self.last["highlight"]:
            self.region = _CODE_REGION_END
            return " " * width + "~~~~~~~~~" + (found.group(1) or found.group(2))
        if self.liquid and _RAW_OPEN.fullmatch(line) \
                and number < self.last.get("endraw", -1):
            self.region = _RAW_CLOSE
            return ""
        return None


def strip_site_markup(body: str, liquid: bool = True) -> str:
    """``body`` with doc-site generator markup removed (see the module docstring), line for
    line: the result has as many lines as ``body``, each the same source line's text.
    ``liquid``: whether Liquid tags are markup (the page had front matter) or text."""
    if _ANY_MARKER.search(body) is None:
        return body
    return "\n".join(_Reader(body.split("\n"), liquid).run())


def split_toml_front_matter(text: str) -> tuple[dict[str, str], str, int] | None:
    """``(metadata, body, lines_removed)`` for Hugo's leading ``+++`` TOML block, or None
    when ``text`` does not start with a closed one. Top-level string and number values are
    kept (a list of strings joined with ", "); a block TOML cannot read gives no metadata."""
    lines = text.split("\n", _MAX_FRONT_MATTER_LINES)
    if lines[0].rstrip() != "+++":
        return None
    close = next((i for i in range(1, min(len(lines), _MAX_FRONT_MATTER_LINES))
                  if lines[i].rstrip() == "+++"), None)
    if close is None:
        return None
    try:
        table = tomllib.loads("\n".join(lines[1:close]))
    except (ValueError, RecursionError):  # not TOML, an integer of 4,300+ digits, too deep
        table = {}
    meta: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            meta[key.lower()] = ", ".join(value)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            meta[key.lower()] = str(value)
    return meta, "\n".join(lines[close + 1:]), close + 1
