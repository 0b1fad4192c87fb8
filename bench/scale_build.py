"""Synthetic libraries for the scale bench: Zipf-distributed text and random unit vectors
(or, with ``vectors="realistic"``, vectors drawn around real MiniLM embeddings with clusters
and near-copies: ``scale_vectors.py``).

Why synthetic: building a 100k or 1M chunk library through the real model would take hours;
search latency depends on the number of rows, the text's term statistics and the vector
dimension, not on what the vectors mean. So the text is drawn from a Zipf-Mandelbrot word
distribution (English stop words at the top ranks, then pseudo-words), which gives FTS5
realistic posting-list lengths, and the vectors are random 384-d unit vectors stamped as the
embedded MiniLM model, so the real model can embed queries against them.

Everything is written through the storage layer — ``store.book_rows.insert_book`` then
``store.chunk_progress.mark_embedded`` (vectors, status and both FTS5 tables) inside
``store.transactions.transaction``, one book per transaction — so the files have exactly the layout
an ingest produces. Built files are cached in ``bench/out/scale-<N>.db`` (gitignored), or in
the folder named by ``GRIMOIRE_BEHOLDER_SCALE_DIR`` (a 1M library is ~11 GB: keep it out of
the repository).

Three things make the bulk build cheaper without changing what is written: the next books'
texts and vectors are generated on a second thread while SQLite writes the current ones
(SQLite and numpy release the GIL); during the build both FTS5 tables buffer up to
``BULK_HASHSIZE`` bytes of pending terms before writing a segment (FTS5's ``hashsize``
option, default 1 MB; restored at the end), so fewer small segments are written and merged;
and the build's connection has a large page cache and no fsync (``BULK_PRAGMAS``).
The rows, vectors and FTS5 contents are the same; only FTS5's segment layout differs (the
persisted index, not FTS5's segments, serves the bench's keyword searches).
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from grimoire_beholder.models.minilm_files import DIMENSION, MODEL_NAME
from grimoire_beholder.store import book_rows, chunk_progress
from grimoire_beholder.store.db import connect
from grimoire_beholder.store.records import NewBook, NewChapter, NewChunk, NewSection
from grimoire_beholder.store.transactions import transaction

OUT = Path(os.environ.get("GRIMOIRE_BEHOLDER_SCALE_DIR")
           or Path(__file__).resolve().parent / "out")
IDENTITY = f"embedded:{MODEL_NAME}"
CHUNKS_PER_BOOK = 1000
BOOKS_PER_COMMIT = 10
BULK_HASHSIZE = 64 * 2**20
FTS_TABLES = ("chunks_fts", "chunks_fts_trigram")
FTS_DEFAULT_HASHSIZE = 2**20
# The build's own connection: a page cache that holds the indexes being filled (random
# content hashes, FTS5 segments being merged), no fsync (a crashed build is rebuilt from its
# last whole book anyway), and WAL pages copied back every ~400 MB rather than every 4 MB.
BULK_PRAGMAS = ("cache_size = -1500000", "synchronous = OFF", "wal_autocheckpoint = 100000")
CHAPTERS_PER_BOOK = 10
SECTIONS_PER_CHAPTER = 5  # so 20 chunks per section
WORDS_PER_CHUNK = 180  # ~240 approx tokens: the size real chunks embed at (256-token window)
_STOP_TEXT = (
    "the of and to a in is that it was for on as with his he be at by had this not are but "
    "from or have an they which one you were her all she there would their we him been has "
    "when who will more no if out so said what up its about into than them can only other new "
    "some could time these two may then do first any my now such like our over man me even "
    "most made after also did many before must through back years where much your way well "
    "down should because each just those people how too little state good very make world "
    "still own see men work long get here between both life being under never day same "
    "another know while last might us great old year off come since against go came right "
    "used take three"
)
STOP = tuple(_STOP_TEXT.split())
_SYLLABLES_TEXT = (
    "ka ri to mo na lu be si ra ve do pa ne li ro ta mi gu fe sa ko ze hi ba no te ru ya wa "
    "ge pi so da me ku fa le zo bi tu sh en ar or an"
)
_SYLLABLES = tuple(_SYLLABLES_TEXT.split())
VOCAB_SIZE = 40_000


def vocabulary() -> list[str]:
    """Stop words first (the most frequent ranks), then distinct pseudo-words."""
    rng = np.random.default_rng(7)
    words = list(dict.fromkeys(STOP))
    seen = set(words)
    while len(words) < VOCAB_SIZE:
        n = int(rng.integers(2, 5))
        word = "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), n))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_probabilities(size: int, s: float = 1.0, q: float = 2.7) -> np.ndarray:
    """Zipf-Mandelbrot rank probabilities, the usual fit for word frequencies in prose."""
    weights = 1.0 / np.power(np.arange(1, size + 1) + q, s)
    return np.asarray(weights / weights.sum())


@functools.lru_cache(maxsize=1)
def _sampler() -> tuple[list[str], np.ndarray]:
    """The vocabulary and the cumulative Zipf probabilities of its ranks."""
    words = vocabulary()
    return words, np.cumsum(zipf_probabilities(len(words)))


def chunk_texts(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` chunk texts of WORDS_PER_CHUNK Zipf-drawn words (inverse-CDF sampling:
    what ``rng.choice(p=…)`` does, without its per-call set-up)."""
    words, cdf = _sampler()
    ids = np.searchsorted(cdf, rng.random((count, WORDS_PER_CHUNK)), side="right")
    np.minimum(ids, len(words) - 1, out=ids)
    pick = words.__getitem__
    return [" ".join(map(pick, row)) + "." for row in ids.tolist()]


