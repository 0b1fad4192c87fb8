"""PDF parser: outline-driven chapters and sections with positional text splitting.

Why positions, not pages: books often start a section halfway down a page, so splitting at
page boundaries would hand the tail of one section to the next (and wrong citations to every
answer found there). Each outline entry's destination carries a point; a text line belongs
to the last entry (in page/position order) whose point lies above the line's bottom edge.

Structure comes from the outline (TOC) when the PDF has one: level-1 entries become chapters,
every deeper entry a section whose ``path`` is its breadcrumb below the chapter. Without an
outline, headings are guessed from font sizes; failing that, chapters are page ranges.

Outline entries whose page is -1 or out of range are *clamped*, not dropped: such an entry
takes the position of the next valid entry in outline order (so it stays in the structure as
an empty heading right before it); if no valid entry follows, it is skipped. Either way a
warning is recorded. Entries out of page order keep their place in the structure, but text is
still assigned by position, so no text is lost or doubled.

Running headers/footers are removed: a line in the top or bottom tenth of the page whose text,
with digits (and a lone roman numeral) normalised away, recurs in the same margin on several
pages is a header, as is anything sharing that header's row on its page (e.g. a chapter name
printed next to the page number).

Ruled tables become one record block per row (``parse/pdf_tables.py``) in place of their cell
text, and pages without a text layer are OCR'd when Tesseract is available
(``parse/pdf_ocr.py``); both are switched by :class:`ParseOptions`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pymupdf

from grimoire_beholder.errors import InputFileError
from grimoire_beholder.parse.document import (
    Block,
    ParsedBook,
    ParsedChapter,
    ParsedSection,
    ParseOptions,
)
from grimoire_beholder.parse.pdf_headings import (
    HeadingEntry,
    PdfLine,
    heading_entries,
    outline_entries,
    snap_to_headings,
)
from grimoire_beholder.parse.pdf_ocr import classify_textless, ocr_pages
from grimoire_beholder.parse.pdf_tables import TableRecords, page_tables, too_many_drawings
from grimoire_beholder.parse.source import read_source
from grimoire_beholder.text import clip, page_ranges, plural

# PyMuPDF prints to stdout, which carries results and the MCP protocol: MuPDF's messages about
# a damaged file (the damage still raises, or is repaired) and, on the first find_tables, a
# hint to install its layout model (deliberately unused). Errors stay silent; anything else
# PyMuPDF says goes to stderr.
pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.no_recommend_layout()
pymupdf.set_messages(fd=2)

# pymupdf's plain-text flags minus ligature preservation: "ﬁ" comes out as "fi" for search
_FLAGS = (
    pymupdf.TEXT_PRESERVE_WHITESPACE
    | pymupdf.TEXT_MEDIABOX_CLIP
    | pymupdf.TEXT_USE_CID_FOR_UNKNOWN_UNICODE
)
_MARGIN = 0.10  # share of the page height searched for running headers/footers
_PAGES_PER_RANGE = 10  # last-resort chapters: this many pages each
_FRONT_MATTER = "Front matter"
# what pymupdf/MuPDF raise for damaged files (MuPDF's own errors derive from FzErrorBase)
_PYMUPDF_ERRORS = (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase)
_ROMAN = re.compile(r"^[ivxlcdm]+$")
_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.!?:;\"'”’)\]]$")


# Titles a writing program leaves in a PDF's metadata, naming no book: "Microsoft Word -
# Document1.docx", "untitled", "Document1", a bare file name ("report.docx", "C:\\tmp\\a.pdf").
_APP_PREFIX = re.compile(
    r"^microsoft\s+(?:word|powerpoint|excel|office\s+word)\s+-\s+", re.I)
_PLACEHOLDER = re.compile(
    r"^(?:untitled|document|doc|presentation|title|no\s+title|new\s+document|noname"
    r"|none|null|unknown|\(?anonymous\)?)(?:[\s_-]*\d+)?$", re.I)
_FILE_NAME = re.compile(
    r"^(?:.*[/\\])?[^/\\]+\.(?:pdf|docx?|dotx?|odt|ott|rtf|txt|tex|dvi|ps|pptx?|xlsx?|odp"
    r"|ods|html?|md|indd|qxd|pages|key|numbers|wpd|pub|cdr|ai|eps|tmp)$", re.I)


def pdf_title(meta_title: str | None, path: Path) -> str:
    """The book name a PDF's metadata title gives, else the file's name without its suffix:
    also when the title is a writing program's placeholder rather than the book's (empty,
    "untitled", "Document1", a bare file name like "report.docx"), so two such PDFs are not
    one name and one slug. A "Microsoft Word - " prefix is dropped and what follows judged."""
    title = " ".join((meta_title or "").split())
    title = _APP_PREFIX.sub("", title)  # "Microsoft Word - Annual Report" is "Annual Report"
    if not title or _PLACEHOLDER.match(title) or _FILE_NAME.match(title):
        return path.stem
    return title


def _fail(path: Path, reason: str) -> InputFileError:
    """One-line user-facing error naming the file."""
    return InputFileError(f"{path}: {' '.join(reason.split())}")


def parse_pdf(path: Path, options: ParseOptions | None = None) -> ParsedBook:
    """Parse the PDF at ``path`` into a :class:`ParsedBook` (source_type "pdf").

    Raises :class:`InputFileError` (never anything else for a bad file) when the file is
    missing, empty, not a readable PDF, password-protected, or has no extractable text (a
    scanned PDF with OCR off or unavailable says so and how to enable it).
    """
    path = Path(path)
    options = options or ParseOptions()
    data = read_source(path)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:
        raise _fail(path, f"not a readable PDF (corrupt or not a PDF: {exc})") from exc
    if not doc.is_pdf:  # MuPDF sniffs the bytes: text, Markdown or an image opens as that
        kind = (doc.metadata or {}).get("format") or "another format"
        doc.close()
        raise _fail(path, f"not a PDF (its contents read as: {kind})")
    try:
        return _parse(doc, path, options)
    except _PYMUPDF_ERRORS as exc:  # a damaged file that got past opening
        raise _fail(path, f"damaged PDF, cannot be read ({exc})") from exc
    finally:
        doc.close()


def _parse(doc: Any, path: Path, options: ParseOptions) -> ParsedBook:
    """Everything after opening; pymupdf errors are turned into one line by the caller."""
    if doc.needs_pass and not doc.authenticate(""):
        raise _fail(path, "the PDF is password-protected; decrypt it first")
    if doc.page_count == 0:
        raise _fail(path, "the PDF has no pages (corrupt or truncated file)")
    warnings: list[str] = []
    lines, failed, textless = _extract_lines(doc, options, warnings)
    kinds = classify_textless(doc, textless)
    ocr = ocr_pages(doc, kinds, mode=options.ocr, language=options.ocr_language,
                    flags=_FLAGS)
    if ocr.blocks:
        for page_no, page_blocks in ocr.blocks.items():
            lines.extend(_page_lines(page_no, page_blocks, []))
        lines.sort(key=lambda ln: ln.page)  # stable: reading order within a page is kept
    if not lines:
        if len(failed) == doc.page_count:
            raise _fail(path, "no page could be read (corrupt or truncated file)")
        what = ("a scanned PDF" if not kinds.drawn else "its text is drawn as shapes"
                if not kinds.scanned else "scanned pages and text drawn as shapes")
        if kinds.to_ocr and ocr.not_run:
            raise _fail(path, f"no text layer on any page ({what}); {ocr.not_run}")
        if kinds.to_ocr:
            raise _fail(path, f"no text layer on any page ({what}), and OCR found no text")
        raise _fail(path, "no extractable text: every page is blank")
    warnings.extend(ocr.warnings)
    heights = {i + 1: doc[i].rect.height for i in range(doc.page_count)}
    # A document made only of header-like lines (one short line per page, all alike) would
    # lose every line to the running-header filter; such lines are the text, so keep them.
    lines = _strip_running(lines, heights) or lines
    entries = snap_to_headings(outline_entries(doc, warnings), lines)
    if not entries:
        entries = heading_entries(lines)
    if not entries:
        entries = [
            HeadingEntry(1, f"Pages {p}–{min(p + _PAGES_PER_RANGE - 1, doc.page_count)}", p, 0.0)
            for p in range(1, doc.page_count + 1, _PAGES_PER_RANGE)
        ]
    meta = doc.metadata or {}
    title = pdf_title(meta.get("title"), path)
    author = (meta.get("author") or "").strip() or None
    return ParsedBook(
        title=title,
        author=author,
        source_type="pdf",
        source_path=str(path),
        chapters=_assemble(entries, lines),
        page_count=doc.page_count,
        page_labels=_page_labels(doc, warnings),
        warnings=warnings,
    )


def _extract_lines(doc: Any, options: ParseOptions, warnings: list[str]
                   ) -> tuple[list[PdfLine], list[int], list[int]]:
    """All non-blank text lines in reading order, ruled tables as row records; also the
    pages (1-based) that failed to load and those with no text at all. Pages that could not
    be read, tables that could not be made into records and pages with too many drawings
    to look for tables (pdf_tables.MAX_DRAWING_BYTES) are said in ``warnings``."""
    lines: list[PdfLine] = []
    failed: list[int] = []
    textless: list[int] = []
    tables_lost: list[int] = []
    problems: list[str] = []
    busy: list[int] = []
    for index in range(doc.page_count):
        try:
            page = doc[index]
            blocks = page.get_text("dict", flags=_FLAGS, sort=True)["blocks"]
        except Exception:  # a damaged page: the others are still read
            failed.append(index + 1)
            continue
        tables: list[TableRecords] = []
        if options.pdf_tables and too_many_drawings(page):
            busy.append(index + 1)
        elif options.pdf_tables:
            before = len(problems)
            tables = page_tables(page, _FLAGS, problems)
            if len(problems) > before:
                tables_lost.append(index + 1)
        found = _page_lines(index + 1, blocks, tables)
        if not found:
            textless.append(index + 1)
        lines.extend(found)
    if failed:
        warnings.append(f"text of {plural(len(failed), 'page')} could not be read (damaged "
                        f"file): {page_ranges(failed)}")
    if tables_lost:
        warnings.append(f"ruled tables on {plural(len(tables_lost), 'page')} could not be read "
                        f"as rows ({clip(problems[0], 120)}); their text is kept as prose: "
                        f"{page_ranges(tables_lost)}")
    if busy:
        warnings.append(f"{plural(len(busy), 'page')} draw too much to look for ruled tables "
                        f"there; their text is read as prose: {page_ranges(busy)}")
    return lines, failed, textless


def _page_lines(page_no: int, blocks: list[Any], tables: list[TableRecords]) -> list[PdfLine]:
    """One page's lines from pymupdf's ``dict`` blocks; a table's cells give way to its rows.

    A row record takes the font size most of its table's text has, so the body-size guess
    behind heading detection is the same with or without table records.
    """
    lines: list[PdfLine] = []
    tables = sorted(tables, key=lambda t: t.area[1])
    sizes: dict[int, Counter[float]] = defaultdict(Counter)
    for number, block in enumerate(blocks):
        for line in block.get("lines", []):
            spans = line.get("spans", [])
            text = _WS.sub(" ", "".join(s.get("text", "") for s in spans)).strip()
            if not text:
                continue
            main = max(spans, key=lambda s: len(s.get("text", "").strip()))
            size = round(main["size"] * 2) / 2
            inside = [i for i, t in enumerate(tables) if t.covers(line["bbox"])]
            if inside:
                sizes[inside[0]][size] += len(text)
                continue
            lines.append(PdfLine(page_no, line["bbox"][1], line["bbox"][3], text, size, number))
    for number, table in enumerate(tables):
        size = sizes[number].most_common(1)[0][0] if sizes[number] else 0.0
        at = next(
            (i for i, ln in enumerate(lines) if not ln.record and ln.y0 >= table.area[1]),
            len(lines),
        )
        lines[at:at] = [  # one block per row: negative numbers never meet a text block's
            PdfLine(page_no, y0, y1, text, size, -1 - number * 100_000 - row, record=True)
            for row, (y0, y1, text) in enumerate(table.rows)
        ]
    return lines


def _running_key(text: str) -> str:
    """Header identity: case, digits and a lone roman page number don't matter."""
    key = re.sub(r"\d+", "#", text.lower()).strip()
    return "#" if _ROMAN.match(key) else key


