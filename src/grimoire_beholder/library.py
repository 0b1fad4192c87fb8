"""The Library facade: the one composition root that wires config, store, parsers, models,
the ingest pipeline and search. The CLI and the MCP server only call this.

Importing this module is cheap: parsers, model backends and numpy-heavy search code are
imported when first used, so ``--help`` and ``list`` stay fast.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection
from typing import TYPE_CHECKING

from grimoire_beholder.config import Config, load_config
from grimoire_beholder.errors import GrimoireError, NotFoundError
from grimoire_beholder.library_writing import LibraryWriting
from grimoire_beholder.models import Models
from grimoire_beholder.naming import parse_book_ref
from grimoire_beholder.store import book_rows, chunk_progress, source_rows, vectors
from grimoire_beholder.store.db import connect
from grimoire_beholder.store.records import BookRow, Integrity
from grimoire_beholder.store.transactions import transaction

if TYPE_CHECKING:
    from grimoire_beholder.checks.health import BookHealth
    from grimoire_beholder.checks.pages import PageImage
    from grimoire_beholder.checks.quotes import QuoteCheck
    from grimoire_beholder.models.protocols import Embedder, Generator
    from grimoire_beholder.search.candidate_arms import EmbedQuery
    from grimoire_beholder.search.engine import SearchEngine
    from grimoire_beholder.search.hits import SearchResults
    from grimoire_beholder.search.lookup import IndexTerm
    from grimoire_beholder.search.savings import SavingsRecorder
    from grimoire_beholder.store.check import LibraryCheck
    from grimoire_beholder.store.server_engine import ServerEngine, Store
    from grimoire_beholder.views import LibraryStatus, Outline, Savings, SectionText


class Library(LibraryWriting):
    """A library of books in one SQLite file, or in a server database (``server``)."""

    def __init__(self, config: Config, conn: sqlite3.Connection | None, *, read_only: bool,
                 embedder: Embedder | None = None, generator: Generator | None = None,
                 server: ServerEngine | None = None) -> None:
        self.config = config
        self._conn = conn
        self.server = server
        self.read_only = read_only
        self.models = Models(config, embedder, generator)
        self._engine: SearchEngine | None = None
        self._savings: SavingsRecorder | None = None

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(cls, config_path: str | os.PathLike[str] | None = None, *,
             library: str | os.PathLike[str] | None = None, config: Config | None = None,
             read_only: bool = False, create: bool = True, embedder: Embedder | None = None,
             generator: Generator | None = None) -> Library:
        """Open the library chosen by ``config_path``/``library`` (see locate.py for how it
        is found when both are None), or the one ``config`` describes.

        ``read_only`` opens the database with SQLite's read-only mode (the MCP server and the
        CLI's reading commands do): nothing on that connection can write. A library that
        does not exist yet is created only when ``create`` (and not ``read_only``); otherwise
        the error names the path looked at and how to create it. ``embedder``/``generator``
        override the configured backends (tests inject fakes).
        """
        from grimoire_beholder.locate import missing_library, prepare_new_library

        cfg = config or load_config(config_path, library=library)
        if cfg.database_url is not None:
            from grimoire_beholder.store.postgres.pg_engine import PostgresEngine

            engine = PostgresEngine.open(cfg.database_url, read_only=read_only, create=create)
            return cls(cfg, None, read_only=read_only, embedder=embedder, generator=generator,
                       server=engine)
        exists, empty = cfg.database_path.exists(), _empty_file(cfg.database_path)
        if not exists or empty:
            if read_only or not create:
                raise missing_library(cfg, empty=empty)
            prepare_new_library(cfg)  # an empty file's folder is marked as a new one's
        conn = connect(cfg.database_path, read_only=read_only, create=create)
        if conn.read_only_reason is None:
            from grimoire_beholder.ingest.derive import refresh_if_needed

            refresh_if_needed(conn)
        return cls(cfg, conn, read_only=conn.read_only_reason is not None, embedder=embedder,
                   generator=generator)

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection; a one-line error on a server library for what does not
        work there yet (README, "A team library on PostgreSQL")."""
        if self._conn is None:
            raise GrimoireError(
                "this command does not work on a PostgreSQL library yet (README, \"A team "
                "library on PostgreSQL\", lists what does)")
        return self._conn

    @property
    def store(self) -> Store:
        """Where the books are: the SQLite connection or the server engine."""
        return self.server if self.server is not None else self.conn

    @property
    def location(self) -> str:
        """Where the library is, for messages and logs: the SQLite file, or the server's URL
        without its password."""
        return self.server.location if self.server else str(self.config.database_path)

    def close(self) -> None:
        (self.server or self.conn).close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- models --------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        return self.models.embedder

    @property
    def generator(self) -> Generator | None:
        return self.models.generator

    # -- reading -------------------------------------------------------------------------
    def list_books(self) -> list[BookRow]:
        """Every book, with the tags, collections, series and link of those that came from
        a Calibre or Zotero library."""
        return source_rows.attach_origins(self.store, book_rows.list_books(self.store))

    def book(self, book: str | int) -> BookRow:
        """The book a reference names — an int or a string of digits is an id, any other
        string a slug (``naming.py``) — or BookNotFoundError naming some that exist.

        The one place a user's or a model's reference is read; callers pass the returned
        book's ``id`` (an int, which only ever means that id) from then on."""
        key = parse_book_ref(book)
        found = book_rows.find_book(self.store, key)
        if found is None:
            raise book_rows.not_found(self.store, key)
        return source_rows.attach_origins(self.store, [found])[0]

    def outline(self, book: str | int) -> Outline:
        from grimoire_beholder.views import Outline

        found = self.book(book)
        return Outline.from_rows(found, book_rows.outline(self.store, found.id))

    def section(self, book: str | int, chapter_index: int, section_index: int) -> SectionText:
        """A section's full text and summary; out-of-range indices say what exists."""
        from grimoire_beholder.views import SectionText

        found = self.book(book)
        return SectionText.from_row(
            found, book_rows.section_of(self.store, found, chapter_index, section_index))

    def section_part(self, book: str | int, chapter_index: int, section_index: int,
                     part: int = 1) -> tuple[SectionText, str, int]:
        """(the section, the text of its ``part``, how many parts): a long section is read
        in parts of ``text.PART_CHARS`` on paragraph boundaries, the same for the MCP
        ``get_section`` and the CLI's ``show``."""
        from grimoire_beholder.text import split_parts

        sec = self.section(book, chapter_index, section_index)
        parts = split_parts(sec.text)
        if not 1 <= part <= len(parts):
            raise NotFoundError(f"section {chapter_index}.{section_index} of '{sec.slug}' has "
                                f"parts 1–{len(parts)}, not {part}")
        return sec, parts[part - 1], len(parts)

    def status(self) -> LibraryStatus:
        """Configured models and the one the library's vectors were made with, database
        path, and per-book counts by status. Loads no model."""
        from grimoire_beholder.store.health_rows import saved_health
        from grimoire_beholder.views import status_view

        return status_view(self.config, vectors.get_stamp(self.store), self.embedder.identity,
                           chunk_progress.status_counts(self.store), self.list_books(),
                           chunk_progress.summary_counts(self.store),
                           saved_health(self.store))

    def integrity(self) -> Integrity:
        """SQLite's integrity check and the FTS rows, embedded chunks and vectors counts."""
        return chunk_progress.integrity(self.conn)

    def check(self) -> LibraryCheck:
        """SQLite's integrity check plus the consistency rules (store/check.py), and the
        search index's bytes against their checksums (search/index_check.py)."""
        from grimoire_beholder.search.index_check import inspect
        from grimoire_beholder.store.check import check

        if self.server is not None:
            return self.server.check()
        result = check(self.conn, str(self.config.database_path), writable=not self.read_only)
        if result.ok:  # a damaged database says nothing reliable about its index
            result.search_index, problems = inspect(self.conn, self.config.database_path)
            result.problems += problems
        return result

    # -- search --------------------------------------------------------------------------
    def search(self, query: str, top_k: int | None = None, book: str | int | None = None,
               author: str | None = None, source_type: str | None = None,
               mode: str | None = None, group: str | None = None,
               path_prefix: str | None = None,
               until_chapter: int | str | None = None,
               role: str | Collection[str] | None = None, *, tag: str | None = None,
               collection: str | None = None, series: str | None = None) -> SearchResults:
        """Hybrid (or vector/keyword) search with citations; see search/engine.py.

        ``tag``, ``collection`` and ``series`` keep books from Calibre and Zotero libraries
        that carry that label (case-insensitive; ``store/source_rows.py``).
        ``group`` and ``path_prefix`` narrow a folder library (see store/hit_queries.py);
        ``until_chapter`` keeps ``book`` up to that chapter (search/position.py); ``role``
        keeps sections of that role or roles (body, front_matter, contents, index, notes,
        bibliography, glossary) — by default all are searched, body first.
        """
        record = None if book is None else self.book(book)
        roles = [role] if isinstance(role, str) else role
        results = self._search_engine().search(query, top_k=top_k,
                                               book=None if record is None else record.id,
                                               book_slug=None if record is None else record.slug,
                                               author=author,
                                               source_type=source_type, mode=mode, group=group,
                                               path_prefix=path_prefix,
                                               until_chapter=until_chapter, roles=roles,
                                               labels={"tag": tag, "collection": collection,
                                                       "series": series})
        if self.config.record_stats and self.server is None:
            if self._savings is None:
                from grimoire_beholder.search.savings import SavingsRecorder

                self._savings = SavingsRecorder(self.conn, self.config.database_path)
            self._savings.record(results)
        return results

    def preload(self) -> None:
        """Start loading the local query-embedding model on a background thread and return at
        once: a cold command that is about to search (``query``, the prompt hook) opens the
        library and imports the search code while the model loads. Nothing for a keyword-only
        config or a model behind a server (Ollama)."""
        if self.config.retrieval_mode == "keyword":
            return
        background = getattr(self.embedder, "load_in_background", None)
        if callable(background):
            background()

    def warm_up(self) -> None:
        """Load what a search needs (embedding model, vector matrix, reranker) now, so the
        first real question is fast (the MCP server does this as it starts). A search like
        any other, except that it is not counted in the search statistics."""
        self._search_engine().search("warm up", top_k=1)

    def lookup(self, term: str, book: str | int | None = None) -> list[IndexTerm]:
        """The entries for ``term`` in the books' printed back-of-book indexes: printed and
        physical pages and the sections on those pages (see search/lookup.py). An empty
        list when no index names it (or no book has a printed index)."""
        from grimoire_beholder.search.lookup import lookup

        return lookup(self.store, term, [self.book(book).id] if book is not None else None)

    def savings(self) -> Savings:
        """Cumulative characters served vs the books' full size (search/savings.py); the
        CLI's ``stats`` and the MCP ``book_status`` show it. Not kept for a library in a
        server yet (a one-line error: ``Config.database_path``)."""
        from grimoire_beholder.search.savings import summary

        return summary(self.config.database_path)

    def _search_engine(self) -> SearchEngine:
        if self._engine is None:
            from grimoire_beholder.models import make_reranker
            from grimoire_beholder.search.engine import SearchEngine

            self._engine = SearchEngine(self.store, self._query_embedder, self.config,
                                        reranker=make_reranker(self.config))
        return self._engine

    def _query_embedder(self) -> EmbedQuery | None:
        """What the engine embeds queries with; it asks again whenever the data changed.

        None (vector search off) for a keyword-only config while the library holds no
        vectors, so such a library never loads a model; EmbeddingMismatchError when the
        vectors come from another model than the configured one.
        """
        if self.config.retrieval_mode == "keyword" and vectors.get_stamp(self.store) is None:
            return None
        vectors.check_identity(self.store, self.embedder.identity)
        return self.embedder.embed_query

    # -- checking and showing ------------------------------------------------------------
    def verify_quote(self, quote: str, book: str | int | None = None) -> QuoteCheck:
        """Is ``quote`` in the library (or in ``book``), where, and how does it differ?

        See checks/quotes.py. Restricted to one book, a quotation found in another says so."""
        from grimoire_beholder.checks.quotes import check_in

        return check_in(self.store, quote, None if book is None else self.book(book))

    def page_number(self, book: str | int, page: int | str, *, printed: bool = False) -> int:
        """The 1-based physical page of a PDF book that ``page`` names, as ``page_image``
        reads it: a number is the physical page, anything else (or a number with
        ``printed``) a printed label such as ``xii`` or ``A-3``. Nothing is drawn. Raises
        NoPageImagesError for a book of another format, GrimoireError when its file is gone,
        NotFoundError for a page or label the book does not have (checks/pages.py)."""
        return self._pdf_page(book, page, printed)[1]

    def page_image(self, book: str | int, page: int | str, highlight: str | None = None, *,
                   printed: bool = False) -> PageImage:
        """A PDF page as a PNG (``page`` read as :meth:`page_number` reads it), with
        ``highlight`` marked; read from the book's file, never a write (checks/pages.py)."""
        from grimoire_beholder.checks.pages import render_page

        return render_page(*self._pdf_page(book, page, printed), highlight)

    def _pdf_page(self, book: str | int, page: int | str, printed: bool) -> tuple[BookRow, int]:
        from grimoire_beholder.checks.pages import physical_page, source_pdf

        found = self.book(book)
        source_pdf(found)  # the format and the file first, then the page number
        return found, physical_page(found, page, printed=printed)

    def health(self, book: str | int | None = None, *, save: bool = True) -> list[BookHealth]:
        """Health reports (checks/health.py) of one book or all; ``save`` keeps each summary for
        ``book_status`` (not on a read-only library). Probe searches are not in ``stats``."""
        from grimoire_beholder.checks.health import PROBE_TOP_K, check_book
        from grimoire_beholder.store import health_rows

        books = [self.book(book)] if book is not None else self.list_books()
        engine = self._search_engine()

        def search(probe: str, book_id: int) -> list[tuple[int, int]]:
            hits = engine.search(probe, top_k=PROBE_TOP_K, book=book_id).hits
            return [(h.chapter_index, h.section_index) for h in hits]

        reports = [check_book(self.store, b, search) for b in books]
        if save and not self.read_only:
            live = [b.source_hash for b in self.list_books()]
            with transaction(self.store):
                for b, report in zip(books, reports, strict=True):
                    health_rows.save_health(self.store, b.source_hash, report.summary(), live)
        return reports


def _empty_file(path: os.PathLike[str]) -> bool:
    """A database file of 0 bytes with no write-ahead log beside it: a library to be made."""
    try:
        wal = f"{os.fspath(path)}-wal"
        return (os.path.isfile(path) and os.path.getsize(path) == 0
                and not (os.path.isfile(wal) and os.path.getsize(wal)))
    except OSError:  # gone meanwhile, or unreadable: as it is, for the open to report
        return False