def _book(index: int, texts: list[str]) -> NewBook:
    per_section = CHUNKS_PER_BOOK // (CHAPTERS_PER_BOOK * SECTIONS_PER_CHAPTER)
    chapters = []
    pos = 0
    for ci in range(CHAPTERS_PER_BOOK):
        sections = []
        for si in range(SECTIONS_PER_CHAPTER):
            part = texts[pos:pos + per_section]
            pos += per_section
            chunks, offset = [], 0
            for text in part:
                chunks.append(NewChunk(
                    text=text, char_start=offset, char_end=offset + len(text),
                    approx_tokens=len(text) // 4,
                    content_hash=hashlib.sha256(text.encode()).hexdigest()))
                offset += len(text) + 1
            crumb = f"Chapter {ci + 1} › Section {si + 1}"
            sections.append(NewSection(title=f"Section {si + 1}", breadcrumb=crumb,
                                       text=" ".join(part), approx_tokens=offset // 4,
                                       chunks=chunks))
        chapters.append(NewChapter(title=f"Chapter {ci + 1}", sections=sections))
    return NewBook(slug=f"book-{index:05d}", name=f"Synthetic book {index}",
                   author=f"Author {index % 10}", source_type="text",
                   source_path=f"/synthetic/book-{index:05d}.txt",
                   source_hash=hashlib.sha256(str(index).encode()).hexdigest(),
                   source_size=0, source_mtime=0.0, chapters=chapters)


def library_path(chunks: int, vectors: str = "uniform") -> Path:
    """Where the ``chunks``-chunk library with ``vectors`` (uniform | realistic) is cached."""
    return OUT / (f"scale-{chunks}.db" if vectors == "uniform"
                  else f"scale-{chunks}-{vectors}.db")


def build(chunks: int, *, log: bool = True, vectors: str = "uniform") -> tuple[Path, float]:
    """Build (or reuse) the ``chunks``-chunk library; (path, build seconds, 0 if cached).

    ``vectors``: ``uniform`` random unit vectors, or ``realistic`` ones drawn around real
    MiniLM embeddings with clusters and near-copies (``scale_vectors.py``).

    Resumable: an interrupted build keeps its ``.partial`` file, and the next call goes on
    from the books it holds (each book's text and uniform vectors come from a generator
    seeded by the size and the book's number; realistic vectors come from a stream seeded by
    the size and the number of books already made, so a resumed stream never replays an
    earlier one, and their near-copies draw on the books made since the restart only).
    Books are written ``BOOKS_PER_COMMIT`` to a transaction.
    """
    path = library_path(chunks, vectors)
    if path.is_file():
        return path, 0.0
    OUT.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    conn = connect(partial)
    try:
        done = len(book_rows.slugs(conn))  # whole books: one transaction each
        realistic = None
        if vectors == "realistic":
            import scale_vectors

            realistic = scale_vectors.RealisticVectors(seed=chunks, start=done)
        total = chunks // CHUNKS_PER_BOOK
        for pragma in BULK_PRAGMAS:  # this connection only; the file is what ingest writes
            conn.execute(f"PRAGMA {pragma}")
        _set_hashsize(conn, BULK_HASHSIZE)
        with ThreadPoolExecutor(max_workers=1) as pool:  # one worker: books stay in order
            ahead: list[Future[tuple[NewBook, np.ndarray]]] = [
                pool.submit(_make_book, index, chunks, realistic)
                for index in range(done, min(done + BOOKS_PER_COMMIT + 2, total))]
            queued = done + len(ahead)
            for first in range(done, total, BOOKS_PER_COMMIT):
                with transaction(conn):
                    for _ in range(first, min(first + BOOKS_PER_COMMIT, total)):
                        book, vecs = ahead.pop(0).result()
                        if queued < total:
                            ahead.append(pool.submit(_make_book, queued, chunks, realistic))
                            queued += 1
                        _write_book(conn, book, vecs)
                if log:
                    print(f"  built {min(first + BOOKS_PER_COMMIT, total) * CHUNKS_PER_BOOK:,} "
                          f"chunks ({time.perf_counter() - started:.0f} s)", flush=True)
        _set_hashsize(conn, FTS_DEFAULT_HASHSIZE)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    partial.rename(path)
    for leftover in OUT.glob(partial.name + "-*"):  # -wal / -shm of the partial name
        leftover.unlink()
    return path, time.perf_counter() - started


def _set_hashsize(conn: Any, size: int) -> None:
    """FTS5's pending-terms buffer for both tables (a setting kept in the table's config)."""
    with transaction(conn):
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('hashsize', ?)", (size,))


def _make_book(index: int, chunks: int, realistic: Any) -> tuple[NewBook, np.ndarray]:
    """Book number ``index``: its rows and unit vectors (called in book order)."""
    rng = np.random.default_rng((chunks, index))
    texts = chunk_texts(rng, CHUNKS_PER_BOOK)
    if realistic is not None:
        vecs = realistic.book(CHUNKS_PER_BOOK)
    else:
        vecs = rng.standard_normal((CHUNKS_PER_BOOK, DIMENSION), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return _book(index, texts), vecs


def _write_book(conn: Any, book: NewBook, vecs: np.ndarray) -> None:
    """One book's rows, vectors and FTS rows through the store layer."""
    book_id = book_rows.insert_book(conn, book)
    work = chunk_progress.pending_chunks(conn, book_id)
    chunk_progress.mark_embedded(conn, list(zip(work, vecs, strict=True)), IDENTITY, DIMENSION)