def _strip_running(lines: list[PdfLine], heights: dict[int, float]) -> list[PdfLine]:
    """Drop running headers/footers and page numbers (see the module docstring)."""

    def zone(ln: PdfLine) -> str | None:
        middle, height = (ln.y0 + ln.y1) / 2, heights[ln.page]
        if middle < height * _MARGIN:
            return "top"
        if middle > height * (1 - _MARGIN):
            return "bottom"
        return None

    pages_with_text = len({ln.page for ln in lines})
    if pages_with_text < 2:
        return lines
    needed = 2 if pages_with_text < 6 else 3
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    zones = [zone(ln) for ln in lines]
    for i, (ln, z) in enumerate(zip(lines, zones, strict=True)):
        key = _running_key(ln.text)
        # a record is table content, and a lone "}" of code is no running header
        if z and not ln.record and ("#" in key or re.search(r"[^\W\d_]", key)):
            seen[(z, key)].add(ln.page)
        else:
            zones[i] = None
    drop = {
        i
        for i, (ln, z) in enumerate(zip(lines, zones, strict=True))
        if z and len(seen[(z, _running_key(ln.text))]) >= needed
    }
    rows = defaultdict(list)  # page → (y0, y1) of dropped lines: their whole row goes too
    for i in drop:
        rows[lines[i].page].append((lines[i].y0, lines[i].y1))
    for i, (ln, z) in enumerate(zip(lines, zones, strict=True)):
        if (
            z
            and i not in drop
            and any(min(ln.y1, b) - max(ln.y0, a) > 0.5 * (ln.y1 - ln.y0) for a, b in rows[ln.page])
        ):
            drop.add(i)
    return [ln for i, ln in enumerate(lines) if i not in drop]


