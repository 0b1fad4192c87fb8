"""The pages of a PDF book's own file: a page as a PNG with a passage highlighted, finding
which page a passage is on, and what a page without text shows.

Only PDFs have pages to show; EPUB, Markdown and text books get a clear "no page images for
this format". The file is opened read-only — pymupdf writes nothing unless asked to save, and
nothing here saves — and the library database is never touched, so the MCP server can serve
pages. The highlight is an annotation on the in-memory page, found by aligning the passage
with the page's words through :mod:`textmatch` (so line breaks, hyphenation, quotes and
ligatures do not stop it). Images are bounded: the longer side at most :data:`MAX_EDGE`
pixels and the PNG under :data:`MAX_PNG_BYTES`, small enough for a chat window.

pymupdf is imported lazily.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from grimoire_beholder.checks.textmatch import align, quote_pieces, skeleton
from grimoire_beholder.errors import GrimoireError, NoPageImagesError, NotFoundError
from grimoire_beholder.naming import shown
from grimoire_beholder.store.records import BookRow

MAX_EDGE = 1400  # pixels on the longer side
MAX_ZOOM = 3.0
MAX_PNG_BYTES = 1_500_000
MIN_DENSITY = 0.75  # share of a highlighted span that must agree with the passage
MIN_AGREE = 24  # letters that must agree (fewer: a coincidence, unless that is all of it)
FORMAT_NAMES = {"epub": "an EPUB", "markdown": "a Markdown file", "text": "a text file",
                "html": "an HTML page", "docx": "a Word document"}


@dataclass
class PageImage:
    """A rendered page: PNG bytes, and where the highlight landed (in image pixels)."""

    book_id: int
    slug: str
    page: int  # 1-based physical page
    page_count: int
    page_label: str | None
    width: int
    height: int
    png: bytes = field(repr=False)
    highlight: str | None = None
    highlight_found: bool | None = None  # None when nothing was asked to be highlighted
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)  # x0, y0, x1, y1
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["png"]
        out["png_bytes"] = len(self.png)
        return out


def source_pdf(book: BookRow) -> Path:
    """The book's PDF file, or a one-line reason why there is no page to show."""
    if book.source_type != "pdf":
        raise NoPageImagesError(
            f"no page images for this format: '{book.slug}' is "
            f"{FORMAT_NAMES.get(book.source_type, book.source_type)}, which has no pages; "
            "read its text with the section instead")
    path = Path(book.source_path)
    if not path.is_file():
        raise GrimoireError(f"the file of '{book.slug}' is gone ({path}); pages are drawn "
                            "from the book's own file")
    return path


def file_changed(book: BookRow, path: Path) -> bool:
    """Whether the file's bytes differ from those ingested (hashing only if size/mtime moved)."""
    stat = path.stat()
    if stat.st_size == book.source_size and abs(stat.st_mtime - book.source_mtime) < 1e-3:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() != book.source_hash


def physical_page(book: BookRow, page: int | str, *, printed: bool = False) -> int:
    """A 1-based physical page from a number, or from a printed label ("xii", or "5" with
    ``printed``); out of range or unknown labels say what exists."""
    text = str(page).strip()
    if printed or not (text.isascii() and text.isdigit()):  # "²" and "١٢" are labels
        matches = [p for p, label in sorted(book.page_labels.items()) if label == text]
        if not matches:
            raise NotFoundError(f"'{book.slug}' has no page printed as {shown(text)!r}"
                                + ("" if book.page_labels else " (it has no page labels)"))
        return matches[0]
    count = book.page_count or 0
    # int() refuses over 4,300 digits, and no PDF has a billion pages
    number = int(text) if len(text.lstrip("0")) <= 9 else None
    if number is None or not 1 <= number <= count:
        raise NotFoundError(f"'{book.slug}' has pages 1–{count}, not {shown(text)}")
    return number


def _open(path: Path) -> Any:
    import pymupdf

    # As parse/pdf.py does (checks may not import parse): MuPDF prints its complaints about a
    # damaged file on fd 1, which carries `page --json`, `health --json` and the results.
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.set_messages(fd=2)
    try:
        doc = pymupdf.open(path)
    except Exception as exc:
        raise GrimoireError(f"cannot open {path}: {exc}") from exc
    if not doc.is_pdf:  # the book's file was replaced by text or an image: MuPDF opens those
        kind = (doc.metadata or {}).get("format") or "another format"
        doc.close()
        raise GrimoireError(f"cannot open {path}: not a PDF any more (its contents read as: "
                            f"{kind}); run sync")
    return doc


