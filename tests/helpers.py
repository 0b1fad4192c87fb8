"""Helpers the test files share (fixtures live in conftest.py): configs and books on disk,
libraries built through the store functions, generated EPUBs, skip marks, and the CLI run
in-process.

Test files import from here, never from one another.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import sys
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest
from ebooklib import epub

from fakes import FakeEmbedder
from grimoire_beholder.config import Config
from grimoire_beholder.library import Library
from grimoire_beholder.parse import pdf_ocr
from grimoire_beholder.search.engine import SearchEngine
from grimoire_beholder.store import book_rows as books
from grimoire_beholder.store import chunk_progress as chunks
from grimoire_beholder.store import db
from grimoire_beholder.store.records import NewBook, NewChapter, NewChunk, NewSection
from grimoire_beholder.store.transactions import transaction

SHARED = Path(__file__).resolve().parents[2] / "shared"
BENCH = SHARED / "bench"

# ------------------------------------------------------------ configs and books on disk
def fake_config(tmp_path: Path, **overrides: object) -> Config:
    """A config whose library lives in ``tmp_path`` and whose models are the fakes."""
    base = Config(base_dir=str(tmp_path), db_path="book.db", embedding_backend="fake",
                  llm_backend="none", chunk_size=120, chunk_overlap=20)
    return base.with_overrides(**overrides) if overrides else base


def write_markdown_book(path: Path, title: str, chapters: dict[str, dict[str, str]]) -> Path:
    """Write a Markdown book: ``# chapter`` headings with ``## section`` bodies."""
    lines = ["---", f"title: {title}", "author: Test Author", "---", ""]
    for chapter, sections in chapters.items():
        lines += [f"# {chapter}", ""]
        for section, body in sections.items():
            lines += [f"## {section}", "", body, ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


GARDEN_CHAPTERS: dict[str, dict[str, str]] = {
    "Soil": {
        "Compost": "Compost turns kitchen scraps into dark humus. Turn the heap weekly "
                   "so air reaches the microbes. " * 6,
        "Drainage": "Clay soils hold water; raised beds and grit improve drainage for "
                    "roots that rot in wet ground. " * 6,
    },
    "Pests": {
        "Aphids": "Aphids cluster on new shoots. Ladybirds and a jet of water keep "
                  "them down without sprays. " * 6,
        "Slugs": "Slugs feed at night on seedlings; copper tape and beer traps "
                 "protect lettuce beds. " * 6,
    },
}


def open_with_ollama(config: Config) -> Library:
    """A Library on the real Ollama backends (for a FakeOllama server), with tiny retry
    backoff so fault tests stay fast."""
    from grimoire_beholder.models.ollama import OllamaEmbedder, OllamaGenerator

    embedder = OllamaEmbedder(config.embedding_model, config.ollama_host, timeout=5.0,
                              retries=2, batch_size=config.embed_batch_size, backoff=0.01)
    generator = OllamaGenerator(config.llm_model, config.ollama_host, timeout=5.0, retries=2,
                                backoff=0.01)
    return Library.open(config=config, embedder=embedder, generator=generator)


# ---------------------------------------------- libraries built through the store functions
EMBEDDER = FakeEmbedder(dimension=64)

# A chunk: its text, or (text, page_start, page_end).
ChunkSpec = str | tuple[str, int | None, int | None]
# A section: (chapter title, section title, chunks).
SectionSpec = tuple[str, str, Sequence[ChunkSpec]]


def open_library(tmp_path: Path) -> sqlite3.Connection:
    return db.connect(tmp_path / "library.db")


def _chunk(spec: ChunkSpec, breadcrumb: str) -> NewChunk:
    text, page_start, page_end = (spec, None, None) if isinstance(spec, str) else spec
    digest = hashlib.sha256((text + breadcrumb).encode()).hexdigest()
    return NewChunk(text=text, char_start=0, char_end=len(text), approx_tokens=len(text) // 4,
                    content_hash=digest, page_start=page_start, page_end=page_end)


def add_book(conn: sqlite3.Connection, slug: str, sections: Sequence[SectionSpec], *,
             name: str | None = None, author: str | None = None, source_type: str = "text",
             page_labels: dict[int, str] | None = None, context: bool = False,
             embed: bool = True) -> int:
    """Insert a book, optionally give each chunk a context, and embed it with FakeEmbedder."""
    chapters: dict[str, NewChapter] = {}
    for chapter_title, section_title, specs in sections:
        chapter = chapters.setdefault(chapter_title, NewChapter(title=chapter_title))
        breadcrumb = f"{chapter_title} › {section_title}" if section_title else chapter_title
        new_chunks = [_chunk(s, breadcrumb) for s in specs]
        chapter.sections.append(NewSection(
            title=section_title, breadcrumb=breadcrumb,
            text=" ".join(c.text for c in new_chunks), approx_tokens=10, chunks=new_chunks))
    book = NewBook(slug=slug, name=name or slug.replace("-", " ").title(), author=author,
                   source_type=source_type, source_path=f"/books/{slug}.{source_type}",
                   source_hash=hashlib.sha256(slug.encode()).hexdigest(), source_size=1,
                   source_mtime=0.0, page_labels=page_labels or {},
                   chapters=list(chapters.values()))
    with transaction(conn):
        book_id = books.insert_book(conn, book)
        work = chunks.pending_chunks(conn, book_id)
        if context:
            for w in work:
                chunks.set_context(conn, w.id, f"Context for {slug}.")
        if embed and work:
            vecs = EMBEDDER.embed_documents([w.text for w in work])
            chunks.mark_embedded(conn, list(zip(work, vecs, strict=True)), EMBEDDER.identity,
                                 EMBEDDER.dimension)
    return book_id


def remove_book(conn: sqlite3.Connection, book_id: int) -> None:
    with transaction(conn):
        books.delete_book(conn, book_id)


def engine_for(conn: sqlite3.Connection, embed: bool = True, **config: object) -> SearchEngine:
    return SearchEngine(conn, lambda: EMBEDDER.embed_query if embed else None,
                        Config().with_overrides(**config))


# ------------------------------------------------------------------------- EPUBs
def html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>"


def make_epub(
    path: Path,
    docs: dict[str, str],
    toc: list[object] | None,
    *,
    nav: bool = True,
    ncx: bool = True,
    spine: list[str] | None = None,
    title: str = "The Test Grimoire",
    author: str | None = "Ada Author",
) -> Path:
    """Write an EPUB with ebooklib: ``docs`` maps file name → body HTML; ``toc`` uses
    ("title", "file#frag") leaves and (("title", "file"), [children]) branches."""
    book = epub.EpubBook()
    book.set_identifier("id-test")
    book.set_title(title)
    book.set_language("en")
    if author:
        book.add_author(author)
    items = {}
    for name, body in docs.items():
        item = epub.EpubHtml(title=name, file_name=name, lang="en")
        item.content = html(name, body)
        book.add_item(item)
        items[name] = item

    def conv(node: object) -> object:
        if isinstance(node, tuple) and isinstance(node[1], list):
            (t, href), kids = node
            return (epub.Section(t, href), [conv(k) for k in kids])
        t, href = node  # type: ignore[misc]
        return epub.Link(href, t, href.replace("#", "-").replace(".", "-"))

    book.toc = [conv(n) for n in toc or []]
    if ncx:
        book.add_item(epub.EpubNcx())
    if nav:
        book.add_item(epub.EpubNav())
    names = spine if spine is not None else list(docs)
    book.spine = [items[n] for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        epub.write_epub(str(path), book, {"epub3_pages": False})
    return path


def rewrite(
    src: Path,
    dst: Path,
    edit: Callable[[str, bytes], bytes | None] = lambda n, d: d,
    add: dict[str, bytes] | None = None,
) -> Path:
    """Copy an EPUB member by member; ``edit`` may change or (returning None) drop one."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info))
            if data is not None:
                zout.writestr(info.filename, data)
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


# ------------------------------------------------------------------------ skip marks
# .ci/run sets GRIMOIRE_TEST_REQUIRE_OCR when Tesseract is installed, so CI never skips these
needs_tesseract = pytest.mark.skipif(
    pdf_ocr.find_tessdata("eng") is None and not os.environ.get("GRIMOIRE_TEST_REQUIRE_OCR"),
    reason="Tesseract with English language data is not installed "
           "(apt-get install tesseract-ocr); CI installs it",
)


# ------------------------------------------------------------------------ the CLI in-process
@dataclass(frozen=True)
class CliRun:
    """What a CLI run left: its exit code and the text it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


def fake_garden_env(template: Path, folder: Path) -> dict[str, str | None]:
    """A copy of the garden library (conftest's ``garden_template``) in ``folder`` on the
    fake models, and the CLI environment that names it."""
    shutil.copytree(template, folder)
    (folder / "config.toml").write_text(
        '[grimoire-beholder]\ndb_path = "book.db"\nembedding_backend = "fake"\n'
        'llm_backend = "none"\nchunk_size = 120\nchunk_overlap = 20\n', encoding="utf-8")
    return {"GRIMOIRE_BEHOLDER_CONFIG": str(folder / "config.toml")}


def run_cli(*args: str, cwd: Path | None = None, env: Mapping[str, str | None] | None = None,
            stdin: str = "") -> CliRun:
    """The CLI run in this process exactly as the ``grimoire-beholder`` script runs it:
    ``cli.entry.main`` with ``sys.argv`` set, so usage errors get the script's one-line
    form. Streams and the environment (``None`` unsets a variable) are swapped for the call
    by typer's ``CliRunner.isolation``; ``cwd``, when given, is the working folder meanwhile."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import main

    argv, code = sys.argv, 0
    folder = contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext()
    with folder, CliRunner().isolation(input=stdin, env=env) as (out, err, _both):
        sys.argv = ["grimoire-beholder", *args]
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            sys.argv = argv
        sys.stdout.flush()
        sys.stderr.flush()
        return CliRun(code, out.getvalue().decode(), err.getvalue().decode())


# ------------------------------------------------------------------------ page images
def yellow(pixel: tuple[int, ...]) -> bool:
    r, g, b = pixel[:3]
    return r > 200 and g > 200 and b < 120


def share_yellow(pix: pymupdf.Pixmap, box: tuple[int, int, int, int]) -> float:
    x0, y0, x1, y1 = box
    points = [(x, y) for x in range(x0 + 1, x1 - 1, 3) for y in range(y0 + 1, y1 - 1, 3)]
    return sum(yellow(pix.pixel(x, y)) for x, y in points) / max(len(points), 1)


def hook_library(tmp_path: Path, book: Path) -> Path:
    """The config file of a small library holding ``book`` (fake embedder), as the hook
    tests use: ``min_confidence`` 0.3, so a question off its topic gets no passages."""
    from typer.testing import CliRunner

    from grimoire_beholder.cli.entry import app

    path = tmp_path / "config.toml"
    path.write_text('db_path = "lib.db"\nembedding_backend = "fake"\nchunk_size = 120\n'
                    'chunk_overlap = 20\nmin_confidence = 0.3\n')
    result = CliRunner().invoke(app, ["ingest", str(book), "-q", "-c", str(path)])
    assert result.exit_code == 0, result.output
    return path


def zotero_file_digests(folder: Path) -> dict[str, str]:
    """SHA-256 of ``zotero.sqlite`` and each journal or WAL file beside it, by name: what a
    reader of another application's database must leave exactly as it found it."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("zotero.sqlite*"))}