def _join(left: str, right: str) -> str:
    """Join two wrapped lines: rejoin a word hyphenated at the break, else one space."""
    if not left:
        return right
    if left.endswith("\u00ad"):
        return left[:-1] + right
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[:1].islower():
        return left[:-1] + right
    return f"{left} {right}"


def _blocks(lines: list[PdfLine]) -> list[Block]:
    """Paragraph blocks from lines; a paragraph running over a page break becomes one."""
    blocks: list[Block] = []
    key: tuple[int, int] | None = None
    after_record = False
    for ln in lines:
        if key == (ln.page, ln.block):
            blocks[-1].text = _join(blocks[-1].text, ln.text)
            continue
        key = (ln.page, ln.block)
        prev = blocks[-1] if blocks else None
        joins_record, after_record = after_record or ln.record, ln.record
        if (
            prev is not None
            and not joins_record
            and prev.last_page == ln.page - 1
            and not _SENTENCE_END.search(prev.text)
            and ln.text[:1].islower()
        ):
            prev.text, prev.page_end = _join(prev.text, ln.text), ln.page
            continue
        blocks.append(Block(text=ln.text, page=ln.page))
    return blocks


def _only_heading(blocks: list[Block], title: str) -> bool:
    """True when a lead-in is nothing but the chapter's own heading: no text worth a section."""

    def squash(text: str) -> str:
        return re.sub(r"\W+", "", text.lower())

    text, wanted = squash(blocks[0].text), squash(title)
    return (
        len(blocks) == 1 and bool(wanted) and text.endswith(wanted) and len(text) < len(wanted) + 8
    )


