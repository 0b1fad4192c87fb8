"""Turn a book file into a :class:`ParsedBook`, choosing the parser by file extension.

Parsers are imported lazily so that, say, a Markdown ingest never pays for importing PyMuPDF,
and a broken optional parser cannot stop the others from working.
"""

from __future__ import annotations

from pathlib import Path

from grimoire_beholder.errors import InputFileError, NoTextError
from grimoire_beholder.parse.document import ParsedBook, ParseOptions, tidy_names
from grimoire_beholder.parse.source import stat_source

_SOURCE_TYPES = {
    ".pdf": "pdf",
    ".epub": "epub",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".docx": "docx",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(sorted(_SOURCE_TYPES))


def source_type_for(path: Path) -> str | None:
    """The source type ("pdf", "epub", "markdown", "text", "html", "docx") a path would be
    parsed as."""
    return _SOURCE_TYPES.get(Path(path).suffix.lower())


def parse_file(path: Path, options: ParseOptions | None = None) -> ParsedBook:
    """Parse any supported file; raise InputFileError with a one-line reason otherwise.

    ``options`` carries the configured parser switches (PDF tables, OCR); the defaults
    apply when it is None. Every name in the result is one line of bounded length
    (``document.tidy_names``).
    """
    return tidy_names(_parse(Path(path), options))


def _parse(path: Path, options: ParseOptions | None) -> ParsedBook:
    size = stat_source(path).st_size
    source_type = source_type_for(path)
    if source_type is None:
        kind = f"'{path.suffix}'" if path.suffix else "(no extension)"
        raise InputFileError(
            f"{path}: unsupported file type {kind}; supported: {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    if size == 0:
        raise NoTextError(f"{path}: file is empty")
    # Each parser reads its bytes through parse/source.read_source, which refuses anything
    # but a regular file (a FIFO, a device, a folder) before reading a byte.
    if source_type == "pdf":
        from grimoire_beholder.parse.pdf import parse_pdf

        return parse_pdf(path, options or ParseOptions())
    if source_type == "epub":
        from grimoire_beholder.parse.epub import parse_epub

        return parse_epub(path)
    if source_type == "html":
        from grimoire_beholder.parse.html import parse_html

        return parse_html(path)
    if source_type == "docx":
        from grimoire_beholder.parse.docx import parse_docx

        return parse_docx(path)
    if source_type == "markdown":
        from grimoire_beholder.parse.markdown import parse_markdown

        return parse_markdown(path)
    from grimoire_beholder.parse.plain_text import parse_text

    return parse_text(path)


__all__ = ["SUPPORTED_EXTENSIONS", "ParseOptions", "ParsedBook", "parse_file", "source_type_for"]