def _word_boxes(page: Any, text: str) -> list[Any]:
    """Rectangles (one per line) of the words of ``page`` that ``text`` aligns with."""
    import pymupdf

    words = page.get_text("words", sort=True)
    joined = " ".join(w[4] for w in words)
    starts, pos = [], 0
    for w in words:
        starts.append(pos)
        pos += len(w[4]) + 1
    page_sk = skeleton(joined)
    pieces = [skeleton(p).text for p in quote_pieces(text)]
    found = align(pieces, page_sk.text)
    if found is None:
        return []
    covered = sum(e - s for s, e in found.spans)
    if (found.agree < MIN_DENSITY * covered
            or found.agree < min(MIN_AGREE, sum(map(len, pieces)))):
        return []
    from bisect import bisect_right

    lines: dict[tuple[int, int], Any] = {}
    for span_start, span_end in found.spans:
        first, last = page_sk.original_span(span_start, span_end)
        for i in range(bisect_right(starts, first) - 1, bisect_right(starts, last - 1)):
            key = (words[i][5], words[i][6])
            rect = pymupdf.Rect(words[i][:4])
            lines[key] = lines[key] | rect if key in lines else rect
    return list(lines.values())


def render_page(book: BookRow, page: int, highlight: str | None = None, *,
                max_edge: int = MAX_EDGE) -> PageImage:
    """Page ``page`` (1-based, physical) of a PDF book as a PNG, ``highlight`` marked."""
    import pymupdf

    path = source_pdf(book)
    note = ("the file changed since it was ingested: this page may not match the citations; "
            "run sync" if file_changed(book, path) else None)
    with _open(path) as doc:
        if not 1 <= page <= doc.page_count:
            raise NotFoundError(f"'{book.slug}' has pages 1–{doc.page_count}, not {page}")
        pdf_page = doc[page - 1]
        boxes = _word_boxes(pdf_page, highlight) if highlight and highlight.strip() else []
        if boxes:
            pdf_page.add_highlight_annot(boxes)
        zoom = min(max_edge / max(pdf_page.rect.width, pdf_page.rect.height, 1.0), MAX_ZOOM)
        while True:
            pix = pdf_page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), annots=True)
            png = pix.tobytes("png")
            if len(png) <= MAX_PNG_BYTES or zoom < 0.3:
                break
            zoom *= 0.75
        scaled = [tuple(round(v * zoom) for v in (b.x0, b.y0, b.x1, b.y1)) for b in boxes]
        count = doc.page_count
    if highlight and highlight.strip() and not boxes:
        note = "; ".join(x for x in (note, "the highlighted text was not found on this page")
                         if x)
    return PageImage(book_id=book.id, slug=book.slug, page=page, page_count=count,
                     page_label=book.page_labels.get(page), width=pix.width,
                     height=pix.height, png=png, highlight=highlight,
                     highlight_found=bool(boxes) if highlight and highlight.strip() else None,
                     boxes=[(b[0], b[1], b[2], b[3]) for b in scaled], note=note)


def pages_of_text(path: Path, first: int, last: int, text: str) -> tuple[int, int] | None:
    """The physical pages (first, last) among ``first..last`` that ``text`` starts and ends
    on, read from the PDF itself; None when the file cannot tell."""
    sk_text = skeleton(text).text
    if not sk_text or not path.is_file():
        return None
    try:
        with _open(path) as doc:
            last = min(last, doc.page_count)
            bounds, parts = [], []
            for number in range(first, last + 1):
                parts.append(skeleton(doc[number - 1].get_text()).text)
                bounds.append(sum(map(len, parts)))
    except GrimoireError:
        return None
    found = align([sk_text], "".join(parts))
    if found is None or found.similarity < 0.8:
        return None
    from bisect import bisect_right

    return (first + bisect_right(bounds, found.start),
            first + bisect_right(bounds, found.end - 1))


def page_survey(path: Path) -> dict[int, tuple[str, int]]:
    """Every page of a PDF: (what it shows, words of text). ``text``; else ``image`` (a
    scan), ``drawing`` (many vector paths: text drawn as outlines) or ``blank``. Empty when
    the file cannot be read."""
    survey: dict[int, tuple[str, int]] = {}
    try:
        with _open(path) as doc:
            for number, page in enumerate(doc, start=1):
                words = len(page.get_text().split())
                if words:
                    survey[number] = ("text", words)
                elif page.get_images(full=False):
                    survey[number] = ("image", 0)
                elif len(page.get_drawings()) > 20:
                    survey[number] = ("drawing", 0)
                else:
                    survey[number] = ("blank", 0)
    except (GrimoireError, OSError):
        return {}
    return survey


def path_if_unchanged(book: BookRow) -> Path | None:
    """The book's file when it still holds what was ingested, else None (quietly)."""
    path = Path(book.source_path)
    try:
        return path if path.is_file() and not file_changed(book, path) else None
    except OSError:
        return None

