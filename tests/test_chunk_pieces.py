"""Chunks sized in the embedding model's own word pieces: never over the window when the
tokenizer is known, approximate tokens as before when it is not (Ollama), pages still right."""

from __future__ import annotations

import random
import sqlite3
from itertools import pairwise
from pathlib import Path

import pymupdf
import pytest

from fake_ollama import FakeOllama
from grimoire_beholder.config import Config
from grimoire_beholder.ingest import build
from grimoire_beholder.ingest.build import build_book, file_info, piece_limit
from grimoire_beholder.library import Library
from grimoire_beholder.models.embedded import EmbeddedEmbedder
from grimoire_beholder.models.ollama import OllamaEmbedder
from grimoire_beholder.parse import parse_file
from grimoire_beholder.parse.document import Block, ParsedSection
from grimoire_beholder.structure.chunks import MAX_CHUNK_CHARS, chunk_section
from grimoire_beholder.structure.piece_limit import PieceLimit
from helpers import BENCH, fake_config, open_with_ollama

CODE = ("x <- c(10.4, 5.6, 3.1, 6.4, 21.7); assign(\"x\", c(10.4, 5.6)); "
        "1/x; y <- c(x, 0, x); v <- 2*x + y + 1; sqrt(sum((x-mean(x))^2)/(length(x)-1))\n")
PROSE = ("The keeper trims the wick at dusk and writes the hour in the log. "
         "Ships pass the northern rocks by the light of the great lens. ")
TEXTS = {
    "prose": PROSE * 60,
    "code": CODE * 40,  # about twice as many pieces per word as prose
    "cjk": "灯塔守护者在黄昏时修剪灯芯，并在日志中记下时间。" * 120,  # no spaces at all
    "blob": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 150,  # one 5,000-character word
    "mixed": (PROSE + "naïve café – “quoted” ½ ² ™ 😀 " + CODE) * 15,
    # one piece a long word: 254 pieces would be 3,500 characters
    "long words": "International representatives characteristically understand. " * 90,
}


@pytest.fixture(scope="module")
def embedder() -> EmbeddedEmbedder:
    return EmbeddedEmbedder()


def _section(text: str) -> ParsedSection:
    return ParsedSection("", [], [Block(text=text, page=1)])


def _covered(text: str, spans: list[tuple[int, int]]) -> bool:
    """Every non-space character of ``text`` lies in some chunk."""
    inside = bytearray(len(text))
    for start, end in spans:
        inside[start:end] = b"\x01" * (end - start)
    return all(inside[i] or char.isspace() for i, char in enumerate(text))


@pytest.mark.parametrize("kind", sorted(TEXTS))
@pytest.mark.parametrize("most", [16, 120, 206, 254])
def test_no_chunk_exceeds_its_pieces(embedder: EmbeddedEmbedder, kind: str, most: int) -> None:
    text = TEXTS[kind]
    limit = PieceLimit(embedder.count_pieces, most)
    drafts = chunk_section(_section(text), 256, 40, limit=limit)
    assert drafts and all(embedder.count_pieces(d.text) <= most for d in drafts)
    assert all(len(d.text) <= MAX_CHUNK_CHARS for d in drafts)  # what a hit returns
    assert all(text[d.char_start:d.char_end] == d.text for d in drafts)
    assert _covered(text, [(d.char_start, d.char_end) for d in drafts])
    # without the limit the same text makes chunks over it (the limit is what bounds them;
    # a word of over 100 characters is one [UNK] piece whole, though many when cut; 1,200
    # characters of long words are fewer than 120 pieces)
    if most <= 120 and kind not in ("blob", "long words"):
        free = chunk_section(_section(text), 256, 40)
        assert max(embedder.count_pieces(d.text) for d in free) > most