def _assemble(entries: list[HeadingEntry], lines: list[PdfLine]) -> list[ParsedChapter]:
    """Give every line to the last entry positioned above its bottom edge; build the tree."""
    order = sorted(range(len(entries)), key=lambda i: (entries[i].page, entries[i].y, i))
    keys = [(entries[i].page, entries[i].y) for i in order]
    owned: dict[int, list[PdfLine]] = defaultdict(list)
    for ln in lines:
        at = bisect_right(keys, (ln.page, ln.y1 - 1.0)) - 1
        owned[order[at] if at >= 0 else -1].append(ln)
    chapters: list[ParsedChapter] = []
    front = _blocks(owned[-1])
    if front:
        section = ParsedSection("", [], front, anchor_page=front[0].page)
        chapters.append(ParsedChapter(_FRONT_MATTER, [section], anchor_page=front[0].page))
    trail: list[str] = []
    chapter: ParsedChapter | None = None
    for i, entry in enumerate(entries):
        blocks = _blocks(owned[i])
        if entry.level == 1 or chapter is None:  # a leading deeper entry starts a chapter too
            chapter = ParsedChapter(entry.title, anchor_page=entry.page)
            chapters.append(chapter)
            trail = []
            if blocks and not _only_heading(blocks, entry.title):
                chapter.sections.append(ParsedSection("", [], blocks, anchor_page=entry.page))
            continue
        trail = [*trail[: max(entry.level - 2, 0)], entry.title]
        chapter.sections.append(
            ParsedSection(entry.title, list(trail), blocks, anchor_page=entry.page)
        )
    return chapters


def _page_labels(doc: Any, warnings: list[str]) -> dict[int, str]:
    """Printed page label per physical page, only when the PDF defines labels; labels that
    cannot be read are said in ``warnings`` (pages are then cited by number only)."""
    try:
        if not doc.get_page_labels():
            return {}
        labels = {i + 1: doc[i].get_label() for i in range(doc.page_count)}
    except Exception as exc:  # a damaged page-label tree
        warnings.append(f"printed page labels could not be read ({type(exc).__name__}: "
                        f"{exc}); pages are cited by their physical numbers")
        return {}
    return {page: label for page, label in labels.items() if label}