def test_random_texts_never_overflow_the_window(embedder: EmbeddedEmbedder) -> None:
    """Random mixes of prose, code, CJK, long words and odd whitespace, in both modes: every
    chunk plus [CLS]/[SEP] fits one window, so none is embedded as several windows."""
    rng = random.Random(25)
    parts = [PROSE, CODE, "灯塔守护者修剪灯芯。", "x" * 150, "a\u0085b\x1fc\u200bd ",
             "\n\n", "\n", "Dr. Watson, M.D. (retd.) said: “No!” ", "https://example.org/a/b?c=d "]
    limit = piece_limit(embedder)
    assert limit is not None and limit.most == embedder.window_pieces - build.CONTEXT_PIECES
    for _ in range(20):
        text = "".join(rng.choice(parts) * rng.randint(1, 6) for _ in range(rng.randint(5, 60)))
        for paragraphs in (True, False):
            drafts = chunk_section(_section(text), rng.choice([64, 256, 512]), 40,
                                   paragraphs=paragraphs, limit=limit)
            assert all(embedder.token_count(d.text) <= embedder.max_seq_length for d in drafts)
            assert all(embedder.count_pieces(d.text) <= limit.most for d in drafts)
            assert all(len(d.text) <= MAX_CHUNK_CHARS for d in drafts)


def test_a_model_without_a_known_tokenizer_chunks_as_before(tmp_path: Path,
                                                            sample_book: Path) -> None:
    """Ollama (and any embedder without a window to fit): no piece limit, so the chunks
    stored are exactly the approximate-token chunks."""
    config = fake_config(tmp_path, embedding_backend="ollama", llm_backend="none",
                         embedding_model="nomic-embed-text", chunk_size=120, chunk_overlap=20)
    assert piece_limit(OllamaEmbedder("nomic-embed-text", "http://127.0.0.1:9")) is None
    expected = build_book(parse_file(sample_book), slug="x", name="x",
                          info=file_info(sample_book), config=config, limit=None)
    with FakeOllama() as server:
        config = config.with_overrides(ollama_host=server.host)
        with open_with_ollama(config) as lib:
            lib.ingest(sample_book)
    conn = sqlite3.connect(config.database_path)
    try:
        stored = [row[0] for row in conn.execute("SELECT text FROM chunks ORDER BY id")]
    finally:
        conn.close()
    assert stored == [c.text for ch in expected.chapters for s in ch.sections for c in s.chunks]


def _paged_pdf(path: Path, pages: int) -> Path:
    """A PDF whose every word names its page (``p3w17``): long paragraphs running over the
    page breaks, so chunks start and end on different pages."""
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        # each page ends a sentence, so its text is a block of its own (a paragraph running
        # over a page break is one block of two pages, cited as both)
        words = " ".join(f"p{number}w{i}" + ("." if i % 12 == 11 else "") for i in range(160))
        words += "."
        doc.new_page(width=420, height=595).insert_htmlbox(
            pymupdf.Rect(40, 50, 380, 560), f"<p>{words}</p>")
    doc.save(path)
    doc.close()
    return path


def test_page_citations_stay_right_on_a_real_pdf(embedder: EmbeddedEmbedder,
                                                 tmp_path: Path) -> None:
    path = _paged_pdf(tmp_path / "paged.pdf", 6)
    limit = piece_limit(embedder)
    book = build_book(parse_file(path), slug="x", name="x", info=file_info(path),
                      config=Config(), limit=limit)
    chunks = [c for ch in book.chapters for s in ch.sections for c in s.chunks]
    assert len(chunks) > 6 and limit is not None
    spanning = 0
    for chunk in chunks:
        assert embedder.count_pieces(chunk.text) <= limit.most
        pages = sorted({int(w[1:].split("w")[0]) for w in chunk.text.replace(".", "").split()})
        assert (chunk.page_start, chunk.page_end) == (pages[0], pages[-1]), chunk.text[:60]
        spanning += pages[0] != pages[-1]
    assert spanning >= 2  # the case that matters: a chunk that runs over a page break


@pytest.mark.slow  # parses the 100-page R manual (~5 CPU-s)
def test_real_book_chunks_fit_and_keep_their_pages(embedder: EmbeddedEmbedder) -> None:
    r_intro = BENCH / "books" / "R-intro.pdf"
    if not r_intro.is_file():
        pytest.skip("the shared bench books are not here")
    parsed = parse_file(r_intro)
    limit = piece_limit(embedder)
    assert limit is not None
    book = build_book(parsed, slug="r", name="R", info=file_info(r_intro), config=Config(),
                      limit=limit)
    pages: dict[int, str] = {}
    for ch in parsed.chapters:
        for s in ch.sections:
            for b in s.blocks:
                assert b.page is not None
                for page in range(b.page, (b.last_page or b.page) + 1):
                    pages[page] = pages.get(page, "") + " " + " ".join(b.text.split())
    chunks = [c for ch in book.chapters for s in ch.sections for c in s.chunks]
    assert all(embedder.count_pieces(c.text) <= limit.most for c in chunks)
    for chunk in chunks:
        # blocks are joined by a blank line in the section text: the chunk's first block
        # begins on its first page and its last block ends on its last page
        head = chunk.text.split("\n\n")[0].split()
        tail = chunk.text.split("\n\n")[-1].split()
        assert chunk.page_start is not None and chunk.page_end is not None
        assert " ".join(head[:4]) in pages[chunk.page_start]
        assert " ".join(tail[-4:]) in pages[chunk.page_end]


@pytest.mark.slow  # embeds a small book with the real model
def test_an_embedded_ingest_windows_no_chunk(tmp_path: Path) -> None:
    """Code-heavy sections that overflowed the window before are cut to fit it: the ingest
    report counts no windowed chunk."""
    book = tmp_path / "manual.md"
    book.write_text("# Vectors\n\n" + CODE * 30 + "\n\n# Prose\n\n" + PROSE * 30,
                    encoding="utf-8")
    config = fake_config(tmp_path, embedding_backend="embedded", llm_backend="none")
    with Library.open(config=config) as lib:
        report = lib.ingest(book)
    assert report.chunks > 4 and report.windowed == 0


MINIFIED = "".join(f"function a{i}(b,c){{return b[{i}]&&c.x{i}?(b.y=c[{i}]|0,!0):void 0}};"
                   f"var q{i}=[{i},{i + 1},'s{i}'];" for i in range(300))


@pytest.mark.parametrize("paragraphs", [True, False])
def test_dense_text_chunks_advance_instead_of_overlapping_almost_whole(
        embedder: EmbeddedEmbedder, paragraphs: bool) -> None:
    """x-fit F1: minified code has few words but many pieces per word, so a chunk cut to the
    piece limit holds a dozen words and the overlap (about 30 words back) reached its start:
    each chunk began one word after the last, 13x the text embedded (7,475 chunks for 193 kB
    of minified JS). The overlap stays a modest share of the chunk."""
    limit = piece_limit(embedder)
    drafts = chunk_section(_section(MINIFIED), 256, 40, paragraphs=paragraphs, limit=limit)
    assert limit is not None and all(embedder.count_pieces(d.text) <= limit.most for d in drafts)
    assert _covered(MINIFIED, [(d.char_start, d.char_end) for d in drafts])
    for before, after in pairwise(drafts):
        overlap = max(0, before.char_end - after.char_start)
        assert overlap <= (before.char_end - before.char_start) / 3, (before.text, after.text)
    # the text is embedded about once and a half at most, not a dozen times
    assert sum(len(d.text) for d in drafts) <= 1.6 * len(MINIFIED)


def test_a_base64_blob_is_read_about_once(embedder: EmbeddedEmbedder,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """x-fit F2: a blob without spaces (a base64 image in Markdown) is one word of 2,560
    characters per window, and the chunker bisects it by counting ever longer prefixes; each
    count read every sub-word of the prefix again (~14 times the text: 400 kB of base64 took
    38 CPU-s to chunk, plain text of that size 0.3 s). Sub-words are remembered now."""
    import base64

    blob = base64.b64encode(random.Random(7).randbytes(12_000)).decode()
    limit = piece_limit(embedder)
    assert limit is not None
    tokenizer = embedder._tokenizer
    calls = 0
    original = tokenizer._word_ids

    def counted(word: str) -> list[int]:
        nonlocal calls
        calls += 1
        return original(word)

    monkeypatch.setattr(tokenizer, "_word_ids", counted)
    drafts = chunk_section(_section(blob), 256, 40, limit=limit)
    assert all(embedder.count_pieces(d.text) <= limit.most for d in drafts)
    assert _covered(blob, [(d.char_start, d.char_end) for d in drafts])
    sub_words = blob.count("+") + blob.count("/") + 1
    assert calls <= 3 * sub_words
